# Sourced by the benchmark scripts that run inside the testbed (tests/bench/*.sh).

# Prints the kernel initiator's block device for the first namespace of @nqn once it appears
# after an `nvme connect` (within 5 s), or says which script found none and fails.
kernel_bdev() { # script nqn
	local dev= sys i
	for ((i = 0; i < 50; i++)); do
		for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
			[[ $(cat "$sys/subsysnqn") == "$2" ]] && dev=/dev/$(basename "$(ls -d "$sys"/nvme*n1 | head -1)")
		done
		[[ -b $dev ]] && { echo "$dev"; return 0; }
		sleep 0.1
	done
	echo "$1: no block device for $2" >&2
	return 1
}

# Waits up to 10 s for @path to appear (-e) or to have content (-s), as a server started in the
# background makes its mount point's file or writes its device's name; fails if it did not.
wait_for() { # -e|-s path
	local i
	for ((i = 0; i < 100; i++)); do
		test "$1" "$2" && return 0
		sleep 0.1
	done
	test "$1" "$2"
}

# The fio options that run a job through the fio engine @so on namespace 1 of @nqn, one a line:
# the job a thread, as nvmefs-fio(7) advises (as a process it took 1.1-1.3x the latency at depth 1
# on 6.12).  The job's --ioengine is among them: fio takes the last one given.
engine_args() { # so transport addr svc nqn
	printf '%s\n' --ioengine="external:$1" --transport="$2" --traddr="$3" --trsvcid="$4" --nqn="$5" \
		--nsid=1 --thread
}

# One fio job (O_DIRECT, libaio unless the options name another engine) on @file for $time_s
# seconds after a second's ramp; fio's JSON .jobs[0].read|write (iops, bw in KiB/s,
# lat_ns.mean) printed as "IOPS MiB/s mean-latency-us".
fio_run() { # file rw bs qd [fio options]
	fio --name=b --filename="$1" --ioengine=libaio --direct=1 --rw="$2" --bs="$3" --iodepth="$4" \
		--time_based --runtime="$time_s" --ramp_time=1 --output-format=json --norandommap \
		--randrepeat=0 "${@:5}" | jq -r '.jobs[0] | (if .read.io_bytes > 0 then .read else .write end)
			| "\(.iops) \(.bw / 1024) \(.lat_ns.mean / 1000)"'
}

# nvmefs perf's JSON on stdin, as fio_run prints its figures.
perf_figures() {
	jq -r '"\(.iops) \(.bw_mibs) \(.lat_us.mean)"'
}

# Of fio_run's or perf_figures' lines on stdin, the run with the highest IOPS, or with $stat
# median the median one by IOPS (the upper of the middle two).
pick() {
	local rows
	rows=$(sort -n -k1,1 | sed '/^$/d')
	if [[ ${stat:-best} == best ]]; then
		tail -n 1 <<<"$rows"
	else
		sed -n "$(($(wc -l <<<"$rows") / 2 + 1))p" <<<"$rows"
	fi
}
better() { printf '%s\n%s\n' "$1" "$2" | sort -n -k1,1 | tail -n 1; }

# The workloads of doc/PERFORMANCE.md, "name rw bs qd": qd is the total depth, for fio and for
# nvmefs perf alike.
# shellcheck disable=SC2034 # the scripts that source this file read it
bench_workloads=(
	"4k-randread-qd1 randread 4k 1"
	"4k-randread-qd32 randread 4k 32"
	"4k-randwrite-qd32 randwrite 4k 32"
	"128k-read-qd16 read 128k 16"
	"128k-write-qd16 write 128k 16"
)
