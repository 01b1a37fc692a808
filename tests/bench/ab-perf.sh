#!/usr/bin/env bash
# Benchmark (not a test): an A/B of two nvmefs builds in one testbed boot, interleaved run by run,
# so that a change on the I/O path is compared under the same conditions.  Each run is
# `nvmefs perf --rw randread --bs 4k --time SEC --cpus 0` at QD1 and QD32 (--rw randwrite: writes);
# prints IOPS and mean latency per run.
#
#   tests/bench/ab-perf.sh BEFORE_NVMEFS AFTER_NVMEFS [--time SEC] [--runs N] [--a-opts OPTS]
#                          [--b-opts OPTS] [--transport rdma|tcp] [--tls] [--rw randread|randwrite]
# The two nvmefs binaries must lie under a directory the testbed guest sees (the working
# directory, or /work).  --a-opts and --b-opts add perf options to one side, so that one build
# can be compared with itself under two settings (e.g. --rkey-per-io=on against off).
# --transport tcp runs over NVMe/TCP; --tls (TCP only) has the port require TLS 1.3 with the
# testbed's pre-shared key (the testbed's --tls, tlshd on the target), given to both sides.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
(($# >= 2)) || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
a=$(readlink -f "$1") b=$(readlink -f "$2")
shift 2
time_s=3 runs=3 a_opts= b_opts= transport=rdma tls=0 rw=randread
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--a-opts) a_opts=$2; shift 2 ;;
	--b-opts) b_opts=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--tls) tls=1; shift ;;
	--rw) rw=$2; shift 2 ;;
	*) echo "ab-perf.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ $transport == rdma || $transport == tcp ]] || { echo "ab-perf.sh: --transport is rdma or tcp" >&2; exit 2; }
[[ $rw == randread || $rw == randwrite ]] || { echo "ab-perf.sh: --rw is randread or randwrite" >&2; exit 2; }
((!tls)) || [[ $transport == tcp ]] || { echo "ab-perf.sh: --tls is NVMe/TCP's: give --transport tcp" >&2; exit 2; }
# The testbed's TLS key (tests/integration/test-tls.sh's, as vs-kernel.sh's).
tls_key=NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:
if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	testbed_tls=() tls_arg=()
	((tls)) && testbed_tls=(--tls "$tls_key") tls_arg=(--tls)
	exec "$top/contrib/nvmefs-testbed" "${testbed_tls[@]}" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" "$a" "$b" --time "$time_s" --runs "$runs" --a-opts "$a_opts" --b-opts "$b_opts" \
		--transport "$transport" "${tls_arg[@]}" --rw "$rw"
fi
nqn=${NVMEFS_TEST_SUBNQNS%% *}
common=(-t "$transport")
if ((tls)); then
	(umask 077 && printf '%s\n' "$NVMEFS_TEST_TLS_KEY" >/tmp/ab-perf-tls.key)
	common+=(--tls-key /tmp/ab-perf-tls.key)
fi
run() {
	# shellcheck disable=SC2086 # the side's options are words on purpose
	"$1" perf "${common[@]}" $3 -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --nsid 1 --rw "$rw" \
		--bs 4k --qd "$2" --time "$time_s" --cpus 0 -o json 2>/dev/null |
		jq -r '"\(.iops | floor) IOPS, mean \(.lat_us.mean) us"' || echo "failed"
}
echo "$rw 4k over $transport$( ((tls)) && echo ", TLS 1.3 with a pre-shared key")"
for qd in 1 32; do
	for ((i = 1; i <= runs; i++)); do
		printf 'qd%-3s run %d  A %s\n' "$qd" "$i" "$(run "$a" "$qd" "$a_opts")"
		printf 'qd%-3s run %d  B %s\n' "$qd" "$i" "$(run "$b" "$qd" "$b_opts")"
	done
done
