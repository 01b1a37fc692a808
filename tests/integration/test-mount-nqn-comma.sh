#!/usr/bin/env bash
# testbed: --ns-size 64M
# A subsystem whose NQN has a comma and a backslash in it (an NQN is any UTF-8): the mount's
# fsname= option carries it whole, escaped as libfuse's option parser reads it, so the mount is
# made, and its source in the mount table is "nvmefs:" and the NQN as it is.
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn='nqn.2026-11.io.nvmefs.testbed:a,b\c'
sub=$NVMEFS_TEST_NVMET/subsystems/$nqn
port=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
mnt=/tmp/comma-mnt
cleanup() {
	nvmefs_cleanup
	rm -f "$port"
	[[ ! -d $sub/namespaces/1 ]] || { echo 0 >"$sub/namespaces/1/enable"; rmdir "$sub/namespaces/1"; }
	[[ ! -d $sub ]] || rmdir "$sub"
	ns_replace_undo
}
trap cleanup EXIT

dev=$(nullb_create nullb_comma $((64 << 20)) 512)
mkdir "$sub" || fail "creating the subsystem $nqn in nvmet's configfs failed"
echo 1 >"$sub/attr_allow_any_host"
mkdir "$sub/namespaces/1"
echo "$dev" >"$sub/namespaces/1/device_path"
echo 1 >"$sub/namespaces/1/enable" || fail "enabling namespace 1 of $nqn on $dev failed"
ln -s "$sub" "$port" || fail "linking $nqn to port 1 failed"

nvmefs_mount "$nqn" "$mnt"
src=$(findmnt -n -o SOURCE --mountpoint "$mnt")
[[ $src == "nvmefs:$nqn" ]] || fail "the mount's source is '$src', not 'nvmefs:$nqn'"
dd if="$mnt/n1" of=/dev/null bs=64k count=16 iflag=direct status=none || fail "reading $mnt/n1 failed"
nvmefs_unmount "$mnt"
echo "PASS: an NQN with a comma and a backslash mounts, and the mount table shows it whole"
