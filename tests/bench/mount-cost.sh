#!/usr/bin/env bash
# Benchmark (not a test): what one request costs, in one testbed boot, on the paths to the same
# namespace and the floors under them, 4k random reads at queue depth 1 and 32:
#   kernel     fio (libaio, O_DIRECT, one job) on the kernel initiator's block device;
#   fuse-null  fio on the file of tests/bench/fuse-null (FUSE's round trip with no backend);
#   null-ring  the same over FUSE's io_uring, served by libfuse's own ring threads (where the
#              kernel offers it, 7.x, and fuse-null was built against libfuse 3.18: ring-build/);
#   perf       `nvmefs perf` (the NVMe path without FUSE, sleeping on completion events);
#   perf-poll  the same at depth 1 polling, as the workers of the mount and the ublk device poll
#              for their one request in flight;
#   mount      fio on the file of `nvmefs mount` with its defaults;
#   mount-ring the same with -o io_uring=on (as null-ring: where the kernel and the build offer it);
#   ublk-null  fio on the device of tests/bench/ublk-null (ublk's round trip with no backend);
#   ublk       fio on the device of `nvmefs ublk add` with its defaults;
#   fio-null   fio's null engine (fio's own cost, no I/O at all), the job a thread;
#   engine     fio through the fio engine fio-nvmefs.so (where configure --with-fio built it), the
#              job a thread, as nvmefs-fio(7) advises.
# Per request: the mean latency, the guest's CPU time (user, system, idle: two vCPUs shared with
# the target) and the server's own (the mount's or ublk's daemon, fuse-null, ublk-null, perf
# itself, or the fio job for the last two), the fio job's where it is the load in front of a
# server (load, fio's own count), what is left of the guest's busy time (rest: the target,
# soft-RoCE and the kernel's other work outside both), and the server's system calls, counted in
# the kernel (ftrace) while it runs.  Last, the emulated CPU's cost of copying 128 KiB with
# `rep movsb` and with `rep movsq` (tests/bench/copy-speed), which sets what large copies cost in
# the testbed (`make bench-mount-cost`, issues #26 and #37, doc/PERFORMANCE-HISTORY.md).
#
#   tests/bench/mount-cost.sh [--time SEC]
# Run from the build tree after `make`; the testbed boots the kernel NVMEFS_TESTBED_KERNEL names.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
time_s=4
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	-h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mount-cost.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done
[[ $time_s =~ ^[1-9][0-9]*$ ]] || { echo "mount-cost.sh: --time is whole seconds, 1 or more" >&2; exit 2; }

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs && -x $top/tests/bench/fuse-null && -x $top/tests/bench/ublk-null &&
		-x $top/tests/bench/copy-speed ]] ||
		{ echo "mount-cost.sh: build first (make)" >&2; exit 1; }
	exec "$top/contrib/nvmefs-testbed" --ns-size 1G --memory 3072 --timeout 1800 -- \
		bash "$0" --time "$time_s"
fi

nvmefs=$top/src/cli/nvmefs
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
nqn=${NVMEFS_TEST_SUBNQNS%% *}
addr=$NVMEFS_TEST_TRADDR
svc=$NVMEFS_TEST_TRSVCID
tracing=/sys/kernel/tracing
[[ -d $tracing/events ]] || mount -t tracefs none "$tracing"
sys_enter=$tracing/events/raw_syscalls/sys_enter
# The system-call tracepoint is switched on once, here, before any load, with a filter that lets no
# record into the trace buffer, and stays on: the counting triggers come and go without patching
# kernel text while the load runs, which crashed 7.3 guests under the emulator's threads (an int3
# Oops in trace_syscall_enter).  Every row pays the same for it.
echo 'common_pid == 0' > "$sys_enter/filter"
echo 1 > "$sys_enter/enable"
tck=$(getconf CLK_TCK)
engine_so=$top/src/fio/.libs/fio-nvmefs.so
# fio writes state files in the working directory, the shared source tree: work in /tmp.
cd /tmp
mnt=/tmp/nvmefs-cost nullmnt=/tmp/nvmefs-cost-null
# errexit stays out of the clean-up: a mount that is not there to unmount would make a good run
# exit 1.
trap 'set +e; fusermount3 -u "$mnt" 2>/dev/null; fusermount3 -u "$nullmnt" 2>/dev/null
	[[ -s /tmp/nvmefs-cost-ublk.pid ]] && "$nvmefs" ublk del "$nqn" >/dev/null 2>&1
	[[ -n ${ublk_null_pid:-} ]] && kill "$ublk_null_pid" 2>/dev/null
	nvme disconnect-all >/dev/null 2>&1 || true' EXIT

