#!/usr/bin/env bash
# Benchmark (not a test): in one testbed boot, on the same namespace, fio (libaio, O_DIRECT, one
# job) on the kernel initiator's block device against `nvmefs perf` (one thread, the same total
# depth on one queue, then spread over --spread queues, then with no tuning flags at all: the
# layout it chooses) and against the same fio job on the file that `nvmefs mount` serves, for the
# workloads of doc/PERFORMANCE.md.  Prints three tables (IOPS, MiB/s, mean latency); ratios to the
# kernel are what count (everything in the guest is emulated).
#
#   tests/bench/vs-kernel.sh [--time SEC] [--runs N] [--spread QUEUES] [--cpu CPU] [--stat best|median]
#                            [--mtu BYTES] [--rkey-per-io auto|on|off]
# Each cell is the best (or the median) of N runs.  nvmefs perf runs pinned to CPU (default 0;
# 'none' leaves it unpinned); the kernel's cell is the better of fio unpinned and fio pinned to
# the same CPU.  nvmefs perf polls at queue depth 1 and sleeps on completion events at higher
# depths.  --mtu is the testbed's link MTU (its default: 9000).  --rkey-per-io goes to nvmefs perf
# and mount (their default: auto).  Run from the build tree after `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
time_s=10 runs=1 spread=4 cpu=0 stat=best mtu= rkey=auto
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--spread) spread=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	--stat) stat=$2; shift 2 ;;
	--mtu) mtu=$2; shift 2 ;;
	--rkey-per-io) rkey=$2; shift 2 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs-kernel.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done
[[ $stat == best || $stat == median ]] || { echo "vs-kernel.sh: --stat is best or median" >&2; exit 2; }
[[ $cpu == none || $cpu =~ ^[0-9]+$ ]] || { echo "vs-kernel.sh: --cpu is a CPU number or none" >&2; exit 2; }

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs ]] || { echo "vs-kernel.sh: build first (make)" >&2; exit 1; }
	exec "$top/contrib/nvmefs-testbed" ${mtu:+--mtu "$mtu"} --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" --time "$time_s" --runs "$runs" --spread "$spread" --cpu "$cpu" --stat "$stat" \
		--rkey-per-io "$rkey"
fi

