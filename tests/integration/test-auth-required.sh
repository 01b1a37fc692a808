#!/usr/bin/env bash
# testbed: --allow-host nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a1 --dhchap-key DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa:
# A subsystem that requires DH-HMAC-CHAP (the testbed's --dhchap-key, a SHA-256 key that
# 'nvme gen-dhchap-key -m 1' made for the host NQN): the kernel initiator, the reference, is
# refused without the secret and gets in with it; nvmefs, given no secret, fails at once with one
# line that names the cause and the option that fixes it, and leaves the subsystem as usable as
# it found it.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'kernel_disconnect_all' EXIT
nqn=${subnqns[0]}
host=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a1
key=DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa:
kconnect=(nvme connect -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --hostnqn "$host")

log "the kernel initiator without the secret is refused"
if out=$("${kconnect[@]}" 2>&1); then
	kernel_disconnect_all
	fail "the kernel initiator connected to $nqn without a DH-HMAC-CHAP secret: the target does not require one ($out)"
fi

expect_failure "authentication required, no secret" \
	"subsystem $nqn at .* requires in-band authentication.*--dhchap-secret" 6000 -- \
	"$NVMEFS" identify -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -q "$host" --timeout 2000

log "the kernel initiator with the secret gets in, after nvmefs's attempt"
dev=$(kernel_connect "$nqn" 1 --hostnqn "$host" --dhchap-secret "$key")
blockdev --getsize64 "$dev" >/dev/null || fail "the kernel initiator's $dev does not answer"
check_run_transport
echo "PASS: authentication required: the kernel initiator needs the secret; nvmefs without one says so in one line"