# The guest's CPU: user, system (with interrupts), idle (with iowait), in ticks.
guest_cpu() { awk '/^cpu / { print $2 + $3, $4 + $7 + $8, $5 + $6 }' /proc/stat; }
# A process's user and system ticks, every thread's.
proc_cpu() { awk '{ print $14, $15 }' "/proc/$1/stat"; }

# Counts @pid's system calls (every thread it has now) until syscalls_stop; the trigger's
# histogram is keyed by system call and holds nothing of anyone else's.
syscalls_start() {
	hist_trigger="hist:keys=id.syscall:vals=hitcount:sort=hitcount.descending:size=256 if $(
		ls "/proc/$1/task" | sed 's/^/common_pid == /' | paste -sd'|' | sed 's/|/ || /g')"
	echo "$hist_trigger" > "$sys_enter/trigger"
}
syscalls_stop() { # -> "name count" lines
	sed -n 's/^{ id: sys_\([a-z0-9_]*\) *\[ *[0-9]*\] } hitcount: *\([0-9]*\)$/\1 \2/p' "$sys_enter/hist"
	echo "!$hist_trigger" > "$sys_enter/trigger"
}

# One measurement: @name, @qd, the server's pid (or - for none; self: perf; fio: the fio job),
# then the command that makes the load (fio or perf) and prints its IOPS and mean latency (us),
# and for fio the job's CPU a request (us), once it ends.  The window
# is the middle of the run: the load runs time_s + 2 s and is measured for time_s after its first
# second; a request's share is the window's over the load's IOPS times time_s (fio's exclude its
# first second, perf's do not: within a few percent either way).
measure() {
	local name=$1 qd=$2 server=$3 load_pid g0 g1 p0 p1 calls
	shift 3
	local fio_server=0
	[[ $server == fio ]] && fio_server=1
	"$@" > /tmp/cost-load.out &
	load_pid=$!
	sleep 1
	case $server in
	self) server=$(pgrep -n -f "nvmefs perf") ;;
	fio) server=$(pgrep -n -x fio) ;;	# the job's process, forked last (fio itself for a thread)
	esac
	read -r -a g0 < <(guest_cpu)
	[[ $server != - ]] && { read -r -a p0 < <(proc_cpu "$server"); syscalls_start "$server"; }
	sleep "$time_s"
	read -r -a g1 < <(guest_cpu)
	if [[ $server != - ]]; then
		read -r -a p1 < <(proc_cpu "$server")
		calls=$(syscalls_stop)
	fi
	wait "$load_pid"
	local iops lat job reqs load=- own=0
	read -r iops lat job < /tmp/cost-load.out
	reqs=$(echo "$iops * $time_s" | bc)
	per() { echo "scale=0; $1 * 1000000 / $tck / $reqs" | bc; }
	[[ $server != - ]] && own=$((p1[0] - p0[0] + p1[1] - p0[1]))
	# fio is the load in front of the kernel's device and the servers, not where it is the server
	[[ -n $job ]] && ((!fio_server)) && load=$(printf '%.0f' "$job")
	printf '%-10s %-5s %8.0f %8.0f | %6s %6s %6s | %6s %6s | %6s %6s |' "$name" "QD$qd" "$iops" "$lat" \
		"$(per $((g1[0] - g0[0])))" "$(per $((g1[1] - g0[1])))" "$(per $((g1[2] - g0[2])))" \
		"$( [[ $server == - ]] && echo - || per $((p1[0] - p0[0])))" \
		"$( [[ $server == - ]] && echo - || per $((p1[1] - p0[1])))" "$load" \
		"$(($(per $((g1[0] - g0[0] + g1[1] - g0[1] - own))) - ${load/-/0}))"
	if [[ $server != - ]]; then
		local total
		total=$(awk '{ s += $2 } END { print s + 0 }' <<<"$calls")
		printf ' %5.1f  ' "$(echo "scale=2; $total / $reqs" | bc)"
		head -5 <<<"$calls" | while read -r call n; do
			printf '%s %.2f  ' "$call" "$(echo "scale=3; $n / $reqs" | bc)"
		done
	fi
	echo
}

