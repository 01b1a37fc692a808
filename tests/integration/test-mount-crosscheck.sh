#!/usr/bin/env bash
# testbed: --ns-size 64M
# What nvmefs writes through a mounted namespace file, the kernel initiator (the reference peer)
# reads back byte for byte from its block device for the same namespace, and the reverse; at
# aligned and unaligned offsets, with sizes from 1 byte to 8 MiB, up to the last byte. Then the
# whole namespace reads the same both ways. Last, with -o cached (the page cache): data written
# through the file and fsync'ed is what the kernel initiator reads.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -f /tmp/cc-*' EXIT
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-cross
size=$NVMEFS_TEST_NS_SIZE
nvmefs_mount "$nqn" "$mnt"
dev=$(kernel_connect "$nqn")
log "nvmefs mount on $mnt, kernel initiator on $dev"

# file_write OFF FILE: FILE's bytes into $mnt/n1 at byte OFF, in one write().
file_write() {
	local len
	len=$(stat -c %s "$2")
	dd if="$2" of="$mnt/n1" bs="$len" count=1 seek="$1" oflag=seek_bytes conv=notrunc status=none ||
		fail "writing $len bytes at $1 through $mnt/n1 failed"
}
# file_read OFF LEN: LEN bytes of $mnt/n1 at byte OFF, in one read().
file_read() {
	dd if="$mnt/n1" bs="$2" count=1 skip="$1" iflag=skip_bytes status=none ||
		fail "reading $2 bytes at $1 through $mnt/n1 failed"
}
# same WHAT EXPECTED ACTUAL: the two files are identical.
same() {
	cmp "$2" "$3" >/dev/null ||
		fail "$1: the bytes differ ($(cmp "$2" "$3" 2>&1 | head -n 1); sizes $(stat -c %s "$2") and $(stat -c %s "$3"))"
}

log "nvmefs writes, the kernel reads"
ranges=(0:4096 7680:512 1048699:777 5000000:1 5000001:4095 8388608:8388608 18345678:300000
	$((size - 4096)):4096 $((size - 1000)):1000)
# The ranges do not overlap, but for the last two: the last 1000 bytes are written twice.
i=0
for r in "${ranges[@]}"; do
	head -c "${r#*:}" /dev/urandom >/tmp/cc-w$i
	file_write "${r%:*}" /tmp/cc-w$i
	i=$((i + 1))
done
# What the overlapping ranges hold now: the later write won where they overlap.
i=0
for r in "${ranges[@]}"; do
	off=${r%:*} len=${r#*:}
	expect=/tmp/cc-w$i
	if ((off == size - 4096)); then
		# The last 1000 bytes were written again by the next range.
		{ head -c 3096 /tmp/cc-w$i; cat /tmp/cc-w$((i + 1)); } >/tmp/cc-expect
		expect=/tmp/cc-expect
	fi
	kernel_read "$dev" "$off" "$len" >/tmp/cc-r
	same "$len bytes written through the file at $off, read by the kernel" "$expect" /tmp/cc-r
	i=$((i + 1))
done

log "the kernel writes (O_DIRECT), nvmefs reads"
kranges=(20971520:4096 21000192:1536 25166336:1048576 $((size - 512)):512 31457280:8388608)
i=0
for r in "${kranges[@]}"; do
	off=${r%:*} len=${r#*:}
	head -c "$len" /dev/urandom >/tmp/cc-k$i
	dd if=/tmp/cc-k$i of="$dev" bs="$len" count=1 seek="$off" oflag=direct,seek_bytes conv=notrunc status=none ||
		fail "the kernel initiator's write of $len bytes at $off failed"
	i=$((i + 1))
done
i=0
for r in "${kranges[@]}"; do
	off=${r%:*} len=${r#*:}
	file_read "$off" "$len" >/tmp/cc-r
	same "$len bytes written by the kernel at $off, read through the file" /tmp/cc-k$i /tmp/cc-r
	# The same data read at unaligned offsets, partly.
	if ((len > 300)); then
		file_read $((off + 7)) $((len - 300)) >/tmp/cc-r
		tail -c +8 /tmp/cc-k$i | head -c $((len - 300)) >/tmp/cc-expect
		same "$((len - 300)) bytes written by the kernel at $((off + 7)), read through the file" /tmp/cc-expect /tmp/cc-r
	fi
	i=$((i + 1))
done

log "the whole namespace, both ways"
start=$(now_ms)
dd if="$mnt/n1" of=/tmp/cc-file bs=1M status=none || fail "reading all of $mnt/n1 failed"
dd if="$dev" of=/tmp/cc-kernel bs=1M iflag=direct status=none || fail "reading all of $dev failed"
[[ $(stat -c %s /tmp/cc-file) == "$size" ]] || fail "reading $mnt/n1 to the end gave $(stat -c %s /tmp/cc-file) bytes, not $size"
same "all $size bytes through the file and through the kernel" /tmp/cc-kernel /tmp/cc-file
log "compared $size bytes in $(($(now_ms) - start)) ms"
rm -f /tmp/cc-file /tmp/cc-kernel
nvmefs_unmount "$mnt"

log "-o cached: write through the page cache, fsync, the kernel reads"
nvmefs_mount "$nqn" "$mnt" -o cached
mode=$(jq -r .mode "$mnt/info")
[[ $mode == cached ]] || fail "mounted with -o cached, but $mnt/info says mode '$mode'"
head -c 1048909 /dev/urandom >/tmp/cc-c
flushes=$(nvmefs_stats "$mnt" .total.flushes)
dd if=/tmp/cc-c of="$mnt/n1" bs=64K seek=41943117 oflag=seek_bytes conv=notrunc,fsync status=none ||
	fail "the buffered write through $mnt/n1 (-o cached) failed"
kernel_read "$dev" 41943117 1048909 >/tmp/cc-r
same "1048909 bytes written through the page cache at 41943117 and fsync'ed, read by the kernel" /tmp/cc-c /tmp/cc-r
((flushes < $(nvmefs_stats "$mnt" .total.flushes))) || fail "fsync with -o cached sent no Flush (stats total.flushes stayed $flushes)"
log "-o cached: the kernel writes, nvmefs reads (a range not read through this mount before)"
head -c 65536 /dev/urandom >/tmp/cc-k
dd if=/tmp/cc-k of="$dev" bs=64K seek=800 oflag=direct conv=notrunc status=none || fail "the kernel initiator's write failed"
dd if="$mnt/n1" of=/tmp/cc-r bs=4k count=16 skip=12800 status=none || fail "reading through $mnt/n1 (-o cached) failed"
same "64 KiB written by the kernel at 50 MiB, read through the file with -o cached" /tmp/cc-k /tmp/cc-r
nvmefs_unmount "$mnt"
check_run_transport
echo "PASS: nvmefs and the kernel initiator read each other's writes byte for byte (direct and -o cached)"
