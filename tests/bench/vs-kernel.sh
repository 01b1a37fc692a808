#!/usr/bin/env bash
# Benchmark (not a test): in one testbed boot, on the same namespace, fio (libaio, O_DIRECT) on the
# kernel initiator's block device against `nvmefs perf` and against fio through the file that
# `nvmefs mount` serves, for the workloads of doc/PERFORMANCE.md.  Prints one table; ratios to the
# kernel are what count (everything in the guest is emulated).
#
#   tests/bench/vs-kernel.sh [--time SEC] [--runs N]
# nvmefs perf polls for the queue-depth-1 latency row and sleeps on events for the others.
#
# Run from the build tree after `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
time_s=10 runs=1
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs-kernel.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs ]] || { echo "vs-kernel.sh: build first (make)" >&2; exit 1; }
	exec "$top/contrib/nvmefs-testbed" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" --time "$time_s" --runs "$runs"
fi

nvmefs=$top/src/cli/nvmefs
nqn=${NVMEFS_TEST_SUBNQNS%% *}
addr=$NVMEFS_TEST_TRADDR
# name rw bs qd [queues]: the total depth qd is split over nvmefs perf's queues; fio (one job on
# the kernel's block device or the FUSE file) always keeps qd in flight.
workloads=(
	"4k-randread-qd1 randread 4k 1"
	"4k-randread-qd32 randread 4k 32"
	"4k-randwrite-qd32 randwrite 4k 32"
	"128k-read-qd16 read 128k 16"
	"128k-write-qd16 write 128k 16"
	"4k-randread-qd32/2q randread 4k 32 2"
	"128k-read-qd16/2q read 128k 16 2"
)

nvme connect -t rdma -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" >/dev/null
dev=
for ((i = 0; i < 50; i++)); do
	for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
		[[ $(cat "$sys/subsysnqn") == "$nqn" ]] && dev=/dev/$(basename "$(ls -d "$sys"/nvme*n1 | head -1)")
	done
	[[ -b $dev ]] && break
	sleep 0.1
done
[[ -b $dev ]] || { echo "vs-kernel.sh: no block device for $nqn" >&2; exit 1; }

mnt=/tmp/nvmefs-bench
mkdir -p "$mnt"
"$nvmefs" mount -t rdma -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$mnt"
trap 'fusermount3 -u "$mnt" 2>/dev/null; nvme disconnect-all >/dev/null 2>&1 || true' EXIT

# fio JSON: .jobs[0].read|write: iops, bw (KiB/s), lat_ns.mean
fio_run() { # file rw bs qd -> "iops mibs lat_us"
	fio --name=b --filename="$1" --ioengine=libaio --direct=1 --rw="$2" --bs="$3" --iodepth="$4" \
		--time_based --runtime="$time_s" --ramp_time=1 --output-format=json --norandommap \
		--randrepeat=0 | jq -r '.jobs[0] | (if .read.io_bytes > 0 then .read else .write end)
			| "\(.iops) \(.bw / 1024) \(.lat_ns.mean / 1000)"'
}
nvmefs_run() { # rw bs qd queues: poll for latency at depth 1, events for throughput
	local mode=event
	(($3 == 1)) && mode=poll
	"$nvmefs" perf -t rdma -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw="$1" --bs="$2" \
		--qd=$(($3 / $4)) --queues="$4" --time="$time_s" --mode="$mode" -o json 2>/dev/null |
		jq -r '"\(.iops) \(.bw_mibs) \(.lat_us.mean)"'
}
best() { sort -n -k1,1 | tail -n 1; }

printf '%-18s | %8s %8s %6s %8s %6s | %7s %7s %6s %7s %6s | %7s %7s %6s %7s %6s\n' workload \
	"k IOPS" "perf" "ratio" "fuse" "ratio" "k MiB/s" "perf" "ratio" "fuse" "ratio" \
	"k lat" "perf" "ratio" "fuse" "ratio"
for w in "${workloads[@]}"; do
	read -r name rw bs qd queues <<<"$w"
	k=$(for ((r = 0; r < runs; r++)); do fio_run "$dev" "$rw" "$bs" "$qd"; done | best)
	n=$(for ((r = 0; r < runs; r++)); do nvmefs_run "$rw" "$bs" "$qd" "${queues:-1}"; done | best)
	f=$(for ((r = 0; r < runs; r++)); do fio_run "$mnt/n1" "$rw" "$bs" "$qd"; done | best)
	read -r ki kb kl <<<"$k"
	read -r ni nb nl <<<"$n"
	read -r fi fb fl <<<"$f"
	awk -v name="$name" -v ki="$ki" -v kb="$kb" -v kl="$kl" -v ni="$ni" -v nb="$nb" -v nl="$nl" \
		-v fi="$fi" -v fb="$fb" -v fl="$fl" 'BEGIN {
		printf "%-18s | %8.0f %8.0f %5.2fx %8.0f %5.2fx | %7.1f %7.1f %5.2fx %7.1f %5.2fx | %7.0f %7.0f %5.2fx %7.0f %5.2fx\n",
			name, ki, ni, ni / ki, fi, fi / ki, kb, nb, nb / kb, fb, fb / kb, kl, nl, nl / kl, fl, fl / kl }'
done
echo "k: fio on the kernel initiator's block device; perf: nvmefs perf (--mode poll at qd 1, event"
echo "otherwise; /2q: the same total depth over 2 queues); fuse: fio on the nvmefs mount's file n1"
echo "(2 workers).  Ratios are to the kernel; IOPS and MiB/s higher is better,"
echo "latency (mean, us) lower is better.  ${time_s}s per run, best of $runs."
