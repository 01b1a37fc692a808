#!/usr/bin/env bash
# testbed: --ns-size 64M
# Direct writes to one file from several threads overlap in the mount (libfuse >= 3.15 sets
# parallel_direct_writes on open, so the kernel takes the inode's lock shared for them): with four
# threads each writing with pwrite(2) on O_DIRECT, the mount's stats count more than one write in
# flight at once (writes_inflight_max), and fio's verify pass finds every block it wrote. With an
# older libfuse the kernel holds the inode's lock through each write's round trip: exactly one at a
# time, which the test then expects, so that it shows the difference either way.
# Also FUSE over io_uring: the default is /dev/fuse, faster on every kernel measured so far
# (doc/PERFORMANCE.md), also where the kernel offers the ring and nvmefs has libfuse >= 3.18: a
# mount without -o io_uring says "io_uring": false in its stats. There -o io_uring=on takes the
# ring (the stats say true), served by the workers: libfuse's own fuse-ring-N threads never run;
# where the kernel does not offer it, -o io_uring=on fails with one line. Over RDMA the ring's
# payloads are registered from the start (issue 34 item 7): right after mounting, before any I/O,
# pinned_bytes is the daemon's VmPin and more than the /dev/fuse mount's, and I/O leaves it as it is.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap nvmefs_cleanup EXIT
mnt=/tmp/nvmefs-pw
cd /tmp

# Whether the kernel offers FUSE over io_uring (a bool parameter: Y or N).
ring_kernel() { [[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]]; }

