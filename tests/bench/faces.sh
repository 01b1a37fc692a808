#!/usr/bin/env bash
# Benchmark (not a test; `make bench-faces`): the faces of issue #37 against the kernel initiator,
# in one testbed boot, over RDMA and then over NVMe/TCP, on the same namespace.  Columns: fio
# (libaio, O_DIRECT, one job, unpinned) on the kernel initiator's block device (kernel), on the
# file `nvmefs mount` serves (mount) and on the block device `nvmefs ublk add` serves (ublk), both
# with their defaults; `nvmefs perf`, one thread on one queue, unpinned (perf: the NVMe path with
# nothing in front, the floor the fio engine is held to); fio on tests/bench/ublk-null's device, a
# ublk server with no backend (null ublk: what ublk itself costs, the floor under the ublk device;
# taken in the first transport's rounds only, it has no transport); the ublk device's floor
# computed from those two (ublk floor: their latencies added, their rates as a request's times
# add); and fio through the fio engine fio-nvmefs.so with its defaults, the job a thread (engine,
# where configure --with-fio built it).  Rows: 4k random
# reads at depth 1 (mean latency) and 32 (IOPS), 4k random writes at 32 (IOPS), 128k reads and
# writes at 16 (MiB/s).  Prints one table, each figure with its ratio to the kernel's in the same
# row; the engine's also to perf's.  Runs alternate between the columns workload by workload, so
# that a slow spell of the emulator is not one column's: only ratios within this one boot mean
# anything.  The testbed boots the kernel NVMEFS_TESTBED_KERNEL names, if set.
#
#   tests/bench/faces.sh [--time SEC] [--runs N] [--stat best|median] [--transports "rdma tcp"]
#
# --time is each run's length after fio's 1 s ramp (default 2); 55 runs in all, which with the
# boot took 5.5 minutes on a loaded host (4 with --time 1).  Each cell is the best (or the median)
# of --runs runs (default 1).  Run from the build tree after `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
time_s=2 runs=1 stat=best transports="rdma tcp"
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--stat) stat=$2; shift 2 ;;
	--transports) transports=$2; shift 2 ;;
	-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "faces.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done
[[ $time_s =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] ||
	{ echo "faces.sh: --time and --runs are whole numbers from 1" >&2; exit 2; }
[[ $stat == best || $stat == median ]] || { echo "faces.sh: --stat is best or median" >&2; exit 2; }
for t in $transports; do
	[[ $t == rdma || $t == tcp ]] || { echo "faces.sh: --transports lists rdma and tcp" >&2; exit 2; }
done

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs && -x $top/tests/bench/ublk-null ]] ||
		{ echo "faces.sh: build first (make)" >&2; exit 1; }
	exec "$top/contrib/nvmefs-testbed" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" --time "$time_s" --runs "$runs" --stat "$stat" --transports "$transports"
fi

nvmefs=$top/src/cli/nvmefs
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
nqn=${NVMEFS_TEST_SUBNQNS%% *}
addr=$NVMEFS_TEST_TRADDR
svc=$NVMEFS_TEST_TRSVCID
engine_so=$top/src/fio/.libs/fio-nvmefs.so
mnt=/tmp/nvmefs-faces ublk_pid=/tmp/nvmefs-faces-ublk.pid null_pid=
# fio writes state files in the working directory, the shared source tree: work in /tmp.
cd /tmp
mkdir -p "$mnt"
# One transport's faces at a time: the kernel's two controllers of one subsystem would be one
# multipath device.
faces_down() {
	fusermount3 -u "$mnt" 2>/dev/null
	[[ -s $ublk_pid ]] && "$nvmefs" ublk del "$nqn" >/dev/null 2>&1
	nvme disconnect-all >/dev/null 2>&1
	return 0
}
# errexit stays out of the clean-up: a face that is not there to take down would make a good run
# exit 1.
trap 'set +e; faces_down; [[ -n $null_pid ]] && kill "$null_pid" && wait "$null_pid"' EXIT
modprobe ublk_drv
"$top/tests/bench/ublk-null" 1024 64 128 >/tmp/faces-null.dev 2>/tmp/faces-null.err &
null_pid=$!
wait_for -s /tmp/faces-null.dev || true
nulldev=$(cat /tmp/faces-null.dev)
[[ -b $nulldev ]] || { echo "faces.sh: ublk-null gave no device within 10 s: $(cat /tmp/faces-null.err)" >&2; exit 1; }

