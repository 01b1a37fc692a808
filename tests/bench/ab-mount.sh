#!/usr/bin/env bash
# Benchmark (not a test): an A/B of two nvmefs builds' mounts in one testbed boot, interleaved run
# by run (A first in odd runs, B first in even ones), so that a change on the FUSE path is
# compared under the same conditions.  Each run mounts the namespace with one build (default
# options: 2 workers), runs fio (libaio, O_DIRECT, one job) on the file for --time seconds after
# a 1 s ramp, and unmounts; prints IOPS, MiB/s and mean latency per run, then B's ratio to A per
# workload (the median of the runs' ratios), with the guest's CPU time per request (all its
# vCPUs, the target's included: on a loaded host less noisy than IOPS) and the daemon's.  The
# workloads: 4k random reads (or --rw randwrite) at QD1 and QD32, or those of --workloads, each
# RW:BS:QD (fio's --rw, --bs and --iodepth), e.g.
# --workloads "randread:4k:1 randread:4k:32 randwrite:4k:32 read:128k:16 write:128k:16".
#
#   tests/bench/ab-mount.sh BEFORE_NVMEFS AFTER_NVMEFS [--time SEC] [--runs N] [--rw randread|randwrite]
#                           [--workloads "RW:BS:QD ..."] [--a-opts "OPTS"] [--b-opts "OPTS"]
#                           [--face mount|ublk]
# --a-opts and --b-opts are mount options of A's and B's mounts (e.g. --b-opts "-i 1 --depth 32"):
# give one build twice to compare two settings. --face ublk compares the builds' ublk block devices
# (nvmefs ublk add, fio on /dev/ublkbN, ublk del) instead of their mounts; the options are then
# ublk add's.
# The two nvmefs binaries must lie under a directory the testbed guest sees (the working
# directory, or /work).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
(($# >= 2)) || { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
a=$(readlink -f "$1") b=$(readlink -f "$2")
shift 2
time_s=3 runs=3 rw=randread workloads= a_opts= b_opts= face=mount
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--rw) rw=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--a-opts) a_opts=$2; shift 2 ;;
	--b-opts) b_opts=$2; shift 2 ;;
	--face) face=$2; shift 2 ;;
	*) echo "ab-mount.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ $face == mount || $face == ublk ]] || { echo "ab-mount.sh: --face takes mount or ublk, not '$face'" >&2; exit 2; }
[[ -n $workloads ]] || workloads="$rw:4k:1 $rw:4k:32"
for w in $workloads; do
	[[ $w =~ ^[a-z]+:[0-9]+[kKmM]?:[0-9]+$ ]] ||
		{ echo "ab-mount.sh: workload '$w' is not RW:BS:QD (e.g. randread:4k:32)" >&2; exit 2; }
done
if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	exec "$top/contrib/nvmefs-testbed" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" "$a" "$b" --time "$time_s" --runs "$runs" --workloads "$workloads" \
		--a-opts "$a_opts" --b-opts "$b_opts" --face "$face"
fi
[[ $face == mount ]] || modprobe ublk_drv || { echo "ab-mount.sh: no ublk driver in this kernel" >&2; exit 1; }
nqn=${NVMEFS_TEST_SUBNQNS%% *}
mnt=/tmp/nvmefs-ab
mkdir -p "$mnt"
trap 'fusermount3 -u "$mnt" 2>/dev/null || true' EXIT
# Non-idle jiffies of the guest (its two vCPUs, shared with the target), and of process PID.
guest_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
proc_busy() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
run() { # nvmefs "options" rw bs qd -> "IOPS MiB/s mean_us guest_us_per_req daemon_us_per_req"
	local nvmefs=$1 opts pid g0 d0 out file
	read -r -a opts <<<"$2"
	shift 2
	if [[ $face == ublk ]]; then
		file=$("$nvmefs" ublk add -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
			--pidfile "$mnt.pid" "${opts[@]}" | head -n 1) && [[ -b $file ]] || { echo "ublk add failed"; return; }
	else
		"$nvmefs" mount -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --pidfile "$mnt.pid" \
			"${opts[@]}" "$mnt" >/dev/null || { echo "mount failed"; return; }
		file=$mnt/n1
	fi
	pid=$(cat "$mnt.pid")
	g0=$(guest_busy) d0=$(proc_busy "$pid")
	out=$(fio --name=b --filename="$file" --ioengine=libaio --direct=1 --rw="$1" --bs="$2" \
		--iodepth="$3" --time_based --runtime="$time_s" --ramp_time=1 --norandommap --randrepeat=0 \
		--output-format=json 2>/dev/null |
		jq -r '.jobs[0] | (if .read.io_bytes > 0 then .read else .write end) | "\(.iops | floor) \(.bw / 1024 | floor) \(.lat_ns.mean / 1000 | floor)"') ||
		out=failed
	# CPU per request: jiffies (10 ms) over the run, ramp included, at the run's rate.
	echo "$out" $(awk -v g=$(($(guest_busy) - g0)) -v d=$(($(proc_busy "$pid") - d0)) -v t=$((time_s + 1)) \
		'{ n = $1 * t; if (n > 0) printf "%d %d", g * 10000 / n, d * 10000 / n }' <<<"$out")
	if [[ $face == ublk ]]; then
		"$nvmefs" ublk del "$file" >/dev/null
	else
		fusermount3 -u "$mnt"
	fi
}
declare -A ratios
for w in $workloads; do
	IFS=: read -r wrw bs qd <<<"$w"
	for ((i = 1; i <= runs; i++)); do
		# Which goes first alternates: neither always runs right after the other's unmount.
		if ((i % 2)); then
			ra=$(run "$a" "$a_opts" "$wrw" "$bs" "$qd")
			rb=$(run "$b" "$b_opts" "$wrw" "$bs" "$qd")
		else
			rb=$(run "$b" "$b_opts" "$wrw" "$bs" "$qd")
			ra=$(run "$a" "$a_opts" "$wrw" "$bs" "$qd")
		fi
		for r in A B; do
			v=$ra
			[[ $r == B ]] && v=$rb
			read -r iops mibs lat gcpu dcpu <<<"$v"
			printf '%-16s run %d  %s %s IOPS, %s MiB/s, mean %s us, CPU per request %s us (guest), %s us (daemon)\n' \
				"$wrw-$bs-qd$qd" "$i" "$r" "$iops" "${mibs:-}" "${lat:-}" "${gcpu:-}" "${dcpu:-}"
		done
		ratios[$w]+="$ra $rb"$'\n'
	done
done
echo
printf '%-17s  %s\n' workload "B/A: IOPS (MiB/s alike), mean latency, guest CPU per request: the median of the runs' ratios"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.2fx", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for w in $workloads; do
	IFS=: read -r wrw bs qd <<<"$w"
	r=$(awk 'NF == 10 && $1 > 0 && $3 > 0 && $4 > 0 { print $6 / $1, $8 / $3, $9 / $4 }' <<<"${ratios[$w]}")
	printf '%-17s  %s  %s  %s  (%d runs; IOPS ratios %s)\n' "$wrw-$bs-qd$qd" "$(cut -d' ' -f1 <<<"$r" | median)" \
		"$(cut -d' ' -f2 <<<"$r" | median)" "$(cut -d' ' -f3 <<<"$r" | median)" "$(grep -c . <<<"$r")" \
		"$(cut -d' ' -f1 <<<"$r" | xargs printf '%.2f ' | sed 's/ $//')"
done
