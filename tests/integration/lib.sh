# Helpers for tests/integration/test-*.sh, sourced inside the testbed VM.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
log() { echo "# $*"; }

[[ ${NVMEFS_TESTBED:-} == 1 ]] || skip "this test runs inside contrib/nvmefs-testbed (make check does that)"

# Every subsystem NQN the testbed configured, as an array.
read -r -a subnqns <<<"$NVMEFS_TEST_SUBNQNS"

# Connects the kernel initiator to SUBNQN and prints the block device of namespace NSID (default 1).
kernel_connect() {
	local nqn=$1 nsid=${2:-1} sys i
	nvme connect -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" >/dev/null ||
		fail "kernel initiator: nvme connect to $nqn failed"
	# The namespace's block device appears asynchronously after connect returns.
	for ((i = 0; i < 100; i++)); do
		for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
			[[ -e $sys/subsysnqn && $(<"$sys/subsysnqn") == "$nqn" ]] || continue
			local dev
			for dev in "$sys"/nvme*n*; do
				[[ -e $dev/nsid && $(<"$dev/nsid") == "$nsid" && -b /dev/${dev##*/} ]] || continue
				echo "/dev/${dev##*/}"
				return 0
			done
		done
		sleep 0.1
	done
	fail "kernel initiator: no block device for namespace $nsid of $nqn after connect"
}

# The block device of namespace NSID of an already connected SUBNQN.
kernel_connect_ns() {
	local nqn=$1 nsid=$2 sys dev
	for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
		[[ -e $sys/subsysnqn && $(<"$sys/subsysnqn") == "$nqn" ]] || continue
		for dev in "$sys"/nvme*n*; do
			[[ -e $dev/nsid && $(<"$dev/nsid") == "$nsid" ]] && { echo "/dev/${dev##*/}"; return 0; }
		done
	done
	fail "kernel initiator: $nqn has no namespace $nsid"
}

kernel_disconnect() {
	nvme disconnect -n "$1" >/dev/null || fail "kernel initiator: nvme disconnect from $1 failed"
}

kernel_disconnect_all() { nvme disconnect-all >/dev/null 2>&1 || true; }

# The nvmefs command of the build tree under test.
NVMEFS=${top_builddir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/src/cli/nvmefs
require_nvmefs() { [[ -x $NVMEFS ]] || fail "$NVMEFS is not built: run make first"; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# expect_failure NAME REGEX MAX_MS -- COMMAND...: COMMAND must fail within MAX_MS with exactly one
# line of output (the error) matching REGEX.
expect_failure() {
	local name=$1 re=$2 max_ms=$3 out rc=0 start elapsed
	shift 4
	start=$(now_ms)
	out=$("$@" 2>&1) || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc != 0)) || fail "$name: '$*' succeeded; it should have failed. Output: $out"
	[[ $(wc -l <<<"$out") == 1 ]] || fail "$name: expected one line of error, got: $out"
	[[ $out =~ $re ]] || fail "$name: the message does not match /$re/: $out"
	((elapsed <= max_ms)) || fail "$name: failing took $elapsed ms, more than $max_ms ms"
	log "$name: exit $rc after $elapsed ms: $out"
}
