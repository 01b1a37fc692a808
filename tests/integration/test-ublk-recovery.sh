#!/usr/bin/env bash
# testbed: --ns-size 64M --backing loop
# nvmefs ublk add --recovery (issue #37 item 1; UBLK_F_USER_RECOVERY with REISSUE): a daemon killed
# with SIGKILL under fio's verified writes leaves its block device in place, quiesced, its I/O
# waiting (ublk list says so, from the kernel's GET_DEV_INFO); ublk recover starts a daemon that
# takes the device over, at the size its namespace grew to meanwhile (6.16 and later; older kernels
# say in one line that they keep the size), and fio then ends with every block verified and no
# error (the I/O in flight at the kill reissued: none lost); the new daemon is listed, is killed
# and recovered in turn (-o json), with its PID taken by another process meanwhile, and ublk del
# removes the device. A device whose daemon died quiesced and is not recovered is removed by ublk
# del, its held I/O failing with EIO, and the dead daemon's statistics file with it. Bad input:
# recover of a device nvmefs does not serve, and of one served by a live daemon, each gets one
# line. (A daemon killed without --recovery leaves no device: test-ublk.sh.)
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn=${subnqns[0]}
pidfile=/tmp/nvmefs-ublk.pid
cleanup() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || pid=
	load_cleanup
	[[ -z ${squatter:-} ]] || kill "$squatter" 2>/dev/null || true
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && { wait_gone "$pid" 10000 || kill -KILL "$pid"; }
	for d in /dev/ublkc*; do [[ -e $d ]] && "$NVMEFS" ublk del "${d#/dev/ublkc}" >/dev/null 2>&1; done
	# A kept VM (the testbed's pool) takes no more tests while the kernel holds a ublk device.
	! compgen -G '/dev/ublk[bc]*' >/dev/null || testbed_retire
}
trap cleanup EXIT
syslog_start
cd /tmp
modprobe ublk_drv || fail "modprobe ublk_drv failed: this kernel has no ublk driver"
connect=(-t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID")

expect_failure "recover of no device" "ublk recover: /dev/ublkb999 is not a device nvmefs serves" 10000 1 -- \
	"$NVMEFS" ublk recover /dev/ublkb999

timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" --recovery --pidfile "$pidfile" >/tmp/ublk-add.out 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add --recovery failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(head -n 1 /tmp/ublk-add.out) pid=$(cat "$pidfile")
[[ -b $dev ]] || fail "ublk add --recovery printed $dev, which is not a block device"
expect_failure "recover of a served device" "ublk recover: $dev is served by a live daemon \\(PID $pid\\)" 10000 1 -- \
	"$NVMEFS" ublk recover "$dev"

# SIGKILL under verified writes: the device stays, quiesced, and fio's I/O waits.
fio_load_start recover "$dev" 20
sleep 3
load_running recover || fail "fio ended before the daemon was killed: $(cat /tmp/fio-recover.err)"
# Killed with requests in flight (the block layer's count), which the new daemon must redo.
inflight() { awk '{ print $1 + $2 }' "/sys/block/${dev#/dev/}/inflight"; }
busy() { (($(inflight) > 0)); }
wait_until 5000 busy || fail "$dev has no request in flight under fio"
kill -KILL "$pid"
wait_gone "$pid" 10000 || fail "the daemon (PID $pid) still runs 10 s after SIGKILL"
quiesced() { "$NVMEFS" ublk list | grep -q "^$dev .* $pid  *quiesced  *$nqn\$"; }
wait_until 10000 quiesced || fail "ublk list does not show $dev quiesced 10 s after its daemon was killed: $("$NVMEFS" ublk list)"
[[ -b $dev ]] || fail "$dev went when its daemon (added with --recovery) was killed"
"$NVMEFS" ublk list -o json | jq -e --arg d "$dev" '.Devices[] | select(.DevicePath == $d) | .State == "quiesced"' >/dev/null ||
	fail "ublk list -o json does not say $dev is quiesced: $("$NVMEFS" ublk list -o json)"
# Meanwhile the namespace grows on the target (its loop device, then nvmet revalidates it).
ns=$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/1
grown=
if [[ -w $ns/revalidate_size ]]; then
	loopdev=$(cat "$ns/device_path")
	truncate -s 96M "$(losetup -nO BACK-FILE "$loopdev")" && losetup -c "$loopdev" && echo 1 >"$ns/revalidate_size" ||
		fail "growing namespace 1 of $nqn to 96 MiB failed"
	grown=$((96 << 20))
fi
sleep 2
load_running recover || fail "fio ended while $dev had no daemon: its I/O should wait: $(tail -c 1500 /tmp/fio-recover.err)"
log "killed under fio: $dev stays, quiesced; fio's I/O waits${grown:+; its namespace grown to $grown bytes}"

# ublk recover: a new daemon takes the device over, and fio's I/O goes on with no error.
timeout 60 "$NVMEFS" ublk recover "$dev" --pidfile "$pidfile" >/tmp/ublk-recover.out 2>/tmp/ublk-recover.err ||
	fail "nvmefs ublk recover $dev failed (exit $?): $(cat /tmp/ublk-recover.err)"
[[ $(head -n 1 /tmp/ublk-recover.out) == "$dev" ]] || fail "ublk recover printed '$(cat /tmp/ublk-recover.out)', not $dev"
newpid=$(cat "$pidfile")
[[ $newpid != "$pid" ]] && kill -0 "$newpid" || fail "ublk recover wrote PID $newpid to its pidfile: not a new daemon that runs"
"$NVMEFS" ublk list | grep -q "^$dev .* $newpid  *live  *$nqn\$" || fail "after ublk recover, ublk list does not show $dev served by PID $newpid: $("$NVMEFS" ublk list)"
check_own_transport "ublk recover of $dev" "$newpid"
# The daemon that takes over finds the size the namespace has now: 6.16 and later resize the device,
# older kernels keep its size, and the daemon says so in one line.
if [[ -n $grown ]]; then
	kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
	if ((kmaj > 6 || kmin >= 16)); then
		[[ $(blockdev --getsize64 "$dev") == "$grown" ]] ||
			fail "$dev has $(blockdev --getsize64 "$dev") bytes once taken over, its namespace $grown"
	elif [[ -s $syslog_file ]]; then
		said() { grep -q "ublkb${dev#/dev/ublkb} keeps .*: this kernel cannot resize a ublk device" "$syslog_file"; }
		wait_until 5000 said || fail "the daemon that took $dev over did not say it cannot follow its namespace's new size"
	fi
	log "taken over at $(blockdev --getsize64 "$dev") bytes, the namespace $grown"
fi
fio_load_check recover 120
log "recovered by PID $newpid: $(jq -c '.jobs[0] | {write: .write.io_bytes, read: .read.io_bytes, error}' /tmp/fio-recover.json)"
# The daemon that took over records the options again: killed in turn, it is recovered too.
kill -KILL "$newpid"
wait_gone "$newpid" 10000 || fail "the recovering daemon (PID $newpid) still runs 10 s after SIGKILL"
pid=$newpid
wait_until 10000 quiesced || fail "ublk list does not show $dev quiesced after its recovering daemon was killed: $("$NVMEFS" ublk list)"
# Its PID taken by another process meanwhile, as a busy machine reuses PIDs: the kernel, which
# quiesced the device, says its daemon is gone, whoever has the PID now.
for _ in $(seq 50); do
	echo $((pid - 1)) >/proc/sys/kernel/ns_last_pid
	sleep 300 &
	squatter=$!
	[[ $squatter == "$pid" ]] && break
	kill "$squatter"
	squatter=
done
[[ -n $squatter ]] || fail "could not give the dead daemon's PID $pid to another process in 50 tries"
quiesced || fail "ublk list does not show $dev quiesced once another process has its dead daemon's PID $pid: $("$NVMEFS" ublk list)"
timeout 60 "$NVMEFS" ublk recover "$dev" -o json --pidfile "$pidfile" >/tmp/ublk-recover.json 2>/tmp/ublk-recover.err ||
	fail "nvmefs ublk recover $dev, a second time, failed (exit $?): $(cat /tmp/ublk-recover.err)"
kill "$squatter"
squatter=
jq -e --arg d "$dev" '.Devices[0].DevicePath == $d' /tmp/ublk-recover.json >/dev/null ||
	fail "ublk recover -o json printed no $dev: $(cat /tmp/ublk-recover.json)"
newpid=$(cat "$pidfile")
"$NVMEFS" ublk list | grep -q "^$dev .* $newpid  *live  *$nqn\$" || fail "after a second ublk recover, ublk list does not show $dev served by PID $newpid: $("$NVMEFS" ublk list)"
cmp -n 1M <(dd if="$dev" bs=1M count=1 iflag=direct status=none) <(dd if=/dev/zero bs=1M count=1 status=none) >/dev/null &&
	fail "the first MiB of $dev reads back as zeros after fio wrote it: the second recover serves another device"
timeout 60 "$NVMEFS" ublk del "$dev" || fail "nvmefs ublk del $dev after its recovery failed"
wait_gone "$newpid" 10000 || fail "the recovering daemon (PID $newpid) still runs 10 s after ublk del"
[[ ! -e $dev ]] || fail "$dev is still there after ublk del"

# Killed and not recovered: ublk del removes the quiesced device, and the I/O it held fails.
timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" --recovery --pidfile "$pidfile" >/tmp/ublk-add.out 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add --recovery failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(head -n 1 /tmp/ublk-add.out) pid=$(cat "$pidfile")
kill -KILL "$pid"
wait_gone "$pid" 10000 || fail "the daemon (PID $pid) still runs 10 s after SIGKILL"
wait_until 10000 quiesced || fail "ublk list does not show $dev quiesced 10 s after its daemon was killed: $("$NVMEFS" ublk list)"
dd if=/dev/urandom of="$dev" bs=4k count=1 oflag=direct 2>/tmp/dd-held.err &
dd_pid=$!
sleep 2
kill -0 "$dd_pid" 2>/dev/null || fail "a write to the quiesced $dev ended, not held: $(cat /tmp/dd-held.err)"
timeout 20 "$NVMEFS" ublk del "$dev" >/tmp/ublk-del.out 2>&1 || fail "ublk del of the quiesced $dev failed: $(cat /tmp/ublk-del.out)"
grep -q "daemon (PID $pid) had died; deleted" /tmp/ublk-del.out || fail "ublk del of the quiesced $dev did not say its daemon had died: $(cat /tmp/ublk-del.out)"
wait_gone "$dd_pid" 5000 || fail "the write held by the quiesced $dev still waits 5 s after ublk del"
rc=0
wait "$dd_pid" || rc=$?
((rc != 0)) || fail "the write held by the quiesced $dev succeeded after ublk del: it had no daemon"
[[ ! -e $dev && ! -e /dev/ublkc${dev#/dev/ublkb} ]] || fail "$dev or its char device is still there after ublk del"
# The dead daemon's statistics go with its last device: ublk stats has nothing more to read there.
[[ ! -e /run/nvmefs/ublk/$pid.stats ]] || fail "ublk del of the dead daemon's last device left /run/nvmefs/ublk/$pid.stats behind"
[[ $("$NVMEFS" ublk list | wc -l) == 2 ]] || fail "ublk list still lists devices: $("$NVMEFS" ublk list)"
rm -f "$pidfile"
check_run_transport
echo "PASS ($trtype): ublk add --recovery: a daemon killed under fio verify leaves its device quiesced, ublk recover takes it over, fio verifies with no error; recovered again once its new daemon is killed, its PID taken by another process meanwhile; an unrecovered one deleted, its held write failing, its dead daemon's stats file removed"
