#!/usr/bin/env bash
# testbed: --ns-size 64M
# nvmefs in real OCI containers. First rootless crun: an ordinary user, with no capabilities, runs
# crun; the container is a user namespace in which that user is root (uid 0 inside, the user
# outside), in the host's network namespace (where the soft-RoCE netdev is: rdma_cm resolves the
# target's address through the routes of the caller's network namespace). Its root file system is
# built here from the host's files, bind-mounted read-only (doc/CONTAINERS.md, "A plain OCI
# runtime"), with the RDMA device nodes and /dev/fuse bind-mounted in and RLIMIT_MEMLOCK set in
# config.json. Inside it: nvmefs discover agrees with nvme-cli's (run outside), nvmefs perf
# --verify finds no mismatch, and nvmefs mount mounts the subsystem in the container's mount
# namespace (container root has CAP_SYS_ADMIN in its user namespace only, which is enough for a
# FUSE mount: no fusermount3) for fio to write and verify through the namespace file; what is
# written is on the target. A bundle without a device node, or with too small a memlock limit,
# fails and says why. Then podman, rootless and rootful, with doc/CONTAINERS.md's options on the
# same root file system: discover, and the mount under fio.
# Over TCP (NVMEFS_TEST_TRTYPE=tcp, make check's .tcp run) the containers get /dev/fuse and the
# network and no RDMA device: no node of /dev/infiniband is in them (the mount job checks), and the
# cases of a missing RDMA device node or too small a memlock limit, which are RDMA's, are left out;
# and the TCP run adds doc/CONTAINERS.md's pod: in rootless podman, one container mounts on a
# volume shared with a second, which has no capability and no device and runs fio verify through
# the mount; podman stop of the first unmounts, and the second's reads fail at once. That pod is
# the TCP run's rootless podman: the RDMA run's rootless discover and mount job are not repeated.
. "$(dirname "$0")/lib.sh"
require_nvmefs
for c in crun podman newuidmap; do
	command -v "$c" >/dev/null || fail "$c is not installed on the host (contrib/setup-debian installs it)"
done
nqn=${subnqns[0]}
backing=/dev/nullb_s1n1
[[ -b $backing ]] || fail "$backing, the null_blk device behind namespace 1 of $nqn, is missing"
user=nvmefs-ctr
dir=/tmp/nvmefs-ctr
containers=() uid=
cni_lock=$(compgen -G /etc/cni/net.d/cni.lock || true)
# The containers crun may have left, every process of the user's (podman's rootless pause
# process), and the files. The test runs in a kept VM (the testbed's pool), so it also gives back
# what it changed beyond /tmp: the user (its home holds rootless podman's storage), rootful
# podman's storage and run state and the lock it leaves among the CNI configurations, which the
# guest had none of, and the device nodes' modes; what it cannot remove retires the VM.
cleanup() {
	local c
	for c in "${containers[@]}"; do
		as_user crun --root "$dir/run/crun" --cgroup-manager=disabled delete -f "$c" >/dev/null 2>&1 || true
	done
	user_procs_kill "$uid"
	rm -rf "$dir"
	[[ -z $cgroup_mounted ]] || umount /sys/fs/cgroup
	dev_restore
	test_user_remove
	rm -rf /var/lib/containers /run/containers /run/libpod /run/crun || testbed_retire
	[[ -n $cni_lock ]] || rm -f /etc/cni/net.d/cni.lock || testbed_retire
}
cgroup_mounted=
trap cleanup EXIT

