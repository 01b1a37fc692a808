#!/usr/bin/env bash
# testbed: --backing file --ns-size 64M
# The target changes its namespaces under a live mount, and says so with a Namespace Attribute
# Changed event; the mount follows within 2 s, as the kernel initiator beside it does:
# - the backing file of namespace 1 grows and nvmet revalidates its size: n1 takes the new size,
#   and the new blocks can be written and read back;
# - namespace 2 is added: it appears as the file n2, and data written to it reads back through
#   the kernel initiator;
# - namespace 2 is disabled: n2 is no longer listed, and I/O through a descriptor still open on
#   it fails; enabled again (the same namespace), it is listed again and works.
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn=${subnqns[0]}
sub=$NVMEFS_TEST_NVMET/subsystems/$nqn
mnt=/tmp/nvmefs-nsch
ns1=$sub/namespaces/1
[[ -w $ns1/revalidate_size ]] || skip "nvmet has no revalidate_size in this kernel"
trap 'exec 9<&- 2>/dev/null || true; nvmefs_cleanup; kernel_disconnect_all
      echo 0 >"$sub/namespaces/2/enable" 2>/dev/null || true; rmdir "$sub/namespaces/2" 2>/dev/null || true
      rm -f /tmp/nsch-*' EXIT
cd /tmp

# within_2s DESC COMMAND...: COMMAND must succeed within 2 s.
within_2s() {
	local what=$1 start
	shift
	start=$(now_ms)
	wait_until 2000 "$@" || fail "$what: not within 2 s"
	log "$what after $(($(now_ms) - start)) ms"
}
size_is() { [[ $(stat -c %s "$1" 2>/dev/null) == "$2" ]]; }
bdev_size_is() { [[ $(blockdev --getsize64 "$1" 2>/dev/null) == "$2" ]]; }
listed() { ls "$mnt" | grep -qx "$1"; }
unlisted() { ! listed "$1"; }

nvmefs_mount "$nqn" "$mnt"
dev=$(kernel_connect "$nqn")
size_is "$mnt/n1" $((64 << 20)) || fail "n1 is $(stat -c %s "$mnt/n1") bytes, not 64 MiB"

log "namespace 1's backing file grows to 96 MiB"
truncate -s 96M "$(cat "$ns1/device_path")" || fail "growing the backing file failed"
echo 1 >"$ns1/revalidate_size" || fail "revalidate_size failed"
within_2s "n1 is 96 MiB" size_is "$mnt/n1" $((96 << 20))
within_2s "the kernel initiator's n1 is 96 MiB" bdev_size_is "$dev" $((96 << 20))
head -c 1M /dev/urandom >/tmp/nsch-tail
dd if=/tmp/nsch-tail of="$mnt/n1" bs=1M seek=95 conv=notrunc,fsync status=none ||
	fail "writing the last MiB of the grown n1 failed"
cmp <(dd if="$dev" bs=1M skip=95 count=1 iflag=direct status=none) /tmp/nsch-tail ||
	fail "the last MiB of the grown n1 reads back differently through the kernel initiator"

log "namespace 2 is added"
truncate -s 32M /var/lib/nvmefs-testbed/nsch-2.img
mkdir "$sub/namespaces/2"
echo /var/lib/nvmefs-testbed/nsch-2.img >"$sub/namespaces/2/device_path"
echo 1 >"$sub/namespaces/2/buffered_io"
echo 1 >"$sub/namespaces/2/enable" || fail "enabling namespace 2 failed"
within_2s "n2 is listed" listed n2
size_is "$mnt/n2" $((32 << 20)) || fail "n2 is $(stat -c %s "$mnt/n2") bytes, not 32 MiB"
head -c 64K /dev/urandom >/tmp/nsch-n2
dd if=/tmp/nsch-n2 of="$mnt/n2" bs=64K seek=3 conv=notrunc,fsync status=none || fail "writing n2 failed"
dev2=$(kernel_connect_ns "$nqn" 2)
cmp <(dd if="$dev2" bs=64K skip=3 count=1 iflag=direct status=none) /tmp/nsch-n2 ||
	fail "what was written to n2 reads back differently through the kernel initiator"

log "namespace 2 is disabled, with n2 open"
exec 9<"$mnt/n2"
echo 0 >"$sub/namespaces/2/enable" || fail "disabling namespace 2 failed"
within_2s "n2 is no longer listed" unlisted n2
dd if=/proc/self/fd/9 of=/dev/null bs=4k count=1 iflag=direct status=none 2>/tmp/nsch-err &&
	fail "a read through the open n2 succeeded after the namespace was disabled"
log "a read through the open n2: $(cat /tmp/nsch-err)"
exec 9<&-
echo 1 >"$sub/namespaces/2/enable" || fail "enabling namespace 2 again failed"
within_2s "n2 is listed again" listed n2
dd if="$mnt/n2" of=/tmp/nsch-back bs=64K skip=3 count=1 iflag=direct status=none ||
	fail "reading n2 after it came back failed"
cmp /tmp/nsch-back /tmp/nsch-n2 || fail "n2 reads back differently after it came back"
stats=$(nvmefs_stats "$mnt" .controller.state)
[[ $stats == live ]] || fail "the controller is $stats, not live"
nvmefs_unmount "$mnt"
echo "PASS: the mount follows a namespace resized, added, removed and back, each within 2 s"
