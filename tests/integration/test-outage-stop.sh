#!/usr/bin/env bash
# testbed: --ns-size 64M
# Stopping a mount while its target is unreachable ends in bounded time, as 'nvme disconnect' does
# while reconnecting (default ctrl_loss_tmo, 600 s):
# - with the subsystem unlinked from the port and fio's I/O held, SIGTERM makes the daemon fail
#   the held I/O with EIO, unmount and exit within 15 s;
# - with an idle mount whose link goes down just before SIGTERM, the controller fails during the
#   final flush (its command finds the link down), or just before it: either way the daemon says
#   the flush failed, and exits within 15 s too;
# - with the link down long enough for the controller to notice before SIGTERM, the flush cannot
#   be sent at all: the daemon says so as well (one CI run lost that line, the race above going
#   this way).
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-stop
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
netdev=$(rxe_netdev)
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true; ip link set "$netdev" up 2>/dev/null || true' EXIT
cd /tmp

nvmefs_mount "$nqn" "$mnt"
pid=$(nvmefs_pid "$mnt")
fio_load_start held "$mnt/n1" 120
wait_writes "$mnt" 100 held
port_unlink "$nqn"
wait_ctrl_state "$mnt" '^(resetting|connecting)$' 15000
log "the controller is $(nvmefs_ctrl_stat "$mnt" state); fio's I/O is held"
load_running held || fail "fio ended when the outage began: $(cat /tmp/fio-held.err)"
start=$(now_ms)
kill -TERM "$pid"
wait_gone "$pid" 15000 ||
	fail "the daemon (PID $pid) still runs 15 s after SIGTERM during the outage: $(jq -c '.controller' "$mnt/stats" 2>&1)"
log "the daemon exited $(($(now_ms) - start)) ms after SIGTERM"
wait_unmounted "$mnt" 2000 || fail "the daemon exited but $mnt is still mounted"
load_wait held 30 && fail "fio ended without an error although the mount went away under its held I/O"
grep -q "Input/output error" /tmp/fio-held.err ||
	fail "fio's held I/O did not fail with EIO: $(tail -c 500 /tmp/fio-held.err)"
port_link "$nqn"

# stop_idle_link_down WAIT: an idle mount with data written, the link down, then (with WAIT=1
# once the controller has noticed) SIGTERM: the daemon exits and unmounts within 15 s, and says
# the final flush failed, with a reason.
stop_idle_link_down() {
	local wait=$1 start
	nvmefs_mount "$nqn" "$mnt"
	pid=$(nvmefs_pid "$mnt")
	dd if=/dev/urandom of="$mnt/n1" bs=4k count=16 oflag=direct conv=notrunc status=none ||
		fail "writing through $mnt/n1 failed"
	link_down
	if ((wait)); then
		wait_ctrl_state "$mnt" '^(resetting|connecting)$' 30000
		log "the controller is $(nvmefs_ctrl_stat "$mnt" state)"
	fi
	start=$(now_ms)
	kill -TERM "$pid"
	wait_gone "$pid" 15000 || fail "the daemon (PID $pid) still runs 15 s after SIGTERM with the link down"
	log "the daemon exited $(($(now_ms) - start)) ms after SIGTERM"
	wait_unmounted "$mnt" 2000 || fail "the daemon exited but $mnt is still mounted"
	grep -q "nvmefs\[$pid\]: flushing n1 before unmounting failed" "$syslog_file" ||
		fail "the daemon did not report the final flush failing: $(grep "nvmefs\[$pid\]" "$syslog_file" | tail -n 5)"
	! grep "nvmefs\[$pid\]" "$syslog_file" | grep -q '(no error)' ||
		fail "a line of the daemon gives no reason: $(grep "nvmefs\[$pid\]" "$syslog_file" | tail -n 2)"
	link_restore
}

log "an idle mount, the link down, SIGTERM"
stop_idle_link_down 0
log "an idle mount, the link down until the controller notices, SIGTERM"
stop_idle_link_down 1
echo "PASS: SIGTERM during an outage, with I/O held, in the final flush or before it: the daemon said the flush failed, exited and unmounted within 15 s"
