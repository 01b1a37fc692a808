#!/usr/bin/env bash
# Benchmark (not a test), issue #27: plain sends against MSG_ZEROCOPY for 128 KiB over TCP to a
# receiver on the testbed guest's own address, as the initiator's H2C data goes to nvmet-tcp
# there, --runs rounds of --time seconds each, alternating; tests/bench/zerocopy.c says what it
# prints.  Run from the build tree after `make` (`make bench-zerocopy`).
#
#   tests/bench/zerocopy.sh [--time SEC] [--runs N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
time_s=3 runs=2
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) echo "zerocopy.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
bin=$PWD/tests/bench/zerocopy
[[ -x $bin ]] || { echo "zerocopy.sh: $bin is missing: run make first, from the build tree" >&2; exit 1; }
if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	exec "$top/contrib/nvmefs-testbed" --ns-size 32M -- bash "$0" --time "$time_s" --runs "$runs"
fi
for ((r = 1; r <= runs; r++)); do
	for mode in copy zc; do
		echo "run $r $("$bin" "$NVMEFS_TEST_TRADDR" "$mode" "$time_s")"
	done
done
echo "kernel $(uname -r); sender and receiver in one guest, as the testbed's initiator and target are"
