#!/usr/bin/env bash
# testbed: --ns-size 32M
# An ordinary user mounts a namespace, uses the file and unmounts it: nvmefs mount runs as that
# user (no capabilities), mounts through the setuid fusermount3, and the user unmounts with
# fusermount3 -u. The user needs read-write access to /dev/fuse and /dev/infiniband/* (given here
# with chmod, as a udev rule or group would) and a locked-memory limit that covers the buffers
# nvmefs registers with the RDMA device. nvmefs list, run by the user, shows the mount; run by
# root, it shows it as one root cannot read.
#
# Those buffers, with the default options (2 I/O queues, --depth 16, -o max_io=128k): per queue,
# 16 requests of max_io + 16 KiB (FUSE header slack and two blocks for read-modify-write),
# 2 x 16 x 144 KiB = 4.5 MiB, plus some 250 KiB for the library's queues; the mount asks for
# 1 MiB of room beyond the buffers. So: with 4 MiB, the default options fail and say why;
# --depth 4 (2 x 4 x 144 KiB = 1.1 MiB) fits in 4 MiB; with 8 MiB the defaults fit. Each time the
# stats file's memory.pinned_bytes is what the kernel counts pinned for the daemon (VmPin), holds
# the request buffers, and stays within the 16 MiB a mount may pin at default options.
#
# Over NVMe/TCP (the .tcp run) nothing is registered, so nothing is pinned: with a memlock limit
# of 64 KiB (a container's usual), the default options mount, and the stats and VmPin say 0.
. "$(dirname "$0")/lib.sh"
require_nvmefs
user='nvmefs-test'
mnt=/tmp/nvmefs-user
# The test runs in a kept VM (the testbed's pool), so it gives back what it changed beyond /tmp:
# the user it added and the device nodes' modes (a test that fails retires its VM anyway).
trap 'nvmefs_cleanup; rm -rf /tmp/nvmefs-user-bin /tmp/user-*; dev_restore; test_user_remove' EXIT
nvmefs_mounts+=("$mnt")

