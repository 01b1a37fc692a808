#!/usr/bin/env bash
# Benchmark (not a test): an A/B of two nvmefs builds' mounts in one testbed boot, interleaved run
# by run, so that a change on the FUSE path is compared under the same conditions.  Each run
# mounts the namespace with one build (default options: 2 workers), runs fio (libaio, O_DIRECT,
# one job) on the file for --time seconds after a 1 s ramp at QD1 and QD32 (4k random reads, or --rw randwrite),
# and unmounts; prints IOPS and mean latency per run.
#
#   tests/bench/ab-mount.sh BEFORE_NVMEFS AFTER_NVMEFS [--time SEC] [--runs N] [--rw randread|randwrite]
# The two nvmefs binaries must lie under a directory the testbed guest sees (the working
# directory, or /work).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
(($# >= 2)) || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
a=$(readlink -f "$1") b=$(readlink -f "$2")
shift 2
time_s=3 runs=3 rw=randread
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--rw) rw=$2; shift 2 ;;
	*) echo "ab-mount.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	exec "$top/contrib/nvmefs-testbed" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" "$a" "$b" --time "$time_s" --runs "$runs" --rw "$rw"
fi
nqn=${NVMEFS_TEST_SUBNQNS%% *}
mnt=/tmp/nvmefs-ab
mkdir -p "$mnt"
trap 'fusermount3 -u "$mnt" 2>/dev/null || true' EXIT
run() { # nvmefs qd -> "N IOPS, mean X us"
	"$1" mount -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$mnt" >/dev/null ||
		{ echo "mount failed"; return; }
	fio --name=b --filename="$mnt/n1" --ioengine=libaio --direct=1 --rw="$rw" --bs=4k \
		--iodepth="$2" --time_based --runtime="$time_s" --ramp_time=1 --norandommap --randrepeat=0 \
		--output-format=json 2>/dev/null |
		jq -r '.jobs[0] | (if .read.io_bytes > 0 then .read else .write end) | "\(.iops | floor) IOPS, mean \(.lat_ns.mean / 1000 | floor) us"' ||
		echo "failed"
	fusermount3 -u "$mnt"
}
for qd in 1 32; do
	for ((i = 1; i <= runs; i++)); do
		printf 'qd%-3s run %d  A %s\n' "$qd" "$i" "$(run "$a" "$qd")"
		printf 'qd%-3s run %d  B %s\n' "$qd" "$i" "$(run "$b" "$qd")"
	done
done