log "the user, and access to /dev/fuse$([[ $trtype == tcp ]] || echo " and the RDMA devices")"
test_user_add "$user" || fail "useradd $user failed"
uid=$(id -u "$user") gid=$(id -g "$user")
log "before: $(stat -c '%A %n' /dev/fuse /dev/infiniband/* | tr '\n' ' ')"
dev_open /dev/fuse || fail "chmod 0666 /dev/fuse failed"
uverbs=
if [[ $trtype == rdma ]]; then
	dev_open /dev/infiniband/* || fail "no /dev/infiniband devices to open up"
	uverbs=$(compgen -G '/dev/infiniband/uverbs*' | head -n 1)
	[[ -n $uverbs ]] || fail "no /dev/infiniband/uverbs* device"
fi
# crun and podman look at the cgroup file system even when told to leave cgroups alone; the
# testbed's guest, with no init system, has none mounted.
if ! mountpoint -q /sys/fs/cgroup; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "mounting cgroup2 on /sys/fs/cgroup failed"
	cgroup_mounted=1
fi

# The root file system of every container here: empty directories for the host's /usr and /etc
# (bind-mounted read-only), the links into /usr that Debian 12's merged /usr has at the top, and
# nvmefs in /opt/nvmefs: the build tree is shared from the host over 9p, which need not let
# another user in, so the container gets a copy. When src/cli/nvmefs is libtool's wrapper script,
# the program is src/cli/.libs/nvmefs, and libnvmefs.so.0 goes along to /opt/nvmefs/lib.
rm -rf "$dir"
mkdir -p "$dir/run" "$dir/shared" "$dir/rootfs/opt/nvmefs/lib" "$dir/rootfs/shared" "$dir/rootfs/tmp"
builddir=$NVMEFS_BUILDDIR
if [[ -x $builddir/src/cli/.libs/nvmefs ]]; then
	cp "$builddir/src/cli/.libs/nvmefs" "$dir/rootfs/opt/nvmefs/nvmefs" || fail "copying nvmefs from $builddir failed"
	cp -P "$builddir"/src/lib/.libs/libnvmefs.so* "$dir/rootfs/opt/nvmefs/lib/" ||
		fail "copying libnvmefs.so.0 from $builddir failed"
else
	cp "$NVMEFS" "$dir/rootfs/opt/nvmefs/nvmefs" || fail "copying $NVMEFS failed"
fi
for d in usr etc bin sbin lib lib64 lib32 libx32; do
	if [[ -L /$d ]]; then
		cp -P "/$d" "$dir/rootfs/$d"
	elif [[ -d /$d ]]; then
		mkdir "$dir/rootfs/$d"
	fi
done
chown -R "$user:" "$dir"
chmod 0700 "$dir/run"

# as_user COMMAND...: COMMAND as $user, no capabilities, a locked-memory limit of 64 MiB (soft and
# hard: the most a container of the user's can be given, as limits.conf would set it) and its
# runtime directory.
as_user() {
	prlimit --memlock=$((64 << 20)):$((64 << 20)) setpriv --reuid="$user" --regid="$user" --init-groups \
		--reset-env -- env XDG_RUNTIME_DIR="$dir/run" "$@"
}

# bundle NAME MEMLOCK_BYTES CAPS DEVICES -- COMMAND...: an OCI bundle $dir/NAME whose process runs
# COMMAND (with the testbed's variables) as root in a user namespace that maps uid and gid 0 to
# $user's, with the capabilities CAPS (comma-separated, in that namespace; none if empty),
# RLIMIT_MEMLOCK at MEMLOCK_BYTES, and the device nodes DEVICES (comma-separated paths)
# bind-mounted from the host. The root file system is $dir/rootfs, read-only, with the host's /usr
# and /etc and /sys bind-mounted read-only, a tmpfs on /tmp, and $dir/shared writable on /shared.
# No network namespace of its own: the host's, where the RoCE netdev is (unless new_netns=1).
bundle() {
	local name=$1 memlock=$2 caps=$3 devices=$4
	shift 5
	mkdir -p "$dir/$name"
	NEW_NETNS=${new_netns:-} /usr/bin/python3 - "$dir" "$dir/$name/config.json" "$uid" "$gid" "$memlock" "$caps" "$devices" "$@" <<'PY' ||
import json, os, sys
top, path, uid, gid, memlock, caps, devices = sys.argv[1:8]
# What 'crun spec --rootless' writes, with the changes the comment above lists (and no cgroup
# mount: 'crun spec' needs a cgroup file system to probe).
caps = [x for x in caps.split(",") if x]
def bind(src, dst, *opts):
    return {"destination": dst, "type": "bind", "source": src, "options": ["rbind", *opts]}
c = {
    "ociVersion": "1.0.0",
    "process": {
        "terminal": False,
        "user": {"uid": 0, "gid": 0},
        "args": sys.argv[8:],
        "env": ["PATH=/opt/nvmefs:/usr/sbin:/usr/bin:/sbin:/bin", "LD_LIBRARY_PATH=/opt/nvmefs/lib", "HOME=/tmp"] + [
            f"{k}={os.environ[k]}" for k in ("NVMEFS_TEST_TRADDR", "NVMEFS_TEST_TRSVCID", "NVMEFS_TEST_SUBNQNS")],
        "cwd": "/tmp",
        "capabilities": {k: caps for k in ("bounding", "effective", "permitted", "ambient")},
        "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024},
                    {"type": "RLIMIT_MEMLOCK", "hard": int(memlock), "soft": int(memlock)}],
        "noNewPrivileges": True,
    },
    "root": {"path": f"{top}/rootfs", "readonly": True},
    "hostname": "nvmefs-ctr",
    "mounts": [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
         "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        # A user namespace that does not own the network namespace may not mount sysfs: the
        # host's /sys instead (libibverbs finds the RDMA devices there).
        bind("/sys", "/sys", "ro", "nosuid", "nodev", "noexec"),
        bind("/usr", "/usr", "ro"),
        bind("/etc", "/etc", "ro"),
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
        bind(f"{top}/shared", "/shared", "rw"),
    ] + [bind(dev, dev, "rw") for dev in devices.split(",") if dev],
    "linux": {
        "namespaces": [{"type": t} for t in ("pid", "ipc", "uts", "user", "mount")] +
                      ([{"type": "network"}] if os.environ.get("NEW_NETNS") else []),
        "uidMappings": [{"containerID": 0, "hostID": int(uid), "size": 1}],
        "gidMappings": [{"containerID": 0, "hostID": int(gid), "size": 1}],
        "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
        "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
    },
}
with open(path, "w") as f:
    json.dump(c, f, indent=1)
PY
		fail "writing $dir/$name/config.json failed"
	chown -R "$user:" "$dir/$name"
	containers+=("$name")
}

# ctr_run NAME: runs bundle NAME with crun as $user; the container's output on stdout and stderr.
# crun keeps its state under --root (by default $XDG_RUNTIME_DIR/crun when rootless); the testbed
# has no cgroups to delegate to the user.
ctr_run() {
	as_user timeout 120 crun --root "$dir/run/crun" --cgroup-manager=disabled run --bundle "$dir/$1" "$1"
}

all_devices=/dev/fuse
[[ $trtype == tcp ]] || all_devices=/dev/infiniband/rdma_cm,$uverbs,$all_devices
# shellcheck disable=SC2016 # the address expanded in the container
target="-t $trtype "'-a $NVMEFS_TEST_TRADDR -s $NVMEFS_TEST_TRSVCID'

# The mount job, for every runtime: /shared/mount.sh SEEK WAIT TRTYPE mounts the first subsystem
# over TRTYPE on /tmp/nvme (over TCP, first checking that the container has no RDMA device node), lets fio write 16 MiB at random and verify it (crc32c) through n1, writes
# /shared/data at SEEK x 64 KiB with dd, keeps fio's report and the stats in /shared; with WAIT 1 it
# then writes the daemon's PID to /shared/mounted and waits (at most 60 s) for /shared/go, so that
# the test can look at it from outside. It unmounts, and waits for the daemon to exit.
head -c $((1 << 20)) /dev/urandom >"$dir/shared/data"
cat >"$dir/shared/mount.sh" <<'SH'
set -eu
seek=$1 wait=$2 trtype=$3
rm -f /shared/fio.json /shared/stats.json
if [ "$trtype" = tcp ] && [ -e /dev/infiniband ]; then
	echo "the container has RDMA device nodes: $(ls /dev/infiniband | tr '\n' ' ')" >&2
	exit 1
fi
mkdir -p /tmp/nvme
nvmefs mount -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "${NVMEFS_TEST_SUBNQNS%% *}" \
	--pidfile /tmp/nvme.pid /tmp/nvme
echo "mounted: $(findmnt -n -o FSTYPE,OPTIONS --mountpoint /tmp/nvme); files: $(ls /tmp/nvme | tr '\n' ' ')"
fio --name=ctr --filename=/tmp/nvme/n1 --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
	--bs=4k --size=16M --verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 \
	--verify_state_save=0 --output-format=json --output=/shared/fio.json
dd if=/shared/data of=/tmp/nvme/n1 bs=64K seek="$seek" conv=notrunc,fsync status=none
cp /tmp/nvme/stats /shared/stats.json
pid=$(cat /tmp/nvme.pid)
if [ "$wait" = 1 ]; then
	echo "$pid" >/shared/mounted
	for i in $(seq 600); do [ -e /shared/go ] && break; sleep 0.1; done
fi
umount /tmp/nvme
for i in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null || { echo "the daemon still runs 30 s after umount" >&2; exit 1; }
echo unmounted
SH
chown -R "$user:" "$dir/shared"

# check_mount WHAT SEEK OUTPUT: what mount.sh left says fio and the mount saw no error, and the
# 1 MiB written at SEEK x 64 KiB is on the target's backing device.
check_mount() {
	local what=$1 seek=$2 out=$3
	tail -n 1 <<<"$out" | grep -qx unmounted || fail "$what: the container did not unmount: $out"
	jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes == 16777216 and .jobs[0].read.io_bytes == 16777216' \
		"$dir/shared/fio.json" >/dev/null ||
		fail "$what: fio: $(jq -c '.jobs[0] | {error, write: .write.io_bytes, read: .read.io_bytes}' "$dir/shared/fio.json")"
	errors=$(jq -r .total.errors "$dir/shared/stats.json")
	[[ $errors == 0 ]] || fail "$what: the mount's stats count $errors failed requests"
	dd if="$backing" bs=64K skip="$seek" count=16 iflag=direct status=none | cmp -s - "$dir/shared/data" ||
		fail "$what: the 1 MiB written through the mount at $((seek * 64)) KiB is not on the target's backing device"
	log "$what: $(head -n 1 <<<"$out")"
	log "$what: fio wrote and verified 16 MiB ($(jq -r '.jobs[0].write.iops | floor' "$dir/shared/fio.json") write IOPS); the 1 MiB dd wrote at $((seek * 64)) KiB is on $backing"
}

log "crun runs as $user with no capabilities"
caps=$(as_user sh -c 'grep -E "^Cap(Eff|Prm|Amb)" /proc/self/status | tr -s "\t\n" "  "')
[[ $caps =~ ^(Cap[A-Za-z]+:\ 0+\ ){3}$ ]] || fail "$user's commands have capabilities: $caps"
[[ ! -u $(command -v crun) && -z $(getcap "$(command -v crun)" 2>/dev/null) ]] ||
	fail "crun is setuid or has file capabilities: $(ls -l "$(command -v crun)")"
log "$user's shell: $caps"

log "crun: discover in the container (no capabilities), the same log as nvme discover outside"
bundle discover $((64 << 20)) '' "$all_devices" -- sh -c "nvmefs discover $target -o json"
out=$(ctr_run discover 2>/tmp/ctr-err) || fail "nvmefs discover in the container failed: $(cat /tmp/ctr-err) $out"
ref=$(nvme discover -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -o json) || fail "nvme discover failed"
diff -u <(jq -S . <<<"$ref") <(jq -S . <<<"$out") ||
	fail "nvmefs discover in the container differs from nvme discover outside (- nvme, + nvmefs)"
jq -e --arg nqn "$nqn" 'any(.records[]; .subnqn == $nqn)' <<<"$out" >/dev/null ||
	fail "the discovery log from the container does not list $nqn: $out"
log "$(jq '.records | length' <<<"$out") records, $nqn among them"

log "crun: perf --verify in the container (no capabilities)"
bundle perf $((64 << 20)) '' "$all_devices" -- sh -c \
	"nvmefs perf $target -n $nqn -o json --verify --queues 2 --rw randrw --bs 4k --size 8M --time 1"
out=$(ctr_run perf 2>/tmp/ctr-err) || fail "nvmefs perf --verify in the container failed: $(cat /tmp/ctr-err) $out"
jq -e '.errors == 0 and .iops > 0 and .verify.mismatches == 0 and .verify.blocks_read > 0' <<<"$out" >/dev/null ||
	fail "perf --verify in the container: errors, no I/O or mismatches: $out"
log "$(jq -r '"\(.iops | floor) IOPS, \(.verify.blocks_read) blocks checked, \(.verify.mismatches) mismatches"' <<<"$out")"

log "crun: mount in the container (CAP_SYS_ADMIN in its user namespace), fio, unmount"
bundle mount $((64 << 20)) CAP_SYS_ADMIN "$all_devices" -- sh /shared/mount.sh 512 1 "$trtype"
rm -f "$dir/shared/mounted" "$dir/shared/go"
ctr_run mount >/tmp/ctr-mount.out 2>&1 &
ctr_pid=$!
mounted_or_ended() { [[ -s $dir/shared/mounted ]] || gone "$ctr_pid"; }
wait_until 120000 mounted_or_ended || true
[[ -s $dir/shared/mounted ]] || ! gone "$ctr_pid" || fail "the mount container ended early: $(cat /tmp/ctr-mount.out)"
[[ -s $dir/shared/mounted ]] || fail "the mount container did not get its mount up and used in 120 s: $(cat /tmp/ctr-mount.out)"
# From outside, while the container waits: each process of $user's in the init user namespace
# (timeout, crun) has no capabilities; the daemon is $user's too, with its capabilities in the
# container's user namespace only, in the container's mount namespace and in the host's network
# namespace; the mount is not in the host's mount namespace.
outside='' daemon=''
for s in /proc/[0-9]*/status; do
	p=${s#/proc/} p=${p%/status}
	[[ $(awk '/^Uid:/ {print $2}' "$s" 2>/dev/null) == "$uid" ]] || continue
	name=$(awk '/^Name:/ {print $2}' "$s") eff=$(awk '/^CapEff:/ {print $2}' "$s")
	if [[ $(readlink "/proc/$p/ns/user") == "$(readlink /proc/1/ns/user)" ]]; then
		[[ $eff =~ ^0+$ ]] || fail "$user's $name (PID $p) has capabilities in the init user namespace: CapEff $eff"
		outside+="$name "
	elif [[ $name == nvmefs ]]; then
		daemon=$p
	fi
done
[[ $outside == *crun* ]] || fail "no crun process of $user's found (those in the init user namespace: $outside)"
[[ -n $daemon ]] || fail "no nvmefs daemon of $user's found in a user namespace of its own"
[[ $(readlink "/proc/$daemon/ns/mnt") != "$(readlink /proc/1/ns/mnt)" ]] ||
	fail "the daemon (PID $daemon) runs in the init mount namespace"
[[ $(readlink "/proc/$daemon/ns/net") == "$(readlink /proc/1/ns/net)" ]] ||
	fail "the daemon (PID $daemon) is not in the host's network namespace"
! grep -q fuse.nvmefs /proc/1/mountinfo || fail "the container's mount shows in the host's mount namespace"
log "$user's processes in the init user namespace, each with CapEff 0: $outside"
log "the daemon (PID $daemon, $(cat "$dir/shared/mounted") inside): user $(stat -c %U "/proc/$daemon"), uid_map '$(tr -s ' ' <"/proc/$daemon/uid_map")', CapEff $(awk '/^CapEff:/ {print $2}' "/proc/$daemon/status") in its user namespace, $(awk '/^VmPin:/ {print $2, $3}' "/proc/$daemon/status") pinned"
: >"$dir/shared/go"
rc=0
wait "$ctr_pid" || rc=$?
((rc == 0)) || fail "the mount container exited $rc: $(cat /tmp/ctr-mount.out)"
check_mount crun 512 "$(cat /tmp/ctr-mount.out)"

# podman, rootless (the user namespace through newuidmap and /etc/subuid, as podman sets it up for
# any user) and rootful, with the options doc/CONTAINERS.md gives, on the same root file system
# (--rootfs: no image to pull here). The global options and --cgroups=disabled are for the
# testbed's guest, which has no systemd, journal or cgroup delegation.
podman_global=(--cgroup-manager=cgroupfs --events-backend=file --storage-driver=vfs)
podman_run=(run --rm --cgroups=disabled --network host --read-only
	-v /usr:/usr:ro -v /etc:/etc:ro -v "$dir/shared:/shared"
	--device /dev/fuse
	-e PATH=/opt/nvmefs:/usr/sbin:/usr/bin -e LD_LIBRARY_PATH=/opt/nvmefs/lib -e "NVMEFS_TEST_TRADDR=$NVMEFS_TEST_TRADDR"
	-e "NVMEFS_TEST_TRSVCID=$NVMEFS_TEST_TRSVCID" -e "NVMEFS_TEST_SUBNQNS=$NVMEFS_TEST_SUBNQNS")
[[ $trtype == tcp ]] || podman_run+=(--device /dev/infiniband/rdma_cm --device "$uverbs")

grep -q "^$user:" /etc/subuid || fail "useradd gave $user no range in /etc/subuid: $(cat /etc/subuid 2>&1)"
# Over TCP, rootless podman is the pod's below (a mount, and a second container's fio verify
# through it): the discover and the mount job of the RDMA run, once more over TCP, would show
# nothing the pod does not (issue 36 item 6: the suite's time).
if [[ $trtype == rdma ]]; then
	log "podman, rootless: discover"
	start=$(now_ms)
	out=$(as_user timeout 120 podman "${podman_global[@]}" "${podman_run[@]}" --rootfs "$dir/rootfs" \
		sh -c "nvmefs discover $target -o json" 2>/tmp/ctr-err) ||
		fail "nvmefs discover in a rootless podman container failed: $(cat /tmp/ctr-err) $out"
	jq -e --arg nqn "$nqn" 'any(.records[]; .subnqn == $nqn)' <<<"$out" >/dev/null ||
		fail "the discovery log from the rootless podman container does not list $nqn: $out"
	log "$(jq '.records | length' <<<"$out") records, $nqn among them ($(($(now_ms) - start)) ms, the first podman run of $user's)"

	log "podman, rootless: mount with --cap-add SYS_ADMIN and --ulimit memlock, fio, unmount"
	out=$(as_user timeout 120 podman "${podman_global[@]}" "${podman_run[@]}" --cap-add SYS_ADMIN \
		--ulimit memlock=$((64 << 20)):$((64 << 20)) --rootfs "$dir/rootfs" sh /shared/mount.sh 640 0 "$trtype" 2>&1) ||
		fail "the mount job in a rootless podman container failed: $out"
	check_mount "podman, rootless" 640 "$out"
fi

log "podman, rootful: mount with --cap-add SYS_ADMIN and --ulimit memlock=-1, fio, unmount"
out=$(timeout 120 podman "${podman_global[@]}" "${podman_run[@]}" --cap-add SYS_ADMIN \
	--ulimit memlock=-1:-1 --rootfs "$dir/rootfs" sh /shared/mount.sh 768 0 "$trtype" 2>&1) ||
	fail "the mount job in a rootful podman container failed: $out"
check_mount "podman, rootful" 768 "$out"

if [[ $trtype == tcp ]]; then
	# The pod of doc/CONTAINERS.md, "Two containers, one mount": rootless, over TCP (the issue's
	# recipe; RDMA's mount in rootless podman is the case above). A container of a rootless podman
	# runs in podman's user namespace, in a mount namespace that is a child of podman's own: a
	# mount made in one container reaches another only through a mount that is shared in podman's
	# namespace. The guest's / is private (no systemd), and podman's copy of it is too, so the
	# volume is made a shared mount there first.
	log "podman pod, rootless: the mount in one container, on a volume shared (rshared) with a second"
	pod=$dir/pod
	mkdir -p "$pod/nvme"
	chown -R "$user:" "$pod"
	P() { as_user timeout 120 podman "${podman_global[@]}" "$@"; }
	P unshare sh -c "mount --bind $pod $pod && mount --make-shared $pod" ||
		fail "making $pod a shared mount in podman's rootless mount namespace failed"
	# No infra container: it would need a pause image (or catatonit), and the pod's shared
	# namespaces are not what carries the mount: the volume's propagation is.
	P pod create --infra=false --name nvmefs-pod >/dev/null || fail "podman pod create failed"
	pod_run=(run --pod nvmefs-pod --cgroups=disabled --network host --read-only
		-v /usr:/usr:ro -v /etc:/etc:ro -v "$dir/shared:/shared"
		-e PATH=/opt/nvmefs:/usr/sbin:/usr/bin -e LD_LIBRARY_PATH=/opt/nvmefs/lib)
	rm -f "$dir/shared/pod.pid"
	P "${pod_run[@]}" -d --name nvmefs-mount --device /dev/fuse --cap-add SYS_ADMIN -v "$pod:/volume:rshared" \
		--rootfs "$dir/rootfs" nvmefs mount -f -t tcp -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
		--pidfile /shared/pod.pid /volume/nvme >/dev/null || fail "starting the mounting container failed"
	mount_up() { [[ -s $dir/shared/pod.pid ]] || [[ $(P inspect --format '{{.State.Running}}' nvmefs-mount) != true ]]; }
	wait_until 120000 mount_up || true
	[[ -s $dir/shared/pod.pid ]] || fail "the mounting container did not mount in 120 s: $(P logs nvmefs-mount 2>&1)"
	! grep -q fuse.nvmefs /proc/1/mountinfo || fail "the pod's mount shows in the host's mount namespace"

	log "podman pod, rootless: the workload (no capabilities, no /dev/fuse, the volume rslave) runs fio verify"
	out=$(P "${pod_run[@]}" --rm --cap-drop all -v "$pod:/volume:rslave" --rootfs "$dir/rootfs" sh -c '
		grep "^CapEff:" /proc/self/status
		[ ! -e /dev/fuse ] || { echo "the workload has /dev/fuse" >&2; exit 1; }
		grep " /volume/nvme " /proc/self/mountinfo
		exec fio --name=pod --filename=/volume/nvme/n1 --ioengine=libaio --direct=1 --iodepth=16 \
			--rw=randwrite --bs=4k --size=16M --verify=crc32c --verify_fatal=1 --do_verify=1 \
			--randrepeat=0 --verify_state_save=0 --output-format=json --output=/shared/pod-fio.json' 2>&1) ||
		fail "the workload container failed: $out"
	[[ $(head -n 1 <<<"$out") =~ ^CapEff:[[:space:]]+0+$ ]] || fail "the workload has capabilities: $out"
	[[ $(sed -n 2p <<<"$out") == *" master:"*" - fuse.nvmefs "* ]] ||
		fail "the workload does not see the mount as a slave of the volume: $out"
	jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes == 16777216 and .jobs[0].read.io_bytes == 16777216' \
		"$dir/shared/pod-fio.json" >/dev/null ||
		fail "the workload's fio: $(jq -c '.jobs[0] | {error, write: .write.io_bytes, read: .read.io_bytes}' "$dir/shared/pod-fio.json")"
	log "the workload: $(head -n 1 <<<"$out" | tr -s '\t' ' '), the mount in its namespace: $(sed -n 2p <<<"$out" | cut -d ' ' -f 5,7,9)"
	log "fio wrote and verified 16 MiB through the mount of the other container ($(jq -r '.jobs[0].write.iops | floor' "$dir/shared/pod-fio.json") write IOPS)"

	log "podman pod, rootless: podman stop of the mounting container while the workload reads"
	rm -f "$dir/shared/reading"
	P "${pod_run[@]}" -d --name nvmefs-reader --cap-drop all -v "$pod:/volume:rslave" --rootfs "$dir/rootfs" sh -c '
		dd if=/volume/nvme/n1 of=/dev/null bs=4k count=1 iflag=direct status=none && : >/shared/reading
		fio --name=reader --filename=/volume/nvme/n1 --ioengine=psync --direct=1 --rw=randread --bs=4k \
			--size=16M --time_based --runtime=300' >/dev/null || fail "starting the reading container failed"
	reading() { [[ -e $dir/shared/reading ]] || [[ $(P inspect --format '{{.State.Running}}' nvmefs-reader) != true ]]; }
	wait_until 60000 reading || true
	[[ -e $dir/shared/reading ]] || fail "the reading container did not read in 60 s: $(P logs nvmefs-reader 2>&1)"
	sleep 2
	start=$(now_ms)
	P stop --time 60 nvmefs-mount >/dev/null || fail "podman stop of the mounting container failed"
	stopped_ms=$(($(now_ms) - start))
	rc=$(P inspect --format '{{.State.ExitCode}}' nvmefs-mount)
	((rc == 0)) || fail "the mounting container exited $rc on podman stop (SIGTERM), in $stopped_ms ms: $(P logs nvmefs-mount 2>&1)"
	start=$(now_ms)
	rc=$(P wait nvmefs-reader) || fail "the reading container still runs 120 s after the mount was stopped"
	out=$(P logs nvmefs-reader 2>&1)
	# A read the kernel had queued when the daemon closed /dev/fuse fails ECONNABORTED, one
	# after it ENOTCONN, and an open after the unmount ENOENT.
	errs='Software caused connection abort|Transport endpoint is not connected|No such file or directory'
	if ((rc == 0)) || [[ ! $out =~ $errs ]]; then
		fail "the reading container exited $rc after the mount was stopped, without ECONNABORTED, ENOTCONN or ENOENT: $out"
	fi
	log "the mounting container's log: $(P logs nvmefs-mount 2>&1 | tr '\n' ' ')"
	log "the mounting container exited 0 in $stopped_ms ms; the reader ended $(($(now_ms) - start)) ms later, status $rc: $(grep -m 1 -E "$errs" <<<"$out")"
	! P unshare mountpoint -q "$pod/nvme" || fail "$pod/nvme is still a mount point in podman's mount namespace"
	out=$(P "${pod_run[@]}" --rm --cap-drop all -v "$pod:/volume:rslave" --rootfs "$dir/rootfs" sh -c \
		'grep " /volume/nvme " /proc/self/mountinfo; ls -A /volume/nvme' 2>&1)
	[[ -z $out ]] || fail "a new container still sees the mount, or files under it: $out"
	log "the mount is gone from podman's namespace and from a new container of the pod"
	P rm nvmefs-mount nvmefs-reader >/dev/null
	P pod rm nvmefs-pod >/dev/null || fail "podman pod rm failed"
fi

discover="nvmefs discover $target"
if [[ $trtype == rdma ]]; then
	log "crun: a bundle without /dev/infiniband/rdma_cm: one clear line that names it"
	bundle no-rdma-cm $((64 << 20)) '' "$uverbs,/dev/fuse" -- sh -c "$discover"
	expect_failure "no rdma_cm" "/dev/infiniband/rdma_cm" 30000 -- ctr_run no-rdma-cm
fi

log "crun: a bundle without /dev/fuse: nvmefs's line names it"
bundle no-fuse $((64 << 20)) CAP_SYS_ADMIN "${all_devices%/dev/fuse}" -- sh -c \
	"mkdir /tmp/nvme && nvmefs mount $target -n $nqn /tmp/nvme"
# libfuse prints a line of its own first.
out=$(ctr_run no-fuse 2>&1) && fail "nvmefs mount succeeded without /dev/fuse: $out"
[[ $(tail -n 1 <<<"$out") =~ ^nvmefs\ mount:.*/dev/fuse ]] || fail "no /dev/fuse: the last line is not nvmefs's, naming /dev/fuse: $out"
[[ $(wc -l <<<"$out") -le 2 && $out == *"fuse: device not found"* ]] || fail "no /dev/fuse: more than libfuse's line and nvmefs's: $out"
log "no /dev/fuse: $(tr '\n' ' ' <<<"$out")"

if [[ $trtype == rdma ]]; then
	log "crun: memlock 64 KiB: one clear line with the limit and all the mount needs"
	# Root of the container's user namespace has no CAP_IPC_LOCK where it counts: the mount
	# checks the limit against its whole sum before connecting, not after the admin queue's
	# 124 KiB fail.
	bundle memlock $((64 << 10)) CAP_SYS_ADMIN "$all_devices" -- sh -c \
		"mkdir /tmp/nvme && nvmefs mount $target -n $nqn /tmp/nvme"
	expect_failure "memlock 64 KiB" "need [0-9]+ KiB of locked memory .*RLIMIT_MEMLOCK allows \\(64 KiB\\).*--ulimit memlock=" \
		30000 -- ctr_run memlock
fi

log "crun: a container with a network namespace of its own: one line, about the route"
new_netns=1 bundle netns $((64 << 20)) '' "$all_devices" -- sh -c "$discover"
expect_failure "own network namespace" "route|resolving the address|no RDMA device can reach|unreachable" 30000 -- ctr_run netns

if [[ $trtype == rdma ]]; then
	log "crun: a bundle without $uverbs: one clear line that names it"
	# The device is there (in /sys), its node is not: libibverbs then lists no device at all,
	# and the message must say which node is missing rather than that the machine has no RDMA
	# device.
	bundle no-uverbs $((64 << 20)) '' /dev/infiniband/rdma_cm,/dev/fuse -- sh -c "$discover"
	expect_failure "no $uverbs" "$uverbs" 30000 -- ctr_run no-uverbs
fi

log "$SECONDS s in all"
explained="a missing device node or memlock limit is explained"
[[ $trtype == rdma ]] || explained="no RDMA device node in any container; a rootless pod's second container, with no capability, ran fio verify through the first's mount, which podman stop unmounted"
check_run_transport
podman="discover and mount in rootless and rootful podman"
[[ $trtype == rdma ]] || podman="a mount in rootful podman"
echo "PASS ($trtype): nvmefs discover, perf --verify and a mount under fio verify in rootless crun (no capabilities outside the container), and $podman; $explained"
