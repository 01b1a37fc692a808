#!/usr/bin/env bash
# testbed: --ns-size 128M
# testbed-boot: own
# nvmefs ublk (issue #37 item 1): an NQN with no namespace is refused with one line; ublk add
# prints /dev/ublkbN (JSON with -o json) once it exists, of the namespace's size; fio writes at
# random through it and verifies every block (crc32c; 4 KiB at depth 1, sizes mixed from 512
# bytes to 1 MiB at depth 64); write-zeroes reads back zeros and a discard succeeds; mkfs.ext4, a
# file tree, e2fsck clean; ublk list shows the device; ublk del removes it, the daemon ends, its
# pidfile goes; and the kernel initiator then reads the same bytes. The idle daemon takes no CPU.
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn=${subnqns[0]}
empty=nqn.2026-11.io.nvmefs.testbed:ublk-empty
pidfile=/tmp/nvmefs-ublk.pid
cleanup() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || pid=
	mountpoint -q /tmp/ublk-fs 2>/dev/null && umount -l /tmp/ublk-fs
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && { wait_gone "$pid" 10000 || kill -KILL "$pid"; }
	kernel_disconnect_all
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
port_unlink "$empty"
rmdir "$NVMEFS_TEST_NVMET/subsystems/$empty"

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
check_run_transport
echo "PASS: nvmefs ublk add/list/del: fio verify at depth 1 and 64, write-zeroes, discard, ext4 clean, the same bytes through the kernel initiator; an NQN with no namespace refused with one line"