fio_load() { # file qd [fio options]
	fio --name=c --filename="$1" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth="$2" \
		--time_based --ramp_time=1 --runtime=$((time_s + 1)) --norandommap --randrepeat=0 \
		--output-format=json "${@:3}" |
		jq -r '.jobs[0] | "\(.read.iops) \(.read.lat_ns.mean / 1000) \((.usr_cpu + .sys_cpu) * 10000 / .read.iops)"'
}
perf_load() { # qd [mode]
	"$nvmefs" perf -a "$addr" -s "$svc" -n "$nqn" --qd "$1" --queues 1 --threads 1 --mode "${2:-event}" \
		--rw randread --bs 4k --time $((time_s + 2)) -o json 2>/tmp/cost-perf.err |
		jq -r '"\(.iops) \(.lat_us.mean)"'
}

nvme connect -t rdma -a "$addr" -s "$svc" -n "$nqn" >/dev/null
dev=$(kernel_bdev mount-cost.sh "$nqn")
size_mib=$(($(blockdev --getsize64 "$dev") >> 20))

echo "4k random reads, per request: mean latency (us); the guest's CPU (us: user, system, idle);"
echo "the server's CPU (us: user, system); the fio job's in front of a server (load) and the"
echo "guest's busy time left (rest, us); the server's system calls (all, then the five most made)"
printf '%-10s %-5s %8s %8s | %6s %6s %6s | %6s %6s | %6s %6s | %s\n' path depth IOPS lat_us user \
	sys idle s_user s_sys load rest "syscalls"
for qd in 1 32; do
	measure kernel "$qd" - fio_load "$dev" "$qd"
done
nvme disconnect -n "$nqn" >/dev/null

mkdir -p "$nullmnt" "$mnt"
"$top/tests/bench/fuse-null" "$nullmnt" "$size_mib" 128 &
null_pid=$!
wait_for -e "$nullmnt/n1" || { echo "mount-cost.sh: fuse-null did not mount within 10 s" >&2; exit 1; }
for qd in 1 32; do
	measure fuse-null "$qd" "$null_pid" fio_load "$nullmnt/n1" "$qd"
done
fusermount3 -u "$nullmnt"
wait "$null_pid" || true

# FUSE's io_uring with no backend (issue #37 item 0's floor), where the kernel offers it and
# fuse-null takes --ring; libfuse falls back to /dev/fuse without a word, so fuse-null's count of
# the requests each way says which was measured.
ring_offered=0
[[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]] && ring_offered=1
if ((ring_offered)); then
	"$top/tests/bench/fuse-null" --ring "$nullmnt" "$size_mib" 128 2>/tmp/cost-null-ring.err &
	null_pid=$!
	if wait_for -e "$nullmnt/n1"; then
		for qd in 1 32; do
			measure null-ring "$qd" "$null_pid" fio_load "$nullmnt/n1" "$qd"
		done
		fusermount3 -u "$nullmnt"
	fi
	wait "$null_pid" || true
	grep -q '[1-9][0-9]* reads and writes over io_uring' /tmp/cost-null-ring.err ||
		echo "mount-cost.sh: no null-ring rows over FUSE's io_uring (fuse-null takes --ring when" \
			"built against libfuse 3.18, as in make check-ring's ring-build/): $(tail -n 1 /tmp/cost-null-ring.err)" >&2