declare -A res
first=1
for t in $transports; do
	connect=(-t "$t" -a "$addr" -s "$svc" -n "$nqn")
	nvme connect "${connect[@]}" >/dev/null
	dev=$(kernel_bdev faces.sh "$nqn")
	"$nvmefs" mount "${connect[@]}" "$mnt"
	ublkdev=$("$nvmefs" ublk add "${connect[@]}" --pidfile "$ublk_pid" -o json | jq -r '.Devices[0].DevicePath')
	[[ -b $ublkdev ]] || { echo "faces.sh: nvmefs ublk add gave no device ('$ublkdev')" >&2; exit 1; }
	engine=()
	[[ -f $engine_so ]] && mapfile -t engine < <(engine_args "$engine_so" "$t" "$addr" "$svc" "$nqn")
	for w in "${bench_workloads[@]}"; do
		read -r name rw bs qd <<<"$w"
		k='' f='' p='' u='' z='' e=''
		for ((r = 0; r < runs; r++)); do
			k+=$(fio_run "$dev" "$rw" "$bs" "$qd")$'\n'
			f+=$(fio_run "$mnt/n1" "$rw" "$bs" "$qd")$'\n'
			p+=$("$nvmefs" perf "${connect[@]}" --rw="$rw" --bs="$bs" --iodepth="$qd" -i 1 --threads=1 \
				--cpus=none --time="$time_s" -o json 2>/dev/null | perf_figures)$'\n'
			u+=$(fio_run "$ublkdev" "$rw" "$bs" "$qd")$'\n'
			((first)) && z+=$(fio_run "$nulldev" "$rw" "$bs" "$qd")$'\n'
			((${#engine[@]})) && e+=$(fio_run ns1 "$rw" "$bs" "$qd" "${engine[@]}")$'\n'
		done
		for c in k f p u z e; do
			res[$t $name $c]=-
			[[ -n ${!c} ]] && res[$t $name $c]=$(pick <<<"${!c}")
		done
		((first)) || res[$t $name z]=${res[${transports%% *} $name z]}
	done
	faces_down
	first=0
done

# One row: the kernel's figure, then each face's with its ratio to it; the engine's also to perf's.
# FIELD 1 IOPS, 2 MiB/s, 3 mean latency (us)
row() { # transport workload label field
	awk -v t="$1" -v label="$3" -v f="$4" -v k="${res[$1 $2 k]}" -v fu="${res[$1 $2 f]}" \
		-v p="${res[$1 $2 p]}" -v u="${res[$1 $2 u]}" -v z="${res[$1 $2 z]}" -v e="${res[$1 $2 e]}" \
		'function fig(v, a) { split(v, a, " "); return a[f] }
		function cell(v) {
			if (v == "-") return " - |"
			return sprintf(" %.0f %.2fx |", fig(v), fig(v) / fig(k))
		}
		# The ublk device if it cost only its two floors, one after the other: perf'"'"'s and
		# null ublk'"'"'s latencies added, their rates combined as a request'"'"'s times add.
		function floor_cell(  x) {
			if (p == "-" || z == "-") return " - |"
			x = f == 3 ? fig(p) + fig(z) : 1 / (1 / fig(p) + 1 / fig(z))
			return sprintf(" %.0f %.2fx |", x, x / fig(k))
		}
		BEGIN {
			printf "| %s | %s | %.0f |%s%s%s%s%s%s", t, label, fig(k), cell(fu), cell(p), cell(u),
				cell(z), floor_cell(), cell(e)
			if (e == "-") print " - |"
			else printf " %.2fx |\n", fig(e) / fig(p)
		}'
}
echo
echo "Issue #37's faces against the kernel initiator, kernel $(uname -r), one boot; each cell: the"
echo "figure and its ratio to the kernel's (IOPS, MiB/s: higher is better; latency: lower)."
echo
echo "| | workload | kernel | mount | perf | ublk | null ublk | ublk floor | engine | engine/perf |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for t in $transports; do
	row "$t" 4k-randread-qd1 "4k randread QD1, mean latency (us)" 3
	row "$t" 4k-randread-qd32 "4k randread QD32, IOPS" 1
	row "$t" 4k-randwrite-qd32 "4k randwrite QD32, IOPS" 1
	row "$t" 128k-read-qd16 "128k read QD16, MiB/s" 2
	row "$t" 128k-write-qd16 "128k write QD16, MiB/s" 2
done
echo
echo "kernel: fio (libaio, O_DIRECT, one job, unpinned) on the kernel initiator's block device;"
echo "mount, ublk: the same fio job on nvmefs mount's file and nvmefs ublk add's device (their"
echo "defaults); perf: nvmefs perf, one thread, one queue, unpinned (polling at depth 1, events above);"
echo "null ublk: the fio job on tests/bench/ublk-null's device (one queue, user copy, no backend),"
echo "measured with the first transport; ublk floor: what the ublk device would do if it cost no more"
echo "than perf and null ublk one after the other (their latencies added; 1/(1/perf + 1/null) for"
echo "IOPS and MiB/s), computed, not measured; engine: the fio job through fio-nvmefs.so (its defaults, the job a thread)."
echo "${time_s}s per run after a 1 s ramp, $stat of $runs; RDMA is soft-RoCE (link MTU"
echo "$(cat /sys/class/net/nvmefs0/mtu)), NVMe/TCP a local socket, digests off."
