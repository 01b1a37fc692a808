#!/usr/bin/env bash
# testbed: --ns-size 32M
# testbed-boot: own
# The life of a mount:
# - daemon mode: 'nvmefs mount --pidfile' returns once the mount is live, the pidfile holds the
#   live daemon's PID; SIGTERM (with a write in flight) unmounts and removes the pidfile, and every
#   write that succeeded is on the target; in the foreground (-f), SIGINT unmounts and the command
#   exits 0; idle after I/O, the daemon sleeps rather than using CPU;
# - kill -9 of the daemon leaves a mount on which ls and stat fail at once with "Transport
#   endpoint is not connected", and fusermount3 -u clears it; with -o auto_unmount, 'nvmefs mount'
#   still returns once live (fusermount3, which stays for the life of the mount, once inherited
#   the readiness pipe and held the command until unmount), and kill -9 unmounts by itself;
# - nvmefs list shows a live mount (path, namespaces, I/O counters), gives up on the mount of a
#   stopped daemon within its bound, and lists a killed daemon's mount as stale (ENOTCONN);
# - the fstab way: mount -t fuse.nvmefs SUBNQN DIR -o traddr=...,trsvcid=... (mount.fuse3 runs
#   nvmefs, found in the default PATH), and an /etc/fstab line with _netdev,noauto;
# - without -i, one I/O queue per CPU the mount may run on (taskset narrows it), said with -v;
# - 10 mount/unmount cycles (50 in make check-long) (daemon + fusermount3 -u, -f + fusermount3 -u): afterwards, and after
#   all of the above, the RDMA resources are back to the baseline and no nvmefs process is left.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -f /tmp/life-* /usr/local/bin/nvmefs; sed -i "/nvmefs-fstab/d" /etc/fstab' EXIT
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-life
runs=${NVMEFS_TEST_RUNS:-$(scaled 10 50)}
mount_args=(-a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn")
resources() { rdma res show | sed 's/^[0-9]*: //'; }
nvmefs_procs() { pgrep -x nvmefs | tr '\n' ' ' || true; }
# io_check DIR: 64 KiB written and read back through DIR/n1.
io_check() {
	head -c 65536 /dev/urandom >/tmp/life-w
	dd if=/tmp/life-w of="$1/n1" bs=64K seek=3 conv=notrunc status=none || fail "writing through $1/n1 failed"
	dd if="$1/n1" of=/tmp/life-r bs=64K skip=3 count=1 status=none || fail "reading through $1/n1 failed"
	cmp -s /tmp/life-w /tmp/life-r || fail "data read back through $1/n1 differs"
}
# mount_fg WHAT: starts 'nvmefs mount -f' on $mnt in the background (its PID in fgpid, its
# standard error in /tmp/life-fg) and waits up to 30 s for the mount; WHAT prefixes failures.
mount_fg() {
	local what=$1
	"$NVMEFS" mount "${mount_args[@]}" -f "$mnt" 2>/tmp/life-fg &
	fgpid=$!
	mounted_or_exited() { mountpoint -q "$mnt" || gone "$fgpid"; }
	wait_until 30000 mounted_or_exited ||
		fail "${what}nvmefs mount -f did not mount $mnt within 30 s: $(cat /tmp/life-fg)"
	mountpoint -q "$mnt" || fail "${what}nvmefs mount -f exited before mounting: $(cat /tmp/life-fg)"
}

log "warm up, then take the RDMA resource baseline"
# The first connections make ib_core fill its per-device CQ pool, which it keeps (users 0 in
# 'rdma res show cq'); the kernel initiator, used below, adds its own to it.
for ((i = 0; i < 2; i++)); do
	nvmefs_mount "$nqn" "$mnt"
	nvmefs_unmount "$mnt"
done
kernel_connect "$nqn" >/dev/null
kernel_disconnect "$nqn"
wait_until 10000 steady resources || fail "the RDMA resources do not settle after the warm-up: $(resources | tr '\n' ' ')"
baseline=$(resources)
log "baseline: $(tr '\n' ' ' <<<"$baseline")"

log "daemon mode with --pidfile"
rm -f "$mnt.pid"
start=$(now_ms)
nvmefs_mount "$nqn" "$mnt"
log "nvmefs mount returned after $(($(now_ms) - start)) ms"
[[ ! -s $mnt.out ]] || fail "nvmefs mount printed something although it succeeded: $(cat "$mnt.out")"
pid=$(nvmefs_pid "$mnt")
[[ $pid =~ ^[0-9]+$ ]] || fail "the pidfile holds '$pid', not a PID"
kill -0 "$pid" 2>/dev/null || fail "the pidfile's PID $pid is not running"
[[ $(cat "/proc/$pid/comm") == nvmefs ]] || fail "the pidfile's PID $pid is $(cat "/proc/$pid/comm"), not nvmefs"
io_check "$mnt"

log "an idle mount sleeps"
# After I/O, the workers wait for the next request; a completion event left pending once made
# them spin a whole CPU.  Over 3 s idle, the daemon may use a few ticks (keep-alive), not 10%.
sleep 1
t0=$(cpu_ticks "$pid")
sleep 3
ticks=$(($(cpu_ticks "$pid") - t0))
hz=$(getconf CLK_TCK)
log "the idle daemon used $ticks ticks of $((3 * hz)) in 3 s"
((ticks * 10 < 3 * hz)) || fail "the idle nvmefs daemon used $ticks clock ticks in 3 s (at $hz a second): it spins instead of sleeping"

log "SIGTERM, with a write in flight"
head -c 24M /dev/urandom >/tmp/life-src
dd if=/tmp/life-src of="$mnt/n1" bs=1M oflag=direct conv=notrunc 2>/tmp/life-dd &
ddpid=$!
# In flight for sure: dd has had 2 MiB of writes answered (what its write calls returned, in
# /proc/PID/io), and is still writing.
dd_wrote_over() { (($(sed -n 's/^wchar: //p' "/proc/$1/io" 2>/dev/null || echo 0) > $2)); }
wait_until 30000 dd_wrote_over "$ddpid" $((2 << 20)) || fail "dd did not write 2 MiB in 30 s: $(cat /tmp/life-dd)"
kill -0 "$ddpid" 2>/dev/null || fail "dd wrote all 24 MiB before SIGTERM: no write was in flight"
kill -TERM "$pid"
start=$(now_ms)
wait_unmounted "$mnt" 10000 || fail "$mnt is still mounted 10 s after SIGTERM to the daemon"
wait_gone "$pid" 10000 || fail "the daemon still runs 10 s after SIGTERM"
log "SIGTERM: unmounted and exited in $(($(now_ms) - start)) ms"
[[ ! -e $mnt.pid ]] || fail "the daemon exited after SIGTERM but left its pidfile"
wait "$ddpid" || true
# Every write dd saw succeed is on the target.
done_mib=$(sed -n 's/^\([0-9]*\)+0 records out$/\1/p' /tmp/life-dd)
[[ -n $done_mib ]] || fail "cannot tell how much dd wrote before SIGTERM: $(cat /tmp/life-dd)"
log "dd had written $done_mib MiB when the mount went away: $(grep -v records /tmp/life-dd | head -n 1)"
((done_mib > 0 && done_mib < 24)) || fail "dd wrote $done_mib MiB of 24: SIGTERM did not come with a write in flight"
dev=$(kernel_connect "$nqn")
cmp -n $((done_mib << 20)) /tmp/life-src "$dev" >/dev/null ||
	fail "of the $done_mib MiB whose writes succeeded before SIGTERM, the kernel initiator reads other data: $(cmp -n $((done_mib << 20)) /tmp/life-src "$dev" 2>&1)"
kernel_disconnect "$nqn"

log "foreground (-f) and SIGINT"
mount_fg ""
io_check "$mnt"
kill -INT "$fgpid"
rc=0
timeout 15 tail --pid="$fgpid" -f /dev/null || fail "nvmefs mount -f still runs 15 s after SIGINT"
wait "$fgpid" || rc=$?
((rc == 0)) || fail "nvmefs mount -f exited $rc after SIGINT, not 0: $(cat /tmp/life-fg)"
! mountpoint -q "$mnt" || fail "nvmefs mount -f exited after SIGINT but $mnt is still mounted"

log "kill -9 of the daemon, and nvmefs list before, while stopped and after"
nvmefs_mount "$nqn" "$mnt"
pid=$(nvmefs_pid "$mnt")
io_check "$mnt"
# list_mount: this mount's object in 'nvmefs list -o json', which must exit 0 within 30 s.
list_mount() {
	local out rc=0
	out=$(timeout 30 "$NVMEFS" list -o json 2>&1) || rc=$?
	((rc == 0)) || fail "nvmefs list -o json exited $rc: $out"
	jq -c --arg m "$mnt" '.mounts[] | select(.mountpoint == $m)' <<<"$out" || fail "nvmefs list -o json printed no JSON: $out"
}
got=$(list_mount)
jq -e --arg nqn "$nqn" --arg a "$NVMEFS_TEST_TRADDR" --arg s "$NVMEFS_TEST_TRSVCID" --arg t "$trtype" \
	'.state == "live" and .subnqn == $nqn and .paths == [{trtype: $t, traddr: $a, trsvcid: $s, state: "live"}] and
	 .namespaces[0].file == "n1" and .reads > 0 and .writes > 0' <<<"$got" >/dev/null ||
	fail "nvmefs list does not show the live mount on $mnt over $trtype to $NVMEFS_TEST_TRADDR:$NVMEFS_TEST_TRSVCID with its I/O: $got"
row=$("$NVMEFS" list | grep -F "$mnt ") || fail "nvmefs list's table has no row for $mnt: $("$NVMEFS" list 2>&1)"
[[ $row == *"$nqn"*"$trtype"*"$NVMEFS_TEST_TRADDR:$NVMEFS_TEST_TRSVCID"*live ]] ||
	fail "nvmefs list's row for $mnt lacks the NQN, transport, path or state: $row"
# A stopped daemon never answers: the listing gives up on it after its bound, and goes on.
kill -STOP "$pid"
start=$(now_ms)
got=$(list_mount)
elapsed=$(($(now_ms) - start))
kill -CONT "$pid"
jq -e '.state == "error" and .errno == -110' <<<"$got" >/dev/null ||
	fail "nvmefs list does not show the mount of a stopped daemon as timed out: $got"
# Its bound is 5 s; the rest is the command's start under emulation (up to 3 s on a loaded host).
((elapsed < 15000)) || fail "nvmefs list took $elapsed ms over the mount of a stopped daemon (its bound is 5 s)"
log "nvmefs list gave up on the stopped daemon's mount after $elapsed ms"
kill -KILL "$pid"
wait_gone "$pid" 5000 || fail "the daemon survived kill -9"
for cmd in "stat $mnt/n1" "ls $mnt" "stat -f $mnt"; do
	start=$(now_ms)
	# shellcheck disable=SC2086 # the command's words
	out=$(timeout 10 $cmd 2>&1) && fail "'$cmd' succeeded on the mount of a killed daemon: $out"
	elapsed=$(($(now_ms) - start))
	[[ $out == *"Transport endpoint is not connected"* ]] || fail "'$cmd' on the mount of a killed daemon failed, but not with ENOTCONN: $out"
	((elapsed < 5000)) || fail "'$cmd' on the mount of a killed daemon took $elapsed ms to fail"
done
got=$(list_mount)
jq -e --arg nqn "$nqn" '.state == "error" and .errno == -107 and .subnqn == $nqn and (.error | contains("fusermount3 -u"))' \
	<<<"$got" >/dev/null || fail "nvmefs list does not show the killed daemon's mount as stale (ENOTCONN): $got"
fusermount3 -u "$mnt" || fail "fusermount3 -u of the dead mount failed"
! mountpoint -q "$mnt" || fail "$mnt is still a mount point after fusermount3 -u"
rm -f "$mnt.pid"
nvmefs_mount "$nqn" "$mnt"
io_check "$mnt"
nvmefs_unmount "$mnt"

log "-o auto_unmount"
start=$(now_ms)
timeout 20 "$NVMEFS" mount "${mount_args[@]}" --pidfile "$mnt.pid" -o auto_unmount "$mnt" \
	>/tmp/life-au 2>&1 || fail "nvmefs mount -o auto_unmount did not return within 20 s (exit $?): $(cat /tmp/life-au)"
log "nvmefs mount -o auto_unmount returned after $(($(now_ms) - start)) ms"
mountpoint -q "$mnt" || fail "nvmefs mount -o auto_unmount returned 0 but $mnt is not mounted"
io_check "$mnt"
pid=$(nvmefs_pid "$mnt")
kill -KILL "$pid"
wait_gone "$pid" 5000 || fail "the daemon survived kill -9"
wait_unmounted "$mnt" 10000 || fail "$mnt is still mounted 10 s after kill -9 of a daemon mounted with auto_unmount"
rm -f "$mnt.pid"

log "mount -t fuse.nvmefs through mount.fuse3"
fmnt=/tmp/nvmefs-fstab
mkdir -p "$fmnt"
nvmefs_mounts+=("$fmnt")
command -v mount.fuse3 >/dev/null || fail "mount.fuse3 is missing in the testbed"
# mount(8) removes PATH from the environment of its helpers (util-linux sanitize_env), so the
# /bin/sh that mount.fuse3 runs 'nvmefs ...' with looks in the default PATH only: the build's
# nvmefs goes where 'make install' would put it (the guest's /usr is a throwaway overlay).
[[ ! -e /usr/local/bin/nvmefs ]] || fail "/usr/local/bin/nvmefs exists: the test would not run the build's nvmefs"
ln -s "$NVMEFS" /usr/local/bin/nvmefs
out=$(timeout 60 mount -t fuse.nvmefs "$nqn" "$fmnt" -o "traddr=$NVMEFS_TEST_TRADDR,trsvcid=$NVMEFS_TEST_TRSVCID" 2>&1) ||
	fail "mount -t fuse.nvmefs $nqn $fmnt -o traddr=...,trsvcid=... failed: $out"
[[ $(findmnt -n -o FSTYPE,SOURCE --mountpoint "$fmnt") == "fuse.nvmefs nvmefs:$nqn" ]] ||
	fail "after mount -t fuse.nvmefs, $fmnt is: $(findmnt "$fmnt" || echo 'not a mount point')"
io_check "$fmnt"
umount "$fmnt" || fail "umount $fmnt failed"
wait_until 10000 output_is '' nvmefs_procs || fail "nvmefs processes ($(nvmefs_procs)) still run 10 s after umount $fmnt"

log "an /etc/fstab line"
echo "$nqn $fmnt fuse.nvmefs traddr=$NVMEFS_TEST_TRADDR,trsvcid=$NVMEFS_TEST_TRSVCID,nr_io_queues=1,_netdev,noauto 0 0" >>/etc/fstab
out=$(timeout 60 mount "$fmnt" 2>&1) || fail "mount $fmnt (from /etc/fstab) failed: $out"
[[ $(jq .io_queues "$fmnt/info") == 1 ]] || fail "the fstab option nr_io_queues=1 was not applied: info says io_queues $(jq .io_queues "$fmnt/info")"
io_check "$fmnt"
umount "$fmnt" || fail "umount $fmnt failed"
wait_until 10000 output_is '' nvmefs_procs || true

log "without -i, a queue per CPU the mount may use, and -v says so"
out=$(timeout 60 "$NVMEFS" mount "${mount_args[@]}" --pidfile "$mnt.pid" -v "$mnt" 2>&1) || fail "nvmefs mount -v failed: $out"
[[ $(jq .io_queues "$mnt/info") == "$(nproc)" ]] || fail "without -i, $(nproc) CPUs gave $(jq .io_queues "$mnt/info") I/O queues"
grep -q "$(nproc) I/O queues and workers, chosen: one per CPU this process may use" <<<"$out" ||
	fail "nvmefs mount -v does not say how many queues it chose: $out"
nvmefs_unmount "$mnt"
out=$(timeout 60 taskset -c 0 "$NVMEFS" mount "${mount_args[@]}" --pidfile "$mnt.pid" "$mnt" 2>&1) || fail "nvmefs mount under taskset -c 0 failed: $out"
[[ $(jq .io_queues "$mnt/info") == 1 ]] || fail "under taskset -c 0, the mount made $(jq .io_queues "$mnt/info") I/O queues, not 1"
nvmefs_unmount "$mnt"

log "$runs mount/unmount cycles"
start=$(now_ms)
for ((i = 1; i <= runs; i++)); do
	if ((i % 2)); then
		nvmefs_mount "$nqn" "$mnt"
		dd if="$mnt/n1" of=/dev/null bs=4k count=1 status=none || fail "cycle $i: reading $mnt/n1 failed"
		nvmefs_unmount "$mnt"
	else
		mount_fg "cycle $i: "
		dd if="$mnt/n1" of=/dev/null bs=4k count=1 status=none || fail "cycle $i: reading $mnt/n1 failed"
		fusermount3 -u "$mnt" || fail "cycle $i: fusermount3 -u $mnt failed"
		rc=0
		timeout 30 tail --pid="$fgpid" -f /dev/null || fail "cycle $i: nvmefs mount -f still runs 30 s after fusermount3 -u"
		wait "$fgpid" || rc=$?
		((rc == 0)) || fail "cycle $i: nvmefs mount -f exited $rc after fusermount3 -u: $(cat /tmp/life-fg)"
	fi
	((i % 10)) || log "$i cycles, $((($(now_ms) - start) / i)) ms each"
done

log "nothing left behind"
[[ -z $(nvmefs_procs) ]] || fail "nvmefs processes are left: $(nvmefs_procs)"
! grep -q fuse.nvmefs /proc/mounts || fail "nvmefs mounts are left: $(grep fuse.nvmefs /proc/mounts)"
# The target releases a queue asynchronously after the disconnect.
wait_until 20000 output_is "$baseline" resources ||
	fail "after all this, the RDMA resources are '$(resources | tr '\n' ' ')', not the baseline '$(tr '\n' ' ' <<<"$baseline")'; CQs: $(rdma res show cq | tr '\n' '|')"
echo "PASS: daemon, pidfile, SIGTERM, SIGINT, kill -9, fstab and $runs mount cycles; nothing leaked"