# The libfuse nvmefs runs with, from the file the loader resolves (libfuse3.so.3.14.0, ...).
lib=$(ldd "$NVMEFS" | awk '/libfuse3\.so/ { print $3 }')
ver=$(readlink -f "$lib" | sed -n 's/.*libfuse3\.so\.\([0-9]*\.[0-9]*\).*/\1/p')
[[ $ver =~ ^3\.[0-9]+$ ]] || fail "cannot tell the libfuse version of $NVMEFS from '$lib'"
minor=${ver#3.}
log "nvmefs runs with libfuse $ver ($lib)"

if ! ring_kernel; then
	log "-o io_uring=on where the kernel does not offer FUSE over io_uring"
	mkdir -p "$mnt.on"
	rc=0
	timeout 60 "$NVMEFS" mount -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" \
		-n "${subnqns[0]}" -o io_uring=on -f "$mnt.on" >/tmp/pw-on.out 2>&1 || rc=$?
	((rc != 0)) || fail "nvmefs mount -o io_uring=on succeeded on a kernel without the ring"
	! findmnt "$mnt.on" >/dev/null || fail "nvmefs mount -o io_uring=on failed but left a mount"
	grep -q 'io_uring=on' /tmp/pw-on.out ||
		fail "nvmefs mount -o io_uring=on failed without saying why: $(cat /tmp/pw-on.out)"
	log "it failed (exit $rc): $(grep 'io_uring=on' /tmp/pw-on.out | head -n 1)"
fi

# ring_threads DIR: libfuse's own ring threads in the daemon of the mount on DIR (0: grep finds
# none), which the workers serving the ring leave off.
ring_threads() { { grep -l '^fuse-ring-' /proc/"$(nvmefs_pid "$1")"/task/*/comm 2>/dev/null || true; } | wc -l; }

if ring_kernel && ((minor >= 18)); then
	log "the default where the kernel and libfuse offer FUSE over io_uring: /dev/fuse"
	NVMEFS_TEST_RING= nvmefs_mount "${subnqns[0]}" "$mnt.default"
	ring=$(nvmefs_stats "$mnt.default" .io_uring)
	[[ $ring == false ]] || fail "a mount without -o io_uring takes FUSE over io_uring (the stats say io_uring $ring), not /dev/fuse, the faster default"
	rings=$(ring_threads "$mnt.default")
	((rings == 0)) || fail "a mount without -o io_uring runs $rings fuse-ring-N threads"
	pinned_fuse=$(nvmefs_stats "$mnt.default" .memory.pinned_bytes)
	nvmefs_unmount "$mnt.default"
	nvmefs_mount "${subnqns[0]}" "$mnt" -o io_uring=on
	ring=$(nvmefs_stats "$mnt" .io_uring)
	[[ $ring == true ]] || fail "-o io_uring=on where the kernel and libfuse offer FUSE over io_uring: the stats say io_uring $ring"
	pinned_ring=$(nvmefs_stats "$mnt" .memory.pinned_bytes)
	if [[ $trtype == rdma ]]; then
		vmpin=$(awk '/^VmPin:/ { print $2 * 1024 }' "/proc/$(nvmefs_pid "$mnt")/status")
		((pinned_ring > pinned_fuse)) || fail "right after mounting with the ring, pinned_bytes is $pinned_ring, not more than /dev/fuse's $pinned_fuse: the ring's payloads are not registered from the start"
		((pinned_ring == vmpin)) || fail "right after mounting with the ring, pinned_bytes is $pinned_ring but the daemon's VmPin is $vmpin"
		log "pinned_bytes right after mounting: $pinned_ring with the ring, $pinned_fuse over /dev/fuse (VmPin $vmpin)"
	fi
	rings=$(ring_threads "$mnt")
	((rings == 0)) || fail "-o io_uring=on runs $rings of libfuse's fuse-ring-N threads: the workers serve the ring, not libfuse"
	log "-o io_uring=on: FUSE over io_uring, served by the workers"
else
	nvmefs_mount "${subnqns[0]}" "$mnt"
	ring=$(nvmefs_stats "$mnt" .io_uring)
	[[ $ring == false ]] || fail "FUSE over io_uring cannot be had here, the stats say io_uring $ring"
fi

log "four threads writing one file with pwrite(2), O_DIRECT"
fio --name=pw --filename="$mnt/n1" --ioengine=psync --direct=1 --thread --numjobs=4 \
	--rw=randwrite --bs=4k --size=4M --offset_increment=4M --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --randrepeat=0 --verify_state_save=0 --output-format=json \
	--output=/tmp/pw.json 2>/tmp/pw.err || fail "fio failed: $(cat /tmp/pw.err) $(tail -c 2000 /tmp/pw.json)"
# fio puts its warning that jobs share a file (their regions do not overlap) before the JSON.
sed -i -n '/^{/,$p' /tmp/pw.json
jq -e '[.jobs[].error] | all(. == 0)' /tmp/pw.json >/dev/null || fail "fio reports errors: $(jq -c '[.jobs[].error]' /tmp/pw.json)"
jq -e '[.jobs[].write.io_bytes] == [4194304, 4194304, 4194304, 4194304]' /tmp/pw.json >/dev/null ||
	fail "fio's jobs wrote $(jq -c '[.jobs[].write.io_bytes]' /tmp/pw.json) bytes, not 4 MiB each"
most=$(nvmefs_stats "$mnt" .writes_inflight_max)
if [[ -n ${pinned_ring:-} ]]; then
	# The kernel took the ring's entries (a refusal turns it back to /dev/fuse and false).
	ring=$(nvmefs_stats "$mnt" .io_uring)
	[[ $ring == true ]] || fail "after I/O over the ring, the stats say io_uring $ring: the kernel refused the ring's entries (see the daemon's log)"
	pinned=$(nvmefs_stats "$mnt" .memory.pinned_bytes)
	((pinned == pinned_ring)) || fail "pinned_bytes went from $pinned_ring right after mounting with the ring to $pinned after I/O"
fi
errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests"
if ((minor >= 15)); then
	((most > 1)) || fail "libfuse $ver: writes to one file never overlapped (writes_inflight_max $most): parallel_direct_writes is not in effect"
else
	((most == 1)) || fail "libfuse $ver cannot ask for parallel direct writes, yet $most writes to one file were in flight at once"
fi
nvmefs_unmount "$mnt"
echo "PASS: with libfuse $ver, direct writes to one file from four threads: at most $most in flight at once, verified"
