#!/usr/bin/env bash
# testbed: --ns-size 64M --tls NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:
# Issue 38: a rootless container mounting over NVMe/TCP with TLS, given only the network (the
# host's) and /dev/fuse: rootless podman, an ordinary user's, on a read-only root file system as
# test-container.sh builds it (doc/CONTAINERS.md's options). The TLS key reaches it as a file in a
# volume, readable by its owner only (the container's root is that user), never on a command line:
# inside, while the mount runs, no process's arguments hold the key, and the daemon's stats name
# the suite. fio writes and verifies through the mount, 1 MiB written there is on the target's
# backing device, and tlshd logged a handshake for each of the mount's queues. TCP only, whatever
# the run's transport.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_tls
command -v podman >/dev/null || fail "podman is not installed on the host (contrib/setup-debian installs it)"
nqn=${subnqns[0]}
backing=/dev/nullb_s1n1
[[ -b $backing ]] || fail "$backing, the null_blk device behind namespace 1 of $nqn, is missing"
user=nvmefs-ctr
dir=/tmp/nvmefs-ctr-tls
uid=
cgroup_mounted=
# As test-container.sh's: every process of the user's (podman's rootless pause process), the
# files, the user (its home holds rootless podman's storage), /dev/fuse's mode.
cleanup() {
	user_procs_kill "$uid"
	rm -rf "$dir"
	[[ -z $cgroup_mounted ]] || umount /sys/fs/cgroup
	dev_restore
	test_user_remove
}
trap cleanup EXIT

test_user_add "$user" || fail "useradd $user failed"
uid=$(id -u "$user")
grep -q "^$user:" /etc/subuid || fail "useradd gave $user no range in /etc/subuid"
dev_open /dev/fuse || fail "chmod 0666 /dev/fuse failed"
if ! mountpoint -q /sys/fs/cgroup; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "mounting cgroup2 on /sys/fs/cgroup failed"
	cgroup_mounted=1
fi
# The root file system: empty directories for /usr and /etc (bind-mounted read-only), the links
# of the merged /usr, and a copy of nvmefs (the 9p-shared build tree need not let the user in).
rm -rf "$dir"
mkdir -p "$dir/shared" "$dir/rootfs/opt/nvmefs/lib" "$dir/rootfs/tmp"
if [[ -x $NVMEFS_BUILDDIR/src/cli/.libs/nvmefs ]]; then
	cp "$NVMEFS_BUILDDIR/src/cli/.libs/nvmefs" "$dir/rootfs/opt/nvmefs/" &&
		cp -P "$NVMEFS_BUILDDIR"/src/lib/.libs/libnvmefs.so* "$dir/rootfs/opt/nvmefs/lib/" || fail "copying nvmefs failed"
else
	cp "$NVMEFS" "$dir/rootfs/opt/nvmefs/nvmefs" || fail "copying $NVMEFS failed"
fi
for d in usr etc bin sbin lib lib64; do
	if [[ -L /$d ]]; then cp -P "/$d" "$dir/rootfs/$d"; elif [[ -d /$d ]]; then mkdir "$dir/rootfs/$d"; fi
done
printf '%s\n' "$NVMEFS_TEST_TLS_KEY" >"$dir/shared/tls.key"
# A piece of the key, to look for in every process's arguments (from a file: a pattern given as
# an argument would find itself).
printf '%s\n' "${NVMEFS_TEST_TLS_KEY:16:24}" >"$dir/shared/pattern"
head -c $((1 << 20)) /dev/urandom >"$dir/shared/data"
cat >"$dir/shared/mount.sh" <<'SH'
set -eu
[ ! -e /dev/infiniband ] || { echo "the container has RDMA device nodes" >&2; exit 1; }
mkdir -p /tmp/nvme
nvmefs mount -t tcp -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$NQN" \
	--tls-key /shared/tls.key --pidfile /tmp/nvme.pid /tmp/nvme
if grep -qF -f /shared/pattern /proc/[0-9]*/cmdline; then
	echo "the key shows in a process's arguments: $(grep -lF -f /shared/pattern /proc/[0-9]*/cmdline)" >&2
	exit 1
fi
fio --name=ctr --filename=/tmp/nvme/n1 --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
	--bs=4k --size=16M --verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 \
	--verify_state_save=0 --output-format=json --output=/shared/fio.json
dd if=/shared/data of=/tmp/nvme/n1 bs=64K seek=512 conv=notrunc,fsync status=none
cp /tmp/nvme/stats /shared/stats.json
pid=$(cat /tmp/nvme.pid)
umount /tmp/nvme
for i in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null || { echo "the daemon still runs 30 s after umount" >&2; exit 1; }
echo unmounted
SH
chown -R "$user:" "$dir"
chmod 0600 "$dir/shared/tls.key"

log "podman, rootless, as $user: --network host, --device /dev/fuse, --cap-add SYS_ADMIN, the key in a file"
before=$(tls_handshakes)
out=$(prlimit --memlock=$((64 << 20)):$((64 << 20)) setpriv --reuid="$user" --regid="$user" --init-groups \
	--reset-env -- env XDG_RUNTIME_DIR="$dir/run" timeout 180 podman --cgroup-manager=cgroupfs \
	--events-backend=file --storage-driver=vfs run --rm --cgroups=disabled --network host --read-only \
	-v /usr:/usr:ro -v /etc:/etc:ro -v "$dir/shared:/shared" --device /dev/fuse --cap-add SYS_ADMIN \
	-e PATH=/opt/nvmefs:/usr/sbin:/usr/bin -e LD_LIBRARY_PATH=/opt/nvmefs/lib -e "NQN=$nqn" \
	-e "NVMEFS_TEST_TRADDR=$NVMEFS_TEST_TRADDR" -e "NVMEFS_TEST_TRSVCID=$NVMEFS_TEST_TRSVCID" \
	--rootfs "$dir/rootfs" sh /shared/mount.sh 2>&1) || fail "the mount over TLS in a rootless podman container failed: $out"
tail -n 1 <<<"$out" | grep -qx unmounted || fail "the container did not unmount: $out"
jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes == 16777216 and .jobs[0].read.io_bytes == 16777216' \
	"$dir/shared/fio.json" >/dev/null ||
	fail "fio in the container: $(jq -c '.jobs[0] | {error, write: .write.io_bytes, read: .read.io_bytes}' "$dir/shared/fio.json")"
suite=$(jq -r .controller.tls "$dir/shared/stats.json")
[[ $suite == TLS_AES_128_GCM_SHA256 ]] || fail "the container's mount's stats say TLS '$suite', not TLS_AES_128_GCM_SHA256"
queues=$(jq -r .controller.io_queues "$dir/shared/stats.json")
[[ $(jq -r .total.errors "$dir/shared/stats.json") == 0 ]] || fail "the container's mount counts failed requests"
((($(tls_handshakes) - before) >= queues + 1)) ||
	fail "tlshd logged $(($(tls_handshakes) - before)) handshakes for the container's mount, fewer than its admin queue and $queues I/O queues"
dd if="$backing" bs=64K skip=512 count=16 iflag=direct status=none | cmp -s - "$dir/shared/data" ||
	fail "the 1 MiB written through the container's mount over TLS is not on the target's backing device"
log "fio wrote and verified 16 MiB over $suite on $((queues + 1)) queues ($(jq -r '.jobs[0].write.iops | floor' "$dir/shared/fio.json") write IOPS)"
check_run_transport
echo "PASS: a rootless podman container with only the network and /dev/fuse mounts over TLS (the key in a file, in no process's arguments): fio verify, data on the target"
