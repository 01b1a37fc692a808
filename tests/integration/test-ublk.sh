#!/usr/bin/env bash
# testbed: --ns-size 128M
# nvmefs ublk (issue #37 item 1): an NQN with no namespace, more queues than CPUs and a queue that
# cannot be mapped (a preloaded mmap refuses it) are each refused with one line, no device left;
# ublk add prints /dev/ublkbN (JSON with -o json) once it exists, of the namespace's size; fio
# writes at random through it and verifies every block (crc32c; 4 KiB at depth 1, sizes mixed from
# 512 bytes to 1 MiB at depth 64); write-zeroes reads back zeros and a discard succeeds; mkfs.ext4,
# a file tree, e2fsck clean; ublk list shows the device; ublk del removes it, the daemon ends, its
# pidfile goes; and the kernel initiator then reads the same bytes. The idle daemon takes no CPU.
# The subsystem unlinked from the target's port for 8 s under fio verify: the device stays, its I/O
# waits and completes after the reconnect, with no error. ublk del while a write is held by such an
# outage gives the outage up, as 'nvme disconnect' does: it returns within seconds, the write fails
# with EIO, and no device is left; so does one while writes are held by the multipath head for an
# inaccessible ANA group. Neither logs an error (the outage given up is what del asked for); a
# controller lost for good while serving (past ctrl_loss_tmo) fails I/O, keeps the device until del,
# and the daemon's last line says so. Bad input served right: namespaces of 4 KiB blocks and of a
# size that is no multiple of 4 KiB have the kernel initiator's block size and size; the latter
# grown on the target, its device follows (6.16 and later: its new end written and read back), or
# the daemon says in one line that this kernel cannot resize a ublk device. One of those two
# devices deleted during an outage holding a write on each goes within seconds, its write failing
# with EIO, while the other and its held write stay, the write done once the target is back; its
# namespace then removed on the target, ublk list says it is gone and its I/O fails at once. A daemon
# killed with SIGKILL leaves no block device, and ublk del removes what the kernel kept of it.
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn=${subnqns[0]}
empty=nqn.2026-11.io.nvmefs.testbed:ublk-empty
pidfile=/tmp/nvmefs-ublk.pid
link=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/subsystems/$nqn
ana=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/ana_groups/1/ana_state
cleanup() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || pid=
	load_cleanup
	[[ -L $link ]] || port_link "$nqn" 2>/dev/null || true
	echo optimized >"$ana" 2>/dev/null || true
	mountpoint -q /tmp/ublk-fs 2>/dev/null && umount -l /tmp/ublk-fs
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && { wait_gone "$pid" 10000 || kill -KILL "$pid"; }
	kernel_disconnect_all
	# The test runs in a kept VM (the testbed's pool): a ublk device the kernel still holds is
	# what the guest's clean-up between tests does not know of, so the VM then takes no more.
	! compgen -G '/dev/ublk[bc]*' >/dev/null || testbed_retire
}
trap cleanup EXIT
syslog_start
schemas=$(cd "$(dirname "$0")/../../doc/json" && pwd)
# fio writes state files in the working directory, the shared source tree: work in /tmp.
cd /tmp
modprobe ublk_drv || fail "modprobe ublk_drv failed: this kernel has no ublk driver"
connect=(-t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID")

# Bad input: a subsystem with no namespace.
mkdir "$NVMEFS_TEST_NVMET/subsystems/$empty"
echo 1 >"$NVMEFS_TEST_NVMET/subsystems/$empty/attr_allow_any_host"
port_link "$empty"
expect_failure "no namespace" "ublk add: $empty has no active namespace .*: attach one" 20000 1 -- \
	"$NVMEFS" ublk add "${connect[@]}" -n "$empty" -f
# Bad input: more queues than the kernel gives a device (one per possible CPU). One line, soon
# (the timeout turns a hang on the way out into a failure), and no device left behind.
cpus=$(($(sed 's/.*-//' /sys/devices/system/cpu/possible) + 1))
expect_failure "more queues than CPUs" "ublk add: this kernel's ublk driver gives /dev/ublkb[0-9]+ $cpus queues, not the $((cpus + 2)) asked for .*: add the devices with -i $cpus or fewer" 20000 1 -- \
	timeout -k 5 30 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" -f -i $((cpus + 2))
! compgen -G '/dev/ublk[bc]*' >/dev/null || fail "a refused ublk add left $(echo /dev/ublk[bc]*) behind"
# A queue that cannot be mapped once the first queue's thread runs, its commands fetched (a
# preloaded mmap() refuses every queue's but the first's): one line, the daemon ends (it once
# waited for ever on that thread), and no device left behind.
((cpus >= 2)) || fail "the guest has $cpus CPU: the refused mapping needs a second queue"
shim=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/.libs/fail-queue-map.so
[[ -r $shim ]] || fail "$shim is not built: run 'make check' (or make tests/integration/fail-queue-map.la) first"
expect_failure "queue not mapped" "ublk add: mapping queue 1 of /dev/ublkc[0-9]+ failed: Cannot allocate memory" 20000 1 -- \
	env LD_PRELOAD="$shim" timeout -k 5 30 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" -f -i 2
! compgen -G '/dev/ublk[bc]*' >/dev/null || fail "a ublk add whose queue 1 was not mapped left $(echo /dev/ublk[bc]*) behind"
# Bad input served right: a namespace of 4 KiB blocks whose backing is no whole number of blocks
# (the target's size rounds down: 1025 blocks), and one of 512-byte blocks, 8195 of them (no
# multiple of 4 KiB). Each device has the block size and the size of the kernel initiator's.
losetup_ns() {
	local nsid=$1 bytes=$2 bs=$3 img=/tmp/ublk-ns$1.img loopdev d=$NVMEFS_TEST_NVMET/subsystems/$empty/namespaces/$1
	truncate -s "$bytes" "$img"
	loopdev=$(losetup --find --show --sector-size "$bs" "$img") || fail "losetup of $img failed"
	echo "$loopdev" >>/tmp/ublk-loops
	mkdir "$d" && echo "$loopdev" >"$d/device_path" && echo 1 >"$d/enable" ||
		fail "making namespace $nsid of $empty on $loopdev failed"
}
losetup_ns 1 $(((4 << 20) + 6144)) 4096
losetup_ns 2 $(((4 << 20) + 1536)) 512
timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$empty" -o json --pidfile /tmp/ublk-odd.pid >/tmp/ublk-odd.json 2>/tmp/ublk-odd.err ||
	fail "nvmefs ublk add of namespaces of 4 KiB blocks and of an odd size failed (exit $?): $(cat /tmp/ublk-odd.err)"
kernel_connect "$empty" 2 >/dev/null
for nsid in 1 2; do
	udev=$(jq -r --argjson n "$nsid" '.Devices[] | select(.NameSpace == $n) | .DevicePath' /tmp/ublk-odd.json)
	kdev=$(kernel_connect_ns "$empty" "$nsid")
	[[ -b $udev ]] || fail "ublk add printed no device for namespace $nsid: $(cat /tmp/ublk-odd.json)"
	for q in --getss --getpbsz --getsize64; do
		[[ $(blockdev "$q" "$udev") == $(blockdev "$q" "$kdev") ]] ||
			fail "namespace $nsid: blockdev $q says $(blockdev "$q" "$udev") for $udev, $(blockdev "$q" "$kdev") for the kernel's $kdev"
	done
	# The last block, written through the device, reads back through the kernel initiator.
	bs=$(blockdev --getss "$udev") blocks=$(($(blockdev --getsize64 "$udev") / bs))
	head -c "$bs" /dev/urandom >/tmp/ublk-last
	dd if=/tmp/ublk-last of="$udev" bs="$bs" seek=$((blocks - 1)) oflag=direct status=none ||
		fail "writing the last block of $udev failed"
	cmp <(dd if="$kdev" bs="$bs" skip=$((blocks - 1)) iflag=direct status=none) /tmp/ublk-last ||
		fail "the last block written through $udev reads back otherwise through $kdev"
	log "namespace $nsid: $udev and $kdev both $(blockdev --getss "$udev")-byte blocks, $(blockdev --getsize64 "$udev") bytes"
done
# Namespace 2 grows on the target (its loop device, then nvmet revalidates it and sends a Namespace
# Attribute Changed event): where the kernel can resize a ublk device (UBLK_F_UPDATE_SIZE, 6.16),
# the device takes the new size as the kernel initiator's does, and its new last block is written
# through it and reads back through the kernel's; where it cannot, the daemon says so in one line.
rev=$NVMEFS_TEST_NVMET/subsystems/$empty/namespaces/2/revalidate_size
if [[ -w $rev ]]; then
	truncate -s 8M /tmp/ublk-ns2.img && losetup -c "$(tail -n 1 /tmp/ublk-loops)" && echo 1 >"$rev" ||
		fail "growing namespace 2 of $empty to 8 MiB failed"
	bdev_size_is() { [[ $(blockdev --getsize64 "$1" 2>/dev/null) == "$2" ]]; }
	wait_until 5000 bdev_size_is "$kdev" $((8 << 20)) || fail "the kernel initiator's $kdev is not 8 MiB 5 s after the resize"
	kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
	if ((kmaj > 6 || kmin >= 16)); then
		wait_until 5000 bdev_size_is "$udev" $((8 << 20)) ||
			fail "$udev has $(blockdev --getsize64 "$udev") bytes 5 s after its namespace grew to 8 MiB"
		head -c 4096 /dev/urandom >/tmp/ublk-last
		dd if=/tmp/ublk-last of="$udev" bs=4096 seek=2047 oflag=direct status=none ||
			fail "writing the new last 4 KiB of the grown $udev failed"
		cmp <(dd if="$kdev" bs=4096 skip=2047 iflag=direct status=none) /tmp/ublk-last ||
			fail "the new last 4 KiB written through the grown $udev reads back otherwise through $kdev"
		log "namespace 2 grown to 8 MiB: $udev follows, its new end written and read back"
	else
		said() { grep -q "ublkb${udev#/dev/ublkb} keeps .*: this kernel cannot resize a ublk device" "$syslog_file"; }
		wait_until 5000 said || fail "the daemon did not say that $udev cannot follow its namespace's resize"
		log "namespace 2 grown to 8 MiB: $(grep -o "ublkb${udev#/dev/ublkb} keeps.*" "$syslog_file" | head -n 1)"
	fi
else
	log "nvmet has no revalidate_size in this kernel: no resize checked"
fi
kernel_disconnect "$empty"
odd_pid=$(cat /tmp/ublk-odd.pid)
# One device of the daemon's two deleted during an outage that holds a write on each: del returns
# within seconds and fails that device's write with EIO; the other device, its daemon and its held
# write stay, and the write completes once the target is back.
dev1=$(jq -r '.Devices[] | select(.NameSpace == 1) | .DevicePath' /tmp/ublk-odd.json)
dev2=$(jq -r '.Devices[] | select(.NameSpace == 2) | .DevicePath' /tmp/ublk-odd.json)
port_unlink "$empty"
head -c 4096 /dev/urandom >/tmp/ublk-held2
dd if=/dev/urandom of="$dev1" bs=4k count=1 oflag=direct 2>/tmp/dd-held1.err &
dd1_pid=$!
dd if=/tmp/ublk-held2 of="$dev2" bs=4k count=1 oflag=direct 2>/tmp/dd-held2.err &
dd2_pid=$!
sleep 2
kill -0 "$dd1_pid" 2>/dev/null && kill -0 "$dd2_pid" 2>/dev/null ||
	fail "a write to $dev1 or $dev2 ended with the port gone, not held: $(cat /tmp/dd-held1.err /tmp/dd-held2.err)"
start=$(now_ms) rc=0
timeout 20 "$NVMEFS" ublk del "$dev1" 2>/tmp/ublk-del.err || rc=$?
ms=$(($(now_ms) - start))
((rc == 0)) || fail "nvmefs ublk del $dev1 (of two devices, an outage holding a write on each) exited $rc after $ms ms (124: still waiting at 20 s): $(cat /tmp/ublk-del.err)"
((ms <= 10000)) || fail "nvmefs ublk del $dev1 of two devices in an outage took $ms ms"
wait_gone "$dd1_pid" 5000 || fail "the held write to $dev1 still waits 5 s after ublk del $dev1 returned"
rc=0
wait "$dd1_pid" || rc=$?
((rc != 0)) && grep -q "Input/output error" /tmp/dd-held1.err ||
	fail "the write held when $dev1 was deleted did not fail with EIO: exit $rc, $(cat /tmp/dd-held1.err)"
[[ ! -e $dev1 ]] || fail "$dev1 is still there after ublk del $dev1"
kill -0 "$odd_pid" && [[ -b $dev2 ]] || fail "ublk del $dev1 took the daemon (PID $odd_pid) or $dev2 with it"
kill -0 "$dd2_pid" 2>/dev/null || fail "the write held for $dev2 ended when $dev1 was deleted: $(cat /tmp/dd-held2.err)"
"$NVMEFS" ublk list | grep -q "^$dev2 " && ! "$NVMEFS" ublk list | grep -q "^$dev1 " ||
	fail "after ublk del $dev1, ublk list does not show $dev2 alone: $("$NVMEFS" ublk list)"
port_link "$empty"
wait_gone "$dd2_pid" 30000 || fail "the write held for $dev2 still waits 30 s after the target came back"
wait "$dd2_pid" || fail "the write held for $dev2 failed after the target came back: $(cat /tmp/dd-held2.err)"
cmp <(dd if="$dev2" bs=4096 count=1 iflag=direct status=none) /tmp/ublk-held2 ||
	fail "the write held for $dev2 through the outage reads back otherwise"
log "ublk del $dev1 of two in an outage: returned in $ms ms, its write failed with EIO; $dev2's write held, then done"
# Namespace 2 removed on the target (disabled: nvmet sends Namespace Attribute Changed): its device
# is marked gone as the mount marks its file, ublk list says so, and its I/O fails at once.
echo 0 >"$NVMEFS_TEST_NVMET/subsystems/$empty/namespaces/2/enable"
listed_gone() { "$NVMEFS" ublk list | grep -q "^$dev2 .* gone  *$empty\$"; }
wait_until 10000 listed_gone || fail "ublk list does not show $dev2 gone 10 s after its namespace was removed: $("$NVMEFS" ublk list)"
"$NVMEFS" ublk list -o json | jq -e --arg d "$dev2" '.Devices[] | select(.DevicePath == $d) | .State == "gone"' >/dev/null ||
	fail "ublk list -o json does not say $dev2 is gone: $("$NVMEFS" ublk list -o json)"
start=$(now_ms) rc=0
timeout 20 dd if="$dev2" of=/dev/null bs=4k count=1 iflag=direct 2>/tmp/dd-gone.err || rc=$?
ms=$(($(now_ms) - start))
((rc != 0 && rc != 124)) || fail "a read of $dev2, its namespace removed, exited $rc after $ms ms: $(cat /tmp/dd-gone.err)"
((ms <= 5000)) || fail "a read of $dev2, its namespace removed, took $ms ms to fail"
log "namespace 2 removed: $dev2 listed gone, a read failed in $ms ms: $(head -n 1 /tmp/dd-gone.err)"
timeout 60 "$NVMEFS" ublk del "$empty" || fail "nvmefs ublk del $empty failed"
wait_gone "$odd_pid" 10000 || fail "the daemon of $empty (PID $odd_pid) still runs 10 s after ublk del"
port_unlink "$empty"
for nsid in 1 2; do
	echo 0 >"$NVMEFS_TEST_NVMET/subsystems/$empty/namespaces/$nsid/enable"
	rmdir "$NVMEFS_TEST_NVMET/subsystems/$empty/namespaces/$nsid"
done
rmdir "$NVMEFS_TEST_NVMET/subsystems/$empty"
while read -r l; do losetup -d "$l"; done </tmp/ublk-loops

timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" -o json --pidfile "$pidfile" >/tmp/ublk-add.json 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(jq -r '.Devices[0].DevicePath' /tmp/ublk-add.json) || fail "ublk add -o json printed no device: $(cat /tmp/ublk-add.json)"
[[ -b $dev ]] || fail "ublk add printed $dev, which is not a block device"
[[ -s $pidfile ]] || fail "ublk add returned but its pidfile $pidfile is empty or missing"
pid=$(cat "$pidfile")
check_own_transport "ublk add of $nqn" "$pid"
size=$(blockdev --getsize64 "$dev")
((size == NVMEFS_TEST_NS_SIZE)) || fail "$dev has $size bytes, the namespace $NVMEFS_TEST_NS_SIZE"
log "$dev: $size bytes, served by PID $pid"
"$NVMEFS" ublk list | grep -q "^$dev .* $pid .*$nqn\$" || fail "ublk list does not show $dev: $("$NVMEFS" ublk list)"
# Both JSON outputs against their schemas (doc/JSON.md), in one python3: it starts slowly under TCG.
"$NVMEFS" ublk list -o json >/tmp/ublk-list.json || fail "nvmefs ublk list -o json failed"
jq -e --arg d "$dev" '.Devices[0].DevicePath == $d' /tmp/ublk-list.json >/dev/null ||
	fail "ublk list -o json does not show $dev: $(cat /tmp/ublk-list.json)"
/usr/bin/python3 -c '
import json, sys, jsonschema
for schema, doc in zip(sys.argv[1::2], sys.argv[2::2]):
    jsonschema.Draft202012Validator(json.load(open(schema))).validate(json.load(open(doc)))
' "$schemas/ublk-add.schema.json" /tmp/ublk-add.json "$schemas/ublk-list.schema.json" /tmp/ublk-list.json \
	2>/tmp/schema.err || fail "ublk add's or list's JSON does not match its schema: $(tail -n 3 /tmp/schema.err)"

# fio_verify NAME MIB FIO_OPTIONS...: random writes of MIB MiB, every block verified.
fio_verify() {
	local name=$1 mib=$2 rc=0 start
	shift 2
	start=$(now_ms)
	fio --name="$name" --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite --size=${mib}M \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 --verify_state_save=0 \
		--output-format=json --output="/tmp/fio-$name.json" "$@" 2>"/tmp/fio-$name.err" || rc=$?
	((rc == 0)) || fail "fio $name exited $rc: $(cat "/tmp/fio-$name.err") $(jq -c '.jobs[0] | {error, verify_errors: .["verify_errors"]}' "/tmp/fio-$name.json" 2>/dev/null)"
	jq -e --argjson n $((mib << 20)) '.jobs[0].error == 0 and .jobs[0].write.io_bytes == $n and .jobs[0].read.io_bytes == $n' \
		"/tmp/fio-$name.json" >/dev/null ||
		fail "fio $name: error $(jq '.jobs[0].error' "/tmp/fio-$name.json"), wrote $(jq '.jobs[0].write.io_bytes' "/tmp/fio-$name.json") and verified $(jq '.jobs[0].read.io_bytes' "/tmp/fio-$name.json") bytes, not $mib MiB each"
	log "$name: $mib MiB written and verified in $(($(now_ms) - start)) ms"
}
fio_verify qd1-4k "$(scaled 2 16)" --bs=4k --iodepth=1
fio_verify qd64-mix "$(scaled 16 64)" --iodepth=64 --blockalign=512 \
	--bssplit=512/20:1536/15:3584/15:4k/10:7680/10:64k/10:256k/10:1m/10

# Idle, the daemon sleeps: its threads wait in their rings (one that counted the queue's wake-up
# as work spun at full speed once I/O had come, and made depth-1 I/O 50 times slower).
ticks=$(cpu_ticks "$pid")
sleep 2
ticks=$(($(cpu_ticks "$pid") - ticks))
((ticks <= 20)) || fail "the idle daemon used $ticks clock ticks ($(getconf CLK_TCK) a second) in 2 s: a thread spins"
log "idle for 2 s: $ticks clock ticks of CPU"

# The daemon's statistics, as a mount's stats file has them (its schema), at most a second old:
# the two verify runs above wrote and read back every byte they name.
"$NVMEFS" ublk stats "$dev" >/tmp/ublk-stats.json 2>/tmp/ublk-stats.err ||
	fail "nvmefs ublk stats $dev failed: $(cat /tmp/ublk-stats.err)"
moved=$((($(scaled 2 16) + $(scaled 16 64)) << 20))
jq -e --argjson n "$moved" '.total.write_bytes >= $n and .total.read_bytes >= $n and .total.errors == 0' \
	/tmp/ublk-stats.json >/dev/null ||
	fail "nvmefs ublk stats $dev does not count the $moved bytes fio wrote and read: $(jq -c .total /tmp/ublk-stats.json)"
/usr/bin/python3 -c '
import json, sys, jsonschema
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
' "$schemas/mount-stats.schema.json" /tmp/ublk-stats.json 2>/tmp/schema.err ||
	fail "nvmefs ublk stats' JSON does not match the mount's stats schema: $(tail -n 3 /tmp/schema.err)"
log "ublk stats: $(jq -c '.total | {reads, writes, read_bytes, write_bytes, errors}' /tmp/ublk-stats.json)"

# An 8 s port drop under fio verify: the I/O waits through it and completes after the reconnect.
fio_load_start ublk "$dev" 14
sleep 3
load_running ublk || fail "fio ended before the outage: $(cat /tmp/fio-ublk.err)"
outage 8 '' "port_unlink $nqn" "port_link $nqn"
fio_load_check ublk 120
check_stall "fio through $dev" "$(fio_stall_ms /tmp/fio-ublk.json)"
[[ -b $dev ]] && kill -0 "$pid" || fail "after the outage, $dev or its daemon (PID $pid) is gone"

# Write-zeroes (NVMe Write Zeroes) over written blocks reads back zeros; a discard succeeds.
timeout 60 blkdiscard -z -o 1M -l 1M "$dev" || fail "blkdiscard -z (write-zeroes) on $dev failed"
cmp -n 1048576 <(dd if="$dev" bs=1M skip=1 count=1 iflag=direct status=none) /dev/zero ||
	fail "1 MiB of $dev zeroed with blkdiscard -z does not read back as zeros"
timeout 60 blkdiscard -o 2M -l 1M "$dev" || fail "blkdiscard (discard) on $dev failed"

# A filesystem: made, a tree written, checked clean.
timeout 120 mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 $dev failed"
mkdir -p /tmp/ublk-fs
mount "$dev" /tmp/ublk-fs || fail "mounting the ext4 of $dev failed"
cp -a "$NVMEFS_BUILDDIR/src/ublk" "$NVMEFS_BUILDDIR/man" /tmp/ublk-fs/ || fail "copying a tree onto $dev failed"
head -c 5M /dev/urandom >/tmp/ublk-fs/random
sum=$(md5sum </tmp/ublk-fs/random)
umount /tmp/ublk-fs
e2fsck -fn "$dev" >/tmp/e2fsck.out 2>&1 || fail "e2fsck -fn $dev is not clean: $(cat /tmp/e2fsck.out)"
devsum=$(md5sum <"$dev")

timeout 60 "$NVMEFS" ublk del "$dev" || fail "nvmefs ublk del $dev failed"
wait_gone "$pid" 10000 || fail "the daemon (PID $pid) still runs 10 s after ublk del $dev"
[[ ! -e $dev && ! -e $pidfile ]] || fail "after ublk del, $dev or the pidfile $pidfile is still there"
[[ $("$NVMEFS" ublk list | wc -l) == 2 ]] || fail "ublk list still lists devices after del: $("$NVMEFS" ublk list)"

# The same bytes through the kernel initiator.
kdev=$(kernel_connect "$nqn")
[[ $(md5sum <"$kdev") == "$devsum" ]] || fail "the kernel initiator reads other bytes from the namespace than $dev held"
mkdir -p /tmp/ublk-fs
mount -o ro "$kdev" /tmp/ublk-fs || fail "mounting the ext4 made through $dev from $kdev failed"
[[ $(md5sum </tmp/ublk-fs/random) == "$sum" ]] || fail "a file written through $dev reads back other bytes through $kdev"
umount /tmp/ublk-fs

# ublk del while a write is held by an outage: the kernel's STOP_DEV waits for the device's I/O,
# which an outage would hold until ctrl_loss_tmo (600 s).
kernel_disconnect_all
# -l 60: a del that waits for the outage fails the test within a minute, not 10.
timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" -l 60 --pidfile "$pidfile" >/tmp/ublk-add.out 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(head -n 1 /tmp/ublk-add.out) pid=$(cat "$pidfile")
port_unlink "$nqn"
dd if=/dev/urandom of="$dev" bs=4k count=1 oflag=direct 2>/tmp/dd-held.err &
dd_pid=$!
sleep 2
kill -0 "$dd_pid" 2>/dev/null || fail "a write to $dev ended with the port gone, not held: $(cat /tmp/dd-held.err)"
# del_held WHY: ublk del $dev, with I/O held (for WHY), returns within seconds; sets ms.
del_held() {
	local start rc=0
	start=$(now_ms)
	timeout 20 "$NVMEFS" ublk del "$dev" 2>/tmp/ublk-del.err || rc=$?
	ms=$(($(now_ms) - start))
	((rc == 0)) || fail "nvmefs ublk del $dev with I/O held $1 exited $rc after $ms ms (124: still waiting at 20 s): $(cat /tmp/ublk-del.err)"
	# Seconds, not ctrl_loss_tmo: the emulated guest takes up to 4 s to stop the device.
	((ms <= 10000)) || fail "nvmefs ublk del $dev with I/O held $1 took $ms ms"
}
del_held "by the outage"
wait_gone "$dd_pid" 5000 || fail "the held write to $dev still waits 5 s after ublk del returned"
rc=0
wait "$dd_pid" || rc=$?
((rc != 0)) && grep -q "Input/output error" /tmp/dd-held.err ||
	fail "the write held when $dev was deleted did not fail with EIO: exit $rc, $(cat /tmp/dd-held.err)"
wait_gone "$pid" 5000 || fail "the daemon (PID $pid) still runs 5 s after ublk del $dev"
[[ ! -e $dev ]] || fail "$dev is still there after ublk del"
port_link "$nqn"
# The outage given up at del is what del asked for: the library's line says so, and the daemon
# adds no error of its own (it once logged 'nvmefs ublk add: ' with nothing after).
if [[ -s $syslog_file ]]; then
	! grep -q "nvmefs\[$pid\]: nvmefs ublk add: *$" "$syslog_file" ||
		fail "the daemon logged an empty error line when ublk del gave up its outage: $(grep "nvmefs\[$pid\]: nvmefs ublk add: *$" "$syslog_file")"
	! grep -q "nvmefs\[$pid\]: nvmefs ublk add: the controller .* failed while serving" "$syslog_file" ||
		fail "the daemon called the outage ublk del gave up a failure while serving: $(grep "nvmefs\[$pid\]: nvmefs ublk add:" "$syslog_file")"
fi
log "ublk del with a write held: returned in $ms ms, the write failed with EIO"

# ublk del while writes are held by the multipath head itself (--all-paths: a multipath head, of one
# path here): fio's writes in flight when the namespace's ANA group turns inaccessible come back
# with that status, and the head holds them while the controller is live. del gives that up too:
# it returns within seconds, and the writes fail with EIO.
timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" --all-paths --pidfile "$pidfile" >/tmp/ublk-add.out 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add --all-paths failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(head -n 1 /tmp/ublk-add.out) pid=$(cat "$pidfile")
fio --name=ana --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=32 \
	--size=64M --time_based --runtime=300 >/tmp/fio-ana.out 2>&1 &
fio_pid=$!
sleep 2
echo inaccessible >"$ana"
sleep 2
kill -0 "$fio_pid" 2>/dev/null || fail "fio's writes to $dev ended with its ANA group inaccessible, not held: $(tail -n 5 /tmp/fio-ana.out)"
del_held "for an inaccessible ANA group"
wait_gone "$fio_pid" 5000 || fail "fio's held writes to $dev still wait 5 s after ublk del returned"
grep -q "Input/output error" /tmp/fio-ana.out || fail "the writes held when $dev was deleted did not fail with EIO: $(tail -n 5 /tmp/fio-ana.out)"
wait_gone "$pid" 5000 || fail "the daemon (PID $pid) still runs 5 s after ublk del $dev"
echo optimized >"$ana"
log "ublk del with writes held for an inaccessible ANA group: returned in $ms ms, the writes failed with EIO"

# A controller lost for good while serving (past ctrl_loss_tmo): I/O fails, the devices stay until
# del, and the daemon's last line says what failed and what to do.
timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" -l 1 --pidfile "$pidfile" >/tmp/ublk-add.out 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add -l 1 failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(head -n 1 /tmp/ublk-add.out) pid=$(cat "$pidfile")
port_unlink "$nqn"
lost() { grep -q "nvmefs\[$pid\]: .*not reconnected within ctrl_loss_tmo" "$syslog_file"; }
[[ -s $syslog_file ]] && { wait_until 10000 lost || fail "the controller was not given up 10 s after a 1 s ctrl_loss_tmo"; }
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct 2>/tmp/dd-lost.err && fail "a read of $dev succeeded with its controller lost"
[[ -b $dev ]] || fail "$dev went when its controller was lost: it stays until ublk del"
timeout 20 "$NVMEFS" ublk del "$dev" || fail "nvmefs ublk del $dev of a lost controller failed"
wait_gone "$pid" 5000 || fail "the daemon (PID $pid) still runs 5 s after ublk del $dev"
port_link "$nqn"
if [[ -s $syslog_file ]]; then
	grep -q "nvmefs\[$pid\]: nvmefs ublk add: the controller of $nqn failed while serving and was not reconnected (.*), so block I/O failed with EIO: check the target" "$syslog_file" ||
		fail "the daemon whose controller was lost did not say so as it ended: $(grep "nvmefs\[$pid\]: nvmefs ublk add" "$syslog_file")"
	log "controller lost: $(grep -o "nvmefs ublk add: the controller .*" "$syslog_file" | tail -n 1)"
fi

# A daemon killed (SIGKILL, no UBLK_F_USER_RECOVERY) leaves no block device; what the kernel keeps
# of it (the ublk device, dead until DEL_DEV) ublk del removes, and says so.
timeout 60 "$NVMEFS" ublk add "${connect[@]}" -n "$nqn" --pidfile "$pidfile" >/tmp/ublk-add.out 2>/tmp/ublk-add.err ||
	fail "nvmefs ublk add failed (exit $?): $(cat /tmp/ublk-add.err)"
dev=$(head -n 1 /tmp/ublk-add.out) pid=$(cat "$pidfile")
kill -KILL "$pid"
wait_gone "$pid" 10000 || fail "the daemon (PID $pid) still runs 10 s after SIGKILL"
no_dev() { [[ ! -e $dev ]]; }
wait_until 10000 no_dev || fail "$dev is still there 10 s after its daemon was killed"
cdev=/dev/ublkc${dev#/dev/ublkb}
if [[ -e $cdev ]]; then
	timeout 20 "$NVMEFS" ublk del "$dev" >/tmp/ublk-del.out 2>&1 || fail "ublk del $dev after its daemon was killed failed: $(cat /tmp/ublk-del.out)"
	grep -q "daemon (PID $pid) had died; deleted" /tmp/ublk-del.out || fail "ublk del $dev of a killed daemon did not say so: $(cat /tmp/ublk-del.out)"
	wait_until 5000 test ! -e "$cdev" || fail "$cdev is still there after ublk del"
	log "killed daemon: $dev gone at once; $(cat /tmp/ublk-del.out)"
else
	log "killed daemon: $dev gone at once, and the kernel kept nothing of it"
fi
[[ $("$NVMEFS" ublk list | wc -l) == 2 ]] || fail "ublk list still lists devices after a killed daemon's were deleted: $("$NVMEFS" ublk list)"
rm -f "$pidfile"
check_run_transport
echo "PASS ($trtype): nvmefs ublk add/list/del/stats: fio verify at depth 1 and 64, write-zeroes, discard, ext4 clean, the same bytes through the kernel initiator; an 8 s port drop under fio verify with no error; del with a write held (an outage, an ANA state) fails it at once, and one device of two deleted alone in an outage; a grown namespace resized; 4 KiB and odd-sized namespaces as the kernel shows them; a killed daemon leaves no device; an NQN with no namespace, more queues than CPUs and a queue that cannot be mapped each refused with one line, no device left"
