#!/usr/bin/env bash
# testbed: --ns-size 32M
# When the target fails I/O or drops the controller, I/O on the mounted file fails promptly with an
# error instead of hanging, and the mount can still be taken down:
# - the namespace disabled on the target: reads and writes through a descriptor open on it fail at
#   once; enabled again, they work again on the same mount;
# - the subsystem unlinked from the target's port (nvmet then deletes the controller), with
#   reconnecting off (-l 0): a reader busy on the file gets EIO within 15 s (keep-alive 5 s plus
#   margin), new reads and writes get EIO at once, stats shows controller_failed (a negative
#   errno) and the state "deleted", and fusermount3 -u ends the daemon.  (With reconnecting on,
#   the I/O is held instead: test-outage-*.sh.)
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-fail
enable=$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/1/enable
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
[[ -w $enable && -L $link ]] || fail "$enable or $link is missing: cannot reconfigure the target"
trap 'nvmefs_cleanup; echo 1 >"$enable" 2>/dev/null || true
      [[ -L $link ]] || ln -s "$NVMEFS_TEST_NVMET/subsystems/$nqn" "$link" 2>/dev/null || true
      rm -f /tmp/fail-*' EXIT
nvmefs_mount "$nqn" "$mnt" -k 5 -l 0
dd if=/dev/urandom of="$mnt/n1" bs=64K count=16 conv=notrunc status=none || fail "writing through $mnt/n1 failed"

# io_fails WHAT ERROR DD_ARGS...: the dd must fail within 15 s (killed after 60 s) with the error
# text ERROR (strerror's), as the kernel's block device fails it.
io_fails() {
	local what=$1 want=$2 out rc=0 start elapsed
	shift 2
	start=$(now_ms)
	out=$(timeout -s KILL 60 dd "$@" status=none 2>&1) || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc != 0)) || fail "$what succeeded"
	((rc != 137)) || fail "$what hung: killed after 60 s"
	((elapsed <= 15000)) || fail "$what took $elapsed ms to fail"
	log "$what failed after $elapsed ms: $out"
	[[ $out == *": $want" ]] || fail "$what failed with '$out', not $want"
}

log "the namespace disabled on the target"
# Held open: the target reports the namespace gone (an asynchronous event), after which n1 is no
# longer listed, but what is open on it stays reachable and must fail.
exec 8<>"$mnt/n1"
echo 0 >"$enable" || fail "disabling the namespace failed"
io_fails "a read of the disabled namespace" "Input/output error" if=/proc/self/fd/8 of=/dev/null bs=4k count=1 iflag=direct
io_fails "a write to the disabled namespace" "Input/output error" if=/dev/zero of=/proc/self/fd/8 bs=4k count=1 seek=100 conv=notrunc
io_fails "an unaligned write to the disabled namespace" "Input/output error" if=/dev/zero of=/proc/self/fd/8 bs=100 count=1 seek=77 conv=notrunc
errors=$(nvmefs_stats "$mnt" .total.errors)
((errors >= 3)) || fail "3 requests failed, the stats count $errors errors"
[[ $(nvmefs_stats "$mnt" .controller_failed) == 0 ]] || fail "a disabled namespace marked the controller failed"
echo 1 >"$enable" || fail "enabling the namespace again failed"
exec 8<&-
reads() { dd if="$mnt/n1" of=/dev/null bs=4k count=1 status=none 2>/dev/null; }
wait_until 10000 reads || fail "the namespace is enabled again, but reads through $mnt/n1 still fail"
dd if=/dev/urandom of="$mnt/n1" bs=4k count=4 seek=10 conv=notrunc status=none || fail "a write after re-enabling the namespace failed"

log "the subsystem unlinked from the port: the controller goes"
# A reader busy on the file when it happens.
python3 - "$mnt/n1" >/tmp/fail-reader 2>&1 <<'PY' &
import os, random, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
print("reading", flush=True)
while True:
    try:
        os.pread(fd, 4096, random.randrange(0, size - 4096))
    except OSError as e:
        print(f"error: {e.strerror}", flush=True)
        sys.exit(0)
PY
reader=$!
wait_until 10000 grep -q reading /tmp/fail-reader || true
sleep 0.5
kill -0 "$reader" 2>/dev/null || fail "the reader ended before the controller went: $(cat /tmp/fail-reader)"
rm "$link" || fail "rm $link failed"
removed=$(now_ms)
wait_gone "$reader" 60000 || { kill "$reader"; fail "a reader of $mnt/n1 still hangs 60 s after the controller went: $(cat /tmp/fail-reader)"; }
elapsed=$(($(now_ms) - removed))
err=$(sed -n 's/^error: //p' /tmp/fail-reader)
[[ -n $err ]] || fail "the reader ended without an error: $(cat /tmp/fail-reader)"
[[ $err == "Input/output error"* ]] || fail "the reader got '$err', not EIO"
log "the busy reader got '$err' ${elapsed} ms after the link went"
((elapsed <= 15000)) || fail "the busy reader took $elapsed ms to get an error (at most 15000: keep-alive 5 s + margin)"
io_fails "a new read after the controller went" "Input/output error" if="$mnt/n1" of=/dev/null bs=4k count=1 skip=5 iflag=direct
io_fails "a new write after the controller went" "Input/output error" if=/dev/zero of="$mnt/n1" bs=4k count=1 seek=200 conv=notrunc
rc=0
out=$(timeout 10 python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.fsync(fd)' "$mnt/n1" 2>&1) || rc=$?
((rc != 0)) || fail "fsync after the controller went succeeded"
((rc != 124)) || fail "fsync after the controller went hung: no answer within 10 s"
[[ $(tail -n 1 <<<"$out") == "OSError: [Errno 5] Input/output error" ]] ||
	fail "fsync after the controller went failed, but not with EIO: $out"
log "fsync: $(tail -n 1 <<<"$out")"
cf=$(nvmefs_stats "$mnt" .controller_failed)
[[ $cf =~ ^-[0-9]+$ ]] || fail "stats shows controller_failed '$cf', not the negative errno of the failure: $(jq -c 'del(.queues)' "$mnt/stats")"
state=$(nvmefs_stats "$mnt" .controller.state)
[[ $state == deleted ]] || fail "stats shows the controller $state, not deleted"
log "stats: controller_failed $cf, state $state"
stat "$mnt/n1" >/dev/null || fail "stat of $mnt/n1 fails once the controller is gone: the mount should stay browsable"

log "unmount"
start=$(now_ms)
nvmefs_unmount "$mnt"
log "the daemon exited $(($(now_ms) - start)) ms after fusermount3 -u"
echo "PASS: a disabled namespace and a lost controller fail I/O promptly; the mount comes down cleanly"