fi

for qd in 1 32; do
	measure perf "$qd" self perf_load "$qd"
done
# The faces' workers poll for a request in flight while it is their only one, so at depth 1 their
# NVMe path's floor is perf polling.
measure perf-poll 1 self perf_load 1 poll

"$nvmefs" mount -a "$addr" -s "$svc" -n "$nqn" --pidfile /tmp/nvmefs-cost.pid "$mnt"
for qd in 1 32; do
	measure mount "$qd" "$(cat /tmp/nvmefs-cost.pid)" fio_load "$mnt/n1" "$qd"
done
fusermount3 -u "$mnt"

# The mount over FUSE's io_uring (issue #37 item 0), where the kernel offers it (7.x) and nvmefs
# was built against libfuse 3.18 (make check-ring's ring-build/).
if ((ring_offered)); then
	if "$nvmefs" mount -a "$addr" -s "$svc" -n "$nqn" -o io_uring=on --pidfile /tmp/nvmefs-cost.pid \
		"$mnt" 2>/tmp/cost-ring.err; then
		for qd in 1 32; do
			measure mount-ring "$qd" "$(cat /tmp/nvmefs-cost.pid)" fio_load "$mnt/n1" "$qd"
		done
		fusermount3 -u "$mnt"
	else
		echo "mount-cost.sh: the kernel offers FUSE over io_uring but -o io_uring=on failed, no" \
			"mount-ring row: $(tail -n 1 /tmp/cost-ring.err)" >&2
	fi
fi

modprobe ublk_drv
"$top/tests/bench/ublk-null" "$size_mib" 64 128 >/tmp/cost-ublk-null.dev 2>/tmp/cost-ublk-null.err &
ublk_null_pid=$!
wait_for -s /tmp/cost-ublk-null.dev || true
nulldev=$(cat /tmp/cost-ublk-null.dev)
[[ -b $nulldev ]] || { echo "mount-cost.sh: ublk-null gave no device within 10 s: $(cat /tmp/cost-ublk-null.err)" >&2; exit 1; }
for qd in 1 32; do
	measure ublk-null "$qd" "$ublk_null_pid" fio_load "$nulldev" "$qd"
done
kill "$ublk_null_pid"
wait "$ublk_null_pid" || true
ublk_null_pid=

ublkdev=$("$nvmefs" ublk add -a "$addr" -s "$svc" -n "$nqn" --pidfile /tmp/nvmefs-cost-ublk.pid -o json |
	jq -r '.Devices[0].DevicePath')
[[ -b $ublkdev ]] || { echo "mount-cost.sh: nvmefs ublk add gave no device ('$ublkdev')" >&2; exit 1; }
for qd in 1 32; do
	measure ublk "$qd" "$(cat /tmp/nvmefs-cost-ublk.pid)" fio_load "$ublkdev" "$qd"
done
"$nvmefs" ublk del "$nqn" >/dev/null

# fio's own cost, then fio driving the engine (issue #37 item 2): the engine's floor is perf plus
# fio-null.  Both jobs run as threads, as nvmefs-fio(7) advises for the engine.
for qd in 1 32; do
	measure fio-null "$qd" fio fio_load /dev/null "$qd" --ioengine=null --size=1g --thread
done
if [[ -f $engine_so ]]; then
	mapfile -t engine < <(engine_args "$engine_so" rdma "$addr" "$svc" "$nqn")
	for qd in 1 32; do
		measure engine "$qd" fio fio_load ns1 "$qd" "${engine[@]}"
	done
fi
echo
"$top/tests/bench/copy-speed"
