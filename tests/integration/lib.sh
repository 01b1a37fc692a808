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

kernel_disconnect() {
	nvme disconnect -n "$1" >/dev/null || fail "kernel initiator: nvme disconnect from $1 failed"
}

kernel_disconnect_all() { nvme disconnect-all >/dev/null 2>&1 || true; }