log "the user, and access to /dev/fuse and the RDMA devices"
test_user_add "$user" || fail "useradd $user failed"
dev_open /dev/fuse || fail "chmod 0666 /dev/fuse failed"
dev_open /dev/infiniband/* || fail "no /dev/infiniband devices to open up"
[[ -u $(command -v fusermount3) ]] || fail "fusermount3 ($(command -v fusermount3)) is not setuid root here: $(ls -l "$(command -v fusermount3)")"
# The build tree is shared from the host over 9p, which need not let another user in: run a copy.
nvmefs_copy /tmp/nvmefs-user-bin
nvmefs=/tmp/nvmefs-user-bin/nvmefs
rm -rf "$mnt" "$mnt.pid"
# as_user MEMLOCK_BYTES COMMAND...: COMMAND as $user, with no capabilities and that memlock limit.
as_user() {
	local lim=$1
	shift
	prlimit --memlock="$lim:$lim" setpriv --reuid="$user" --regid="$user" --init-groups --reset-env -- "$@"
}
as_user $((8 << 20)) mkdir "$mnt" || fail "$user cannot create the mount point $mnt"
mount_as_user() {
	local lim=$1
	shift
	as_user "$lim" timeout 60 "$nvmefs" mount -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" \
		-n "${subnqns[0]}" --pidfile "$mnt.pid" "$@" "$mnt"
}
# check_pinned PID DEPTH: the stats' pinned bytes are the daemon's VmPin, and hold the request
# buffers of its queues, DEPTH each, and no more than 16 MiB in all; over TCP, both are 0.
check_pinned() {
	local stats pinned vmpin queues buffers
	stats=$(as_user $((8 << 20)) cat "$mnt/stats") || fail "$user cannot read $mnt/stats"
	pinned=$(jq -r .memory.pinned_bytes <<<"$stats")
	queues=$(jq -r '.queues | length' <<<"$stats")
	vmpin=$(awk '/^VmPin:/ {print $2 * 1024}' "/proc/$1/status")
	buffers=$((queues * $2 * (128 + 16) * 1024))
	log "stats: pinned_bytes $pinned ($queues queues, their request buffers $buffers); VmPin $vmpin"
	[[ $pinned == "$vmpin" ]] || fail "the stats say $pinned bytes pinned, the kernel $vmpin (VmPin)"
	if [[ $trtype == tcp ]]; then
		((pinned == 0)) || fail "over TCP, which registers nothing, $pinned bytes are pinned"
		return
	fi
	((pinned >= buffers)) || fail "$pinned bytes pinned, fewer than the $buffers of the request buffers"
	((pinned <= 16 << 20)) || fail "$pinned bytes pinned, more than 16 MiB"
}
# use_and_unmount DEPTH: as $user, write and read back through the file, then fusermount3 -u.
use_and_unmount() {
	local pid
	[[ $(findmnt -n -o FSTYPE --mountpoint "$mnt") == fuse.nvmefs ]] || fail "$mnt is not an nvmefs mount"
	pid=$(cat "$mnt.pid") || fail "no pidfile"
	[[ $(stat -c %U "/proc/$pid") == "$user" ]] || fail "the daemon runs as $(stat -c %U "/proc/$pid"), not $user"
	log "the daemon (PID $pid, user $user) has $(awk '/VmPin/ {print $2, $3}' "/proc/$pid/status") pinned"
	check_pinned "$pid" "$1"
	[[ $(as_user $((8 << 20)) stat -c '%U %a' "$mnt/n1") == "$user 660" ]] ||
		fail "$mnt/n1 is '$(as_user $((8 << 20)) stat -c '%U %a' "$mnt/n1")', not owned by $user with mode 660"
	head -c 1048576 /dev/urandom >/tmp/user-data
	chmod 0644 /tmp/user-data
	as_user $((8 << 20)) dd if=/tmp/user-data of="$mnt/n1" bs=64K seek=7 conv=notrunc status=none ||
		fail "$user cannot write through $mnt/n1"
	as_user $((8 << 20)) dd if="$mnt/n1" bs=64K skip=7 count=16 status=none >/tmp/user-back ||
		fail "$user cannot read through $mnt/n1"
	cmp -s /tmp/user-data /tmp/user-back || fail "what $user wrote through $mnt/n1 reads back differently"
	# nvmefs list: the user sees its mount; root is shown it too, as one it cannot read.
	out=$(as_user $((8 << 20)) timeout 30 "$nvmefs" list -o json 2>&1) || fail "nvmefs list as $user failed: $out"
	jq -e --arg m "$mnt" '[.mounts[] | select(.mountpoint == $m and .state == "live" and .writes > 0)] | length == 1' \
		<<<"$out" >/dev/null || fail "nvmefs list as $user does not show its live mount on $mnt with its writes: $out"
	out=$(timeout 30 "$NVMEFS" list -o json 2>&1) || fail "nvmefs list as root failed: $out"
	jq -e --arg m "$mnt" '[.mounts[] | select(.mountpoint == $m and .state == "error" and .errno == -13)] | length == 1' \
		<<<"$out" >/dev/null || fail "nvmefs list as root does not show $user's mount on $mnt as one it cannot read: $out"
	# Without allow_other, the mount is the user's alone: even root may not look in.
	out=$(stat "$mnt/n1" 2>&1) && fail "root could stat $mnt/n1 on $user's mount without allow_other"
	as_user $((8 << 20)) fusermount3 -u "$mnt" || fail "$user cannot unmount $mnt with fusermount3 -u"
	wait_gone "$pid" 30000 || fail "the daemon still runs 30 s after $user's fusermount3 -u"
	! mountpoint -q "$mnt" || fail "$mnt is still mounted after $user's fusermount3 -u"
	[[ ! -e $mnt.pid ]] || fail "the daemon left its pidfile"
}

if [[ $trtype == tcp ]]; then
	log "over TCP: memlock 64 KiB, default options"
	out=$(mount_as_user $((64 << 10)) 2>&1) || fail "mount as $user over TCP with 64 KiB of memlock failed: $out"
	use_and_unmount 16
	echo "PASS: $user mounts over TCP with 64 KiB of memlock (nothing pinned), writes, reads and unmounts without privileges"
	exit 0
fi

log "memlock 4 MiB, default options: refused, and told why"
out=$(mount_as_user $((4 << 20)) 2>&1) && fail "nvmefs mount registered 4.5 MiB under a 4 MiB memlock limit?"
! mountpoint -q "$mnt" || fail "the mount failed but $mnt is mounted"
log "it said: $out"
# The daemon's queues: one a CPU, at most 4 (nvmefs-mount(1), -i); 16 buffers of 144 KiB each.
queues=$(nproc)
((queues <= 4)) || queues=4
need=$((queues * 16 * 144))
((need > 4096 - 1024)) || fail "with $queues queues the buffers ($need KiB) fit in 4 MiB: the test needs 2 CPUs or more"
want="nvmefs mount: the request buffers need $need KiB of locked memory ($queues queues x --iodepth 16 x (max_io 128 KiB + 16 KiB)), more than RLIMIT_MEMLOCK allows (4096 KiB): RDMA registers them, which pins them; raise it ('ulimit -l $((need + 1024))'; in a container, --ulimit memlock=$(((need + 1024) << 10))), use fewer or smaller buffers (-i, --iodepth, -o max_io), or NVMe/TCP (-t tcp), which pins nothing"
grep -Fxq -- "$want" <<<"$out" || fail "a memlock limit too low is not explained as it should be: got '$out', want '$want'"

log "memlock 4 MiB, --depth 4"
out=$(mount_as_user $((4 << 20)) --depth 4 2>&1) || fail "mount as $user with 4 MiB of memlock and fewer buffers failed: $out"
use_and_unmount 4

log "memlock 8 MiB, default options"
out=$(mount_as_user $((8 << 20)) 2>&1) || fail "mount as $user with 8 MiB of memlock and default options failed: $out"
use_and_unmount 16
echo "PASS: $user mounts, writes, reads and unmounts without privileges; the memlock limit is explained"
