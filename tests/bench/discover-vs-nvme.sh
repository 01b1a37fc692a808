#!/usr/bin/env bash
# Benchmark (not a test): in one testbed boot with 200 subsystems, `nvme discover` (nvme-cli, the
# kernel initiator) against `nvmefs discover` of this build tree, printing the same log (checked
# byte for byte) to /dev/null, with 200 subsystems in the log and then 1 (the other 199 unlinked
# from the port; nvmet adds a record of its own).  Prints one table: wall-clock milliseconds of
# each and their ratio; the ratio is what counts (everything in the guest is emulated, and other
# guests on the host add noise).
#
#   tests/bench/discover-vs-nvme.sh [--runs N]
# cold: the first run after the guest's page cache was dropped (echo 3 > drop_caches), so the
#       program and its libraries are read again over virtio-9p, as after a boot; the median of
#       3 such runs, each program after its own drop.
# warm: the median of N runs (default 9) that follow, the two programs taking turns.
# Run from the build tree after `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
runs=9
while (($#)); do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "discover-vs-nvme.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "discover-vs-nvme.sh: --runs is a number from 1" >&2; exit 2; }

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs ]] || { echo "discover-vs-nvme.sh: build first (make)" >&2; exit 1; }
	exec "$top/contrib/nvmefs-testbed" --subsystems 200 --timeout 3600 -- bash "$0" --runs "$runs"
fi

# The program itself, not libtool's wrapper script; its library where lib.sh puts it for the tests.
nvmefs=$top/src/cli/.libs/nvmefs
cp -P "$top"/src/lib/.libs/libnvmefs.so* /usr/lib/
where=(-t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID")
nvme_cmd=(nvme discover "${where[@]}")
nvmefs_cmd=("$nvmefs" discover "${where[@]}")

# ms COMMAND...: the wall-clock milliseconds COMMAND takes, its output thrown away; fails with it.
ms() {
	local start=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || { echo "discover-vs-nvme.sh: '$*' failed" >&2; exit 1; }
	echo $(((${EPOCHREALTIME/./} - ${start/./}) / 1000))
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

row() {
	local n=$1 r a b c1=() c2=() w1=() w2=() i
	cmp -s <("${nvme_cmd[@]}") <("${nvmefs_cmd[@]}") ||
		{ echo "discover-vs-nvme.sh: nvme and nvmefs printed different logs" >&2; exit 1; }
	r=$("${nvme_cmd[@]}" | grep -c '^subnqn:')
	for ((i = 0; i < 3; i++)); do
		drop_caches
		c1+=("$(ms "${nvme_cmd[@]}")")
		drop_caches
		c2+=("$(ms "${nvmefs_cmd[@]}")")
	done
	for ((i = 0; i < runs; i++)); do
		w1+=("$(ms "${nvme_cmd[@]}")")
		w2+=("$(ms "${nvmefs_cmd[@]}")")
	done
	a=$(median "${c1[@]}") b=$(median "${c2[@]}")
	printf '%-11s %-8s %-5s %9s %10s %7s\n' "$n" "$r" cold "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
	a=$(median "${w1[@]}") b=$(median "${w2[@]}")
	printf '%-11s %-8s %-5s %9s %10s %7s\n' "$n" "" warm "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
	echo "#   runs (ms): nvme cold ${c1[*]}, nvmefs cold ${c2[*]}; nvme warm ${w1[*]}; nvmefs warm ${w2[*]}" >&2
}

read -r -a nqns <<<"$NVMEFS_TEST_SUBNQNS"
((${#nqns[@]} == 200)) || { echo "discover-vs-nvme.sh: the testbed gave ${#nqns[@]} subsystems, not 200" >&2; exit 1; }
printf '%-11s %-8s %-5s %9s %10s %7s\n' subsystems records run "nvme ms" "nvmefs ms" ratio
row 200
for nqn in "${nqns[@]:1}"; do
	rm "$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn"
done
row 1
