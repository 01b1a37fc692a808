#!/usr/bin/env bash
# testbed: --ns-size 64M
# The outage timeouts, through the mounted file (given as options and as fstab keys):
# - ctrl_loss_tmo (-c 1 -o ctrl_loss_tmo=5): with the subsystem unlinked from the port for good,
#   I/O held since the failure fails with EIO no sooner than 5 s and no later than ctrl_loss_tmo
#   plus one reconnect delay (and some slack for the emulated guest); the controller is deleted
#   and makes no more attempts, new I/O fails at once, the daemon stays up and unmounts cleanly.
# - fast_io_fail_tmo (-o reconnect_delay=1 --fast_io_fail_tmo 2): held I/O fails with EIO about
#   2 s after the failure while reconnecting goes on, new I/O fails at once; once the port is
#   linked back the controller is live again and I/O works, on the data written before.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-tmo
link=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true; rm -f /tmp/tmo-*' EXIT
cd /tmp
# The clock starts before the unlink, which the failure cannot precede: the 100 ms of tolerance
# below is for the library's monotonic clock against date's. The slack above is for the emulated
# guest: the failure is seen up to ~1 s after the unlink, and a busy guest schedules late.
slack_ms=2500

log "ctrl_loss_tmo 5 s, reconnect delay 1 s: the port unlinked for good"
nvmefs_mount "$nqn" "$mnt" -c 1 -o ctrl_loss_tmo=5
pid=$(nvmefs_pid "$mnt")
io_loop_start loss "$mnt/n1" read
sleep 1
unlinked=$(now_ms)
port_unlink "$nqn"
io_loop_error loss 60
err=$io_err elapsed=$((io_err_at - unlinked))
log "the busy reader got '$err' $elapsed ms after the unlink; $(jq -c '.controller' "$mnt/stats")"
[[ $err == "Input/output error" ]] || fail "the busy reader got '$err', not EIO"
((elapsed >= 5000 - 100)) || fail "the held read failed $elapsed ms after the unlink, before ctrl_loss_tmo (5 s)"
((elapsed <= 5000 + 1000 + slack_ms)) ||
	fail "the held read failed $elapsed ms after the unlink: more than ctrl_loss_tmo + one reconnect delay (6 s) + ${slack_ms} ms"
[[ $(nvmefs_ctrl_stat "$mnt" state) == deleted ]] || fail "the controller is not deleted: $(jq -c '.controller' "$mnt/stats")"
io_fails_eio "a new read of the deleted controller" 2000 if="$mnt/n1" of=/dev/null bs=4k count=1 skip=7 iflag=direct
io_fails_eio "a new write to the deleted controller" 2000 if=/dev/zero of="$mnt/n1" bs=4k count=1 seek=9 oflag=direct conv=notrunc
attempts=$(nvmefs_ctrl_stat "$mnt" attempts)
port_link "$nqn"
sleep 3
[[ $(nvmefs_ctrl_stat "$mnt" state) == deleted && $(nvmefs_ctrl_stat "$mnt" attempts) == "$attempts" ]] ||
	fail "a deleted controller came back or tried again once the port was back: $(jq -c '.controller' "$mnt/stats")"
kill -0 "$pid" 2>/dev/null || fail "the daemon (PID $pid) exited when its controller was deleted"
stat "$mnt/n1" >/dev/null || fail "stat of $mnt/n1 fails once the controller is deleted: the mount should stay"
start=$(now_ms)
nvmefs_unmount "$mnt"
log "unmounted; the daemon exited $(($(now_ms) - start)) ms after fusermount3 -u"

log "fast_io_fail_tmo 2 s, reconnect delay 1 s"
nvmefs_mount "$nqn" "$mnt" -o reconnect_delay=1 --fast_io_fail_tmo 2
head -c 1M /dev/urandom >/tmp/tmo-data
# At 48 MiB, past the 32 MiB the writer below writes to.
dd if=/tmp/tmo-data of="$mnt/n1" bs=64k seek=768 oflag=direct conv=notrunc status=none || fail "writing 1 MiB through $mnt/n1 failed"
io_loop_start fast "$mnt/n1" write
sleep 1
unlinked=$(now_ms)
port_unlink "$nqn"
io_loop_error fast 60
err=$io_err elapsed=$((io_err_at - unlinked))
log "the busy writer got '$err' $elapsed ms after the unlink; $(jq -c '.controller' "$mnt/stats")"
[[ $err == "Input/output error" ]] || fail "the busy writer got '$err', not EIO"
((elapsed >= 2000 - 100)) || fail "the held write failed $elapsed ms after the unlink, before fast_io_fail_tmo (2 s)"
((elapsed <= 2000 + slack_ms)) || fail "the held write failed $elapsed ms after the unlink, more than fast_io_fail_tmo (2 s) + ${slack_ms} ms"
state=$(nvmefs_ctrl_stat "$mnt" state)
[[ $state == resetting || $state == connecting ]] || fail "after fast_io_fail_tmo the controller is '$state', not reconnecting"
[[ $(nvmefs_ctrl_stat "$mnt" io_failing) == 1 ]] || fail "stats do not show io_failing: $(jq -c '.controller' "$mnt/stats")"
io_fails_eio "a new read while I/O fails fast" 2000 if="$mnt/n1" of=/dev/null bs=4k count=1 skip=3 iflag=direct
attempts=$(nvmefs_ctrl_stat "$mnt" attempts)
attempted() { ((attempts < $(nvmefs_ctrl_stat "$mnt" attempts))); }
wait_until 2500 attempted ||
	fail "no reconnect attempt in 2.5 s after fast_io_fail_tmo (reconnect delay 1 s): $(jq -c '.controller' "$mnt/stats")"
port_link "$nqn"
wait_ctrl_state "$mnt" '^live$' 20000
log "live again: $(jq -c '.controller' "$mnt/stats")"
[[ $(nvmefs_ctrl_stat "$mnt" io_failing) == 0 ]] || fail "I/O still fails fast once live: $(jq -c '.controller' "$mnt/stats")"
dd if="$mnt/n1" of=/tmp/tmo-back bs=64k skip=768 count=16 iflag=direct status=none || fail "reading through $mnt/n1 after the reconnect failed"
cmp -s /tmp/tmo-data /tmp/tmo-back || fail "the 1 MiB written before the outage reads back different after it"
dd if=/dev/urandom of="$mnt/n1" bs=4k count=16 seek=1000 oflag=direct conv=notrunc status=none ||
	fail "a write after the reconnect failed"
((reconnects = $(nvmefs_ctrl_stat "$mnt" reconnects))) || fail "the mount's stats count no reconnect: $(jq -c '.controller' "$mnt/stats")"
nvmefs_unmount "$mnt"
echo "PASS: ctrl_loss_tmo fails held I/O with EIO after 5-6 s and deletes the controller, the mount stays and unmounts; fast_io_fail_tmo fails it after ~2 s while reconnecting goes on, and I/O works again after the reconnect"
