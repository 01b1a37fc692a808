#!/usr/bin/env bash
# Benchmark (not a test): does the mount's throughput drift down within one testbed boot, and is
# it ours or the emulated guest's?  Round after round, in one boot, the same 4k random-read job
# (fio, libaio, O_DIRECT, one job, QD --qd) runs on:
#   kernel  the kernel initiator's block device (the guest's own drift, if any)
#   long    the file of one nvmefs mount made at the start and kept for the whole boot
#   fresh   the file of a mount made for this round alone (state that lives per mount starts anew)
#   perf    nvmefs perf on the same namespace (the library without FUSE)
# and prints IOPS per round, each with its ratio to the kernel's in that round, then the change
# from the first two rounds to the last two.  A column that falls while the kernel's holds is a
# drift of ours; the long mount's own counters (its stats file) are printed at the end.
#
#   tests/bench/drift.sh [--rounds N] [--time SEC] [--qd N]
# Run from the build tree after `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=8 time_s=5 qd=32
while (($#)); do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--time) time_s=$2; shift 2 ;;
	--qd) qd=$2; shift 2 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "drift.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done
[[ $rounds =~ ^[0-9]+$ ]] && ((rounds >= 4)) || { echo "drift.sh: --rounds is at least 4" >&2; exit 2; }

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs ]] || { echo "drift.sh: build first (make)" >&2; exit 1; }
	exec "$top/contrib/nvmefs-testbed" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" --rounds "$rounds" --time "$time_s" --qd "$qd"
fi

nvmefs=$top/src/cli/nvmefs
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
nqn=${NVMEFS_TEST_SUBNQNS%% *}
addr=$NVMEFS_TEST_TRADDR
conn=(-a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn")

nvme connect -t rdma "${conn[@]}" >/dev/null
dev=$(kernel_bdev drift.sh "$nqn")

long=/tmp/nvmefs-drift-long fresh=/tmp/nvmefs-drift-fresh
mkdir -p "$long" "$fresh"
# errexit stays out of the clean-up: a mount that is not there to unmount would make a good run
# exit 1.
trap 'set +e; fusermount3 -u "$long" 2>/dev/null; fusermount3 -u "$fresh" 2>/dev/null; nvme disconnect-all >/dev/null 2>&1 || true' EXIT
"$nvmefs" mount "${conn[@]}" "$long"

fio_iops() { # file -> IOPS
	fio --name=d --filename="$1" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth="$qd" \
		--time_based --runtime="$time_s" --ramp_time=1 --norandommap --randrepeat=0 \
		--output-format=json | jq -r '.jobs[0].read.iops | floor'
}
perf_iops() {
	"$nvmefs" perf "${conn[@]}" --rw=randread --bs=4k --qd="$qd" --time="$time_s" -o json 2>/dev/null |
		jq -r '.iops | floor'
}

declare -a K L F P
printf '%-5s | %7s | %7s %6s | %7s %6s | %7s %6s | %s\n' round kernel long ratio fresh ratio perf ratio \
	"long mount: rss KiB, cpu s"
for ((r = 0; r < rounds; r++)); do
	K[r]=$(fio_iops "$dev")
	L[r]=$(fio_iops "$long/n1")
	"$nvmefs" mount "${conn[@]}" "$fresh"
	F[r]=$(fio_iops "$fresh/n1")
	fusermount3 -u "$fresh"
	P[r]=$(perf_iops)
	pid=$(pgrep -f "mount.*$long" | head -n 1)
	read -r rss cpu < <(awk -v hz="$(getconf CLK_TCK)" '
		FILENAME ~ /status$/ && $1 == "VmRSS:" { rss = $2 }
		FILENAME ~ /stat$/ { split($0, a, ") "); split(a[2], f, " "); cpu = (f[12] + f[13]) / hz }
		END { printf "%d %.1f\n", rss, cpu }' "/proc/$pid/status" "/proc/$pid/stat")
	awk -v r=$((r + 1)) -v k="${K[r]}" -v l="${L[r]}" -v f="${F[r]}" -v p="${P[r]}" -v rss="$rss" \
		-v cpu="$cpu" 'BEGIN { printf "%-5d | %7d | %7d %5.2fx | %7d %5.2fx | %7d %5.2fx | %d, %.1f\n",
			r, k, l, l / k, f, f / k, p, p / k, rss, cpu }'
done
n=$rounds
awk -v k0="${K[0]}" -v k1="${K[1]}" -v kx="${K[n - 2]}" -v ky="${K[n - 1]}" \
	-v l0="${L[0]}" -v l1="${L[1]}" -v lx="${L[n - 2]}" -v ly="${L[n - 1]}" \
	-v f0="${F[0]}" -v f1="${F[1]}" -v fx="${F[n - 2]}" -v fy="${F[n - 1]}" \
	-v p0="${P[0]}" -v p1="${P[1]}" -v px="${P[n - 2]}" -v py="${P[n - 1]}" '
	function ch(a, b, x, y) { return sprintf("%+6.1f%%", ((x + y) / (a + b) - 1) * 100) }
	BEGIN { printf "last 2 vs first 2 | kernel %s | long %s | fresh %s | perf %s\n",
		ch(k0, k1, kx, ky), ch(l0, l1, lx, ly), ch(f0, f1, fx, fy), ch(p0, p1, px, py) }'
echo
echo "long mount's stats after $rounds rounds:"
jq -c '{queues: [.queues[]? | {reads, errors}], lat: .latency_us?}' "$long/stats" 2>/dev/null ||
	head -c 2000 "$long/stats"
echo
echo "4k randread QD$qd, ${time_s}s per run after a 1 s ramp; mounts with default options."