nvmefs=$top/src/cli/nvmefs
nqn=${NVMEFS_TEST_SUBNQNS%% *}
addr=$NVMEFS_TEST_TRADDR
# name rw bs qd: qd is the total depth, for fio and for nvmefs perf alike.
workloads=(
	"4k-randread-qd1 randread 4k 1"
	"4k-randread-qd32 randread 4k 32"
	"4k-randwrite-qd32 randwrite 4k 32"
	"128k-read-qd16 read 128k 16"
	"128k-write-qd16 write 128k 16"
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
"$nvmefs" mount -t rdma -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -o rkey_per_io="$rkey" "$mnt"
trap 'fusermount3 -u "$mnt" 2>/dev/null; nvme disconnect-all >/dev/null 2>&1 || true' EXIT

# fio JSON: .jobs[0].read|write: iops, bw (KiB/s), lat_ns.mean
fio_run() { # file rw bs qd [fio options] -> "iops mibs lat_us"
	fio "${@:5}" --name=b --filename="$1" --ioengine=libaio --direct=1 --rw="$2" --bs="$3" --iodepth="$4" \
		--time_based --runtime="$time_s" --ramp_time=1 --output-format=json --norandommap \
		--randrepeat=0 | jq -r '.jobs[0] | (if .read.io_bytes > 0 then .read else .write end)
			| "\(.iops) \(.bw / 1024) \(.lat_ns.mean / 1000)"'
}
pin=()
[[ $cpu == none ]] || pin=(--cpus="$cpu")
[[ $cpu == none ]] && pin=(--cpus=none)
nvmefs_run() { # rw bs qd queues: one thread, qd in flight over the queues
	local mode=event
	(($3 == 1)) && mode=poll
	"$nvmefs" perf "${pin[@]}" -t rdma -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw="$1" --bs="$2" \
		--qd="$3" --queues="$4" --threads=1 --time="$time_s" --mode="$mode" --rkey-per-io="$rkey" -o json \
		2>/dev/null | jq -r '"\(.iops) \(.bw_mibs) \(.lat_us.mean)"'
}
# What a user who types only the workload and the depth gets.
nvmefs_defaults() { # rw bs qd
	local rk=()
	[[ $rkey == auto ]] || rk=(--rkey-per-io="$rkey")
	"$nvmefs" perf -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw="$1" --bs="$2" --qd="$3" \
		--time="$time_s" "${rk[@]}" -o json 2>/dev/null | jq -r '"\(.iops) \(.bw_mibs) \(.lat_us.mean)"'
}
# The run with the highest IOPS, or the median one by IOPS (the upper of the middle two).
pick() {
	local rows
	rows=$(sort -n -k1,1 | sed '/^$/d')
	if [[ $stat == best ]]; then
		tail -n 1 <<<"$rows"
	else
		sed -n "$(($(wc -l <<<"$rows") / 2 + 1))p" <<<"$rows"
	fi
}
better() { printf '%s\n%s\n' "$1" "$2" | sort -n -k1,1 | tail -n 1; }

# Runs alternate between the initiators, so that a slow spell of the emulator is not all one's.
declare -A res
for w in "${workloads[@]}"; do
	read -r name rw bs qd <<<"$w"
	k= kp= p1= pn= pd= f=
	spreads=$((qd >= spread && qd % spread == 0))
	for ((r = 0; r < runs; r++)); do
		k+=$(fio_run "$dev" "$rw" "$bs" "$qd")$'\n'
		[[ $cpu == none ]] || kp+=$(fio_run "$dev" "$rw" "$bs" "$qd" --cpus_allowed="$cpu")$'\n'
		p1+=$(nvmefs_run "$rw" "$bs" "$qd" 1)$'\n'
		((spreads)) && pn+=$(nvmefs_run "$rw" "$bs" "$qd" "$spread")$'\n'
		pd+=$(nvmefs_defaults "$rw" "$bs" "$qd")$'\n'
		f+=$(fio_run "$mnt/n1" "$rw" "$bs" "$qd")$'\n'
	done
	res[$name k]=$(pick <<<"$k")
	[[ $cpu == none ]] || res[$name k]=$(better "${res[$name k]}" "$(pick <<<"$kp")")
	res[$name p1]=$(pick <<<"$p1")
	res[$name pn]=-
	((spreads)) && res[$name pn]=$(pick <<<"$pn")
	res[$name pd]=$(pick <<<"$pd")
	res[$name f]=$(pick <<<"$f")
done

# table TITLE FIELD FORMAT: FIELD 1 IOPS, 2 MiB/s, 3 mean latency (us)
table() {
	printf '\n%-18s | %9s | %9s %6s | %9s %6s | %9s %6s | %9s %6s\n' "$1" kernel perf ratio \
		"perf/${spread}q" ratio defaults ratio fuse ratio
	for w in "${workloads[@]}"; do
		read -r name _ <<<"$w"
		awk -v name="$name" -v f="$2" -v fmt="$3" -v k="${res[$name k]}" -v p1="${res[$name p1]}" \
			-v pn="${res[$name pn]}" -v pd="${res[$name pd]}" -v fu="${res[$name f]}" 'function cell(v, kv) {
				if (v == "-") return sprintf(" %9s %6s", "-", "")
				split(v, a, " ")
				return sprintf(" " fmt " %5.2fx", a[f], a[f] / kv)
			}
			BEGIN {
				split(k, ka, " ")
				printf "%-18s | " fmt " |%s |%s |%s |%s\n", name, ka[f], cell(p1, ka[f]),
					cell(pn, ka[f]), cell(pd, ka[f]), cell(fu, ka[f])
			}'
	done
}
table IOPS 1 '%9.0f'
table MiB/s 2 '%9.1f'
table 'mean latency, us' 3 '%9.0f'
echo
pinned="unpinned"
[[ $cpu == none ]] || pinned="pinned to CPU $cpu"
echo "kernel: fio (libaio, O_DIRECT, one job) on the kernel initiator's block device (its 2 I/O"
[[ $cpu == none ]] || echo "queues), the better of fio unpinned and fio pinned to CPU $cpu;"
echo "perf: nvmefs perf ($pinned), one thread, the whole depth on one queue; perf/${spread}q: one"
echo "thread, the same total depth spread over $spread queues; defaults: nvmefs perf with only"
echo "--rw, --bs and --qd (the layout it chooses: nvmefs-perf(1)); fuse: the fio job (unpinned) on"
echo "the nvmefs mount's file n1 (its default queues and workers).  nvmefs perf polls at depth 1,"
echo "sleeps on events otherwise.  Ratios are to the kernel: for IOPS and MiB/s higher is better,"
echo "for latency lower."
echo "Remote keys: --rkey-per-io=$rkey."
echo "${time_s}s per run, $stat of $runs; soft-RoCE link MTU $(cat /sys/class/net/nvmefs0/mtu)\
 (RDMA MTU $(ibv_devinfo -d rxe0 | awk '/active_mtu/ { print $2 }'))."
