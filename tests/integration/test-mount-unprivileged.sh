#!/usr/bin/env bash
# testbed: --ns-size 32M
# An ordinary user mounts a namespace, uses the file and unmounts it: nvmefs mount runs as that
# user (no capabilities), mounts through the setuid fusermount3, and the user unmounts with
# fusermount3 -u. The user needs read-write access to /dev/fuse and /dev/infiniband/* (given here
# with chmod, as a udev rule or group would) and a locked-memory limit that covers the buffers
# nvmefs registers with the RDMA device.
#
# Those buffers, with the default options (2 I/O queues, --depth 16, -o max_io=1M): per queue,
# 16 requests of max_io + 16 KiB (FUSE header slack and two blocks for read-modify-write),
# 2 x 16 x 1040 KiB = 32.5 MiB, plus a few KiB per queue for the library (VmPin of the daemon:
# 33532 kB): more than the kernel's default RLIMIT_MEMLOCK of 8 MiB. So: with 8 MiB, the default options fail and say why;
# --depth 4 -o max_io=256k (2 x 4 x 272 KiB = 2.1 MiB) fits in 8 MiB; with 48 MiB the defaults fit.
. "$(dirname "$0")/lib.sh"
require_nvmefs
user='nvmefs-test'
mnt=/tmp/nvmefs-user
trap 'nvmefs_cleanup; rm -rf /tmp/nvmefs-user-bin /tmp/user-*' EXIT
nvmefs_mounts+=("$mnt")

log "the user, and access to /dev/fuse and the RDMA devices"
id "$user" >/dev/null 2>&1 || useradd -m "$user" || fail "useradd $user failed"
chmod 0666 /dev/fuse
chmod 0666 /dev/infiniband/* || fail "no /dev/infiniband devices to open up"
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
	as_user "$lim" timeout 60 "$nvmefs" mount -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" \
		-n "${subnqns[0]}" --pidfile "$mnt.pid" "$@" "$mnt"
}
# use_and_unmount: as $user, write and read back through the file, then fusermount3 -u.
use_and_unmount() {
	local pid
	[[ $(findmnt -n -o FSTYPE --mountpoint "$mnt") == fuse.nvmefs ]] || fail "$mnt is not an nvmefs mount"
	pid=$(cat "$mnt.pid") || fail "no pidfile"
	[[ $(stat -c %U "/proc/$pid") == "$user" ]] || fail "the daemon runs as $(stat -c %U "/proc/$pid"), not $user"
	log "the daemon (PID $pid, user $user) has $(awk '/VmPin/ {print $2, $3}' "/proc/$pid/status") pinned"
	[[ $(as_user $((8 << 20)) stat -c '%U %a' "$mnt/n1") == "$user 660" ]] ||
		fail "$mnt/n1 is '$(as_user $((8 << 20)) stat -c '%U %a' "$mnt/n1")', not owned by $user with mode 660"
	head -c 1048576 /dev/urandom >/tmp/user-data
	chmod 0644 /tmp/user-data
	as_user $((8 << 20)) dd if=/tmp/user-data of="$mnt/n1" bs=64K seek=7 conv=notrunc status=none ||
		fail "$user cannot write through $mnt/n1"
	as_user $((8 << 20)) dd if="$mnt/n1" bs=64K skip=7 count=16 status=none >/tmp/user-back ||
		fail "$user cannot read through $mnt/n1"
	cmp -s /tmp/user-data /tmp/user-back || fail "what $user wrote through $mnt/n1 reads back differently"
	# Without allow_other, the mount is the user's alone: even root may not look in.
	out=$(stat "$mnt/n1" 2>&1) && fail "root could stat $mnt/n1 on $user's mount without allow_other"
	as_user $((8 << 20)) fusermount3 -u "$mnt" || fail "$user cannot unmount $mnt with fusermount3 -u"
	wait_gone "$pid" 30000 || fail "the daemon still runs 30 s after $user's fusermount3 -u"
	! mountpoint -q "$mnt" || fail "$mnt is still mounted after $user's fusermount3 -u"
	[[ ! -e $mnt.pid ]] || fail "the daemon left its pidfile"
}

log "memlock 8 MiB, default options: refused, and told why"
out=$(mount_as_user $((8 << 20)) 2>&1) && fail "nvmefs mount registered 32.5 MiB under an 8 MiB memlock limit?"
! mountpoint -q "$mnt" || fail "the mount failed but $mnt is mounted"
log "it said: $out"
[[ $out =~ RLIMIT_MEMLOCK.*8192\ KiB ]] || fail "a memlock limit too low is not explained: $out"

log "memlock 8 MiB, --depth 4 -o max_io=256k"
out=$(mount_as_user $((8 << 20)) --depth 4 -o max_io=256k 2>&1) || fail "mount as $user with 8 MiB of memlock and small buffers failed: $out"
use_and_unmount

log "memlock 48 MiB, default options"
out=$(mount_as_user $((48 << 20)) 2>&1) || fail "mount as $user with 48 MiB of memlock and default options failed: $out"
use_and_unmount
echo "PASS: $user mounts, writes, reads and unmounts without privileges; the memlock limit is explained"
