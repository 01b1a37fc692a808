#!/usr/bin/env bash
# testbed: --ns-size 32M
# The namespace behind NSID 1 replaced during an outage by another one (another backing device,
# another NGUID and UUID), with writes held: after the reconnect the controller sees the changed
# identity, and the held writes, and every later read or write through a descriptor opened before,
# fail with EIO (a new open may find the file gone, as the kernel initiator drops the block device).
# Not one byte reaches the new backing device (filled with a known pattern first, compared after).
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-nsrep
sub=$NVMEFS_TEST_NVMET/subsystems/$nqn
ns=$sub/namespaces/1
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
[[ -d $ns && -L $link ]] || fail "$ns or $link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; ns_replace_undo 2>/dev/null; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true; rm -f /tmp/nsrep-*' EXIT
cd /tmp

ns_save "$ns"
old_dev=$(<"$ns/device_path")
[[ -b $old_dev ]] || fail "the backing of namespace 1, $old_dev, is not a block device"
size=$(blockdev --getsize64 "$old_dev")
bs=$(blockdev --getss "$old_dev")
# The replacement: a null_blk device of the same size and block size, so that only the identity
# tells them apart, filled with a pattern.
new_dev=$(nullb_create nullb_replacement "$size" "$bs")
head -c "$size" /dev/urandom >/tmp/nsrep-pattern
dd if=/tmp/nsrep-pattern of="$new_dev" bs=1M oflag=direct status=none || fail "filling $new_dev failed"
# An NGUID of our own on the original, for the identity check to compare as well as the UUID.
echo 0 >"$ns/enable"
random_nguid >"$ns/device_nguid"
echo 1 >"$ns/enable"

nvmefs_mount "$nqn" "$mnt" -c 1
old_nguid=$(jq -r '.namespaces[0].nguid' "$mnt/info")
dd if=/dev/urandom of="$mnt/n1" bs=64k count=16 oflag=direct conv=notrunc status=none || fail "writing through $mnt/n1 failed"

log "writes held by an outage, the namespace replaced meanwhile"
# Descriptors opened before the outage, used only after it: a read, a write, an unaligned write.
python3 - "$mnt/n1" /tmp/nsrep-go >/tmp/nsrep-open.out 2>&1 <<'PY' &
import os, sys, time
path, go = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR)
print("open", flush=True)
while not os.path.exists(go):
    time.sleep(0.05)
for what, op in (("read", lambda: os.pread(fd, 4096, 0)),
                 ("write", lambda: os.pwrite(fd, b"x" * 4096, 12288)),
                 ("unaligned write", lambda: os.pwrite(fd, b"y" * 100, 3300))):
    t = time.monotonic()
    try:
        op()
        print(f"{what}: succeeded", flush=True)
    except OSError as e:
        print(f"{what}: {e.strerror} after {int((time.monotonic() - t) * 1000)} ms", flush=True)
PY
load_pids[open]=$!
wait_until 10000 grep -q open /tmp/nsrep-open.out || fail "opening $mnt/n1 failed: $(cat /tmp/nsrep-open.out)"
io_loop_start writer "$mnt/n1" write
fio_load_start writes "$mnt/n1" 60 --verify=0 --verify_backlog=0 --do_verify=0
sleep 2
load_running writes || fail "fio ended before the outage: $(cat /tmp/fio-writes.err)"
port_unlink "$nqn"
wait_ctrl_state "$mnt" '^(resetting|connecting)$' 15000
new_nguid=$(ns_replace "$nqn" 1 "$new_dev")
log "namespace 1 is now $new_dev, NGUID $new_nguid (was ${old_nguid})"
sleep 1
port_link "$nqn"
start=$(now_ms)

io_loop_error writer 30
log "the held writer got '$io_err' $((io_err_at - start)) ms after the port was back"
[[ $io_err == "Input/output error" ]] || fail "the writer got '$io_err', not EIO"
rc=0
load_wait writes 60 || rc=$?
((rc != 0)) || fail "fio writing across the replacement succeeded: $(jq -c '.jobs[0] | {error, write: .write.io_bytes}' /tmp/fio-writes.json)"
[[ $(jq -r '.jobs[0].error' /tmp/fio-writes.json) == 5 ]] ||
	fail "fio writing across the replacement failed with error $(jq -r '.jobs[0].error' /tmp/fio-writes.json), not EIO (5): $(tail -c 500 /tmp/fio-writes.err)"
log "fio: $(grep -m 1 -o 'err=.*' /tmp/fio-writes.err || tail -n 1 /tmp/fio-writes.err)"
log "controller: $(jq -c '.controller' "$mnt/stats")"
: >/tmp/nsrep-go
load_wait open 30 || fail "I/O through a descriptor opened before the replacement: $(cat /tmp/nsrep-open.out)"
[[ $(grep -c ': ' /tmp/nsrep-open.out) == 3 ]] || fail "the I/O through a descriptor opened before did not run: $(cat /tmp/nsrep-open.out)"
while read -r line; do
	[[ $line == open ]] && continue
	log "through a descriptor opened before: $line"
	[[ $line == *": Input/output error after "* ]] ||
		fail "I/O through a descriptor opened before the replacement did not fail with EIO: $line"
	ms=${line##* after } ms=${ms% ms}
	((ms <= 2000)) || fail "I/O through a descriptor opened before the replacement took $ms ms to fail"
done </tmp/nsrep-open.out
# A new open: the file may no longer be listed (as the kernel initiator drops the block device of
# a namespace that changed identity), or its I/O fails with EIO; it must not reach the new backing.
out=$(timeout -s KILL 60 python3 - "$mnt/n1" 2>&1 <<'PY'
import os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR)
except OSError as e:
    sys.exit(f"open: {e.strerror}")
try:
    os.pwrite(fd, b"z" * 4096, 20480)
except OSError as e:
    sys.exit(f"write: {e.strerror}")
print("write: succeeded")
PY
) || true
[[ $out == "open: No such file or directory" || $out == "write: Input/output error" ]] ||
	fail "a new open and write of $mnt/n1 after the replacement did not fail with ENOENT or EIO: $out"
log "a new open and write of n1: $out; the mount lists: $(ls "$mnt" | tr '\n' ' ')"
nvmefs_unmount "$mnt"

log "the new backing holds exactly its pattern"
dd if="$new_dev" of=/tmp/nsrep-after bs=1M iflag=direct status=none || fail "reading $new_dev back failed"
if ! cmp /tmp/nsrep-pattern /tmp/nsrep-after >/tmp/nsrep-cmp 2>&1; then
	fail "bytes were written to the replacement namespace: $(cmp -l /tmp/nsrep-pattern /tmp/nsrep-after | wc -l) bytes differ, the first: $(head -n 1 /tmp/nsrep-cmp)"
fi
echo "PASS: a namespace replaced during an outage: held and new I/O fail with EIO, and not one byte reached the new backing"
