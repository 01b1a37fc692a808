#!/usr/bin/env bash
# testbed: --namespaces 2 --ns-size 32M
# A mounted subsystem behaves like a block device seen as files:
# - one file per namespace (n1, n2) beside info and stats, st_size = capacity, st_blksize = LBA
#   size; info and the user.nvmefs.* xattrs say what the kernel initiator's id-ctrl/id-ns say;
# - each fsync (and fdatasync) sends exactly one NVMe Flush (stats total.flushes);
# - fallocate --punch-hole and --zero-range, with unaligned edges, read back as zeros there and
#   leave every byte around them as it was;
# - a write past the end fails with ENOSPC and writes nothing; truncating to another size fails
#   with EPERM; O_TRUNC at open changes nothing; info and stats cannot be opened to write (EACCES).
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -f /tmp/sem-*' EXIT
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-sem
size=$NVMEFS_TEST_NS_SIZE
nvmefs_mount "$nqn" "$mnt"
[[ $NVMEFS_TEST_NAMESPACES == 2 ]] || fail "this test needs --namespaces 2"

log "the files"
names=$(cd "$mnt" && ls | tr '\n' ' ')
[[ $names == "info n1 n2 stats " ]] || fail "$mnt holds '$names', expected 'info n1 n2 stats'"
for f in n1 n2; do
	st=$(stat -c '%F %s %o' "$mnt/$f")
	[[ $st == "regular file $size 512" ]] ||
		fail "$mnt/$f: type, size, block size are '$st', expected 'regular file $size 512'"
done

log "info and xattrs against the kernel initiator's identify data"
dev1=$(kernel_connect "$nqn" 1)
dev2=$(kernel_connect_ns "$nqn" 2)
nvme id-ctrl "$dev1" -o json >/tmp/sem-id-ctrl || fail "nvme id-ctrl $dev1 failed"
trim() { sed 's/ *$//'; }
xattr() { getfattr --absolute-names --only-values -n "user.nvmefs.$1" "$2"; }
for k in mn:model sn:serial fr:firmware; do
	want=$(jq -r ".${k%:*}" /tmp/sem-id-ctrl | trim)
	got=$(jq -r ".${k#*:}" "$mnt/info")
	[[ $got == "$want" ]] || fail "info .${k#*:} is '$got', the kernel's id-ctrl ${k%:*} is '$want'"
	for f in n1 n2; do
		x=$(xattr "${k#*:}" "$mnt/$f") || fail "getfattr user.nvmefs.${k#*:} $mnt/$f failed"
		[[ $x == "$want" ]] || fail "xattr user.nvmefs.${k#*:} of $f is '$x', the kernel's id-ctrl ${k%:*} is '$want'"
	done
done
[[ $(jq -r .subnqn "$mnt/info") == "$nqn" ]] || fail "info .subnqn is '$(jq -r .subnqn "$mnt/info")', not $nqn"
[[ $(xattr subnqn "$mnt/n1") == "$nqn" ]] || fail "xattr user.nvmefs.subnqn is not $nqn"
[[ $(jq '.namespaces | length' "$mnt/info") == 2 ]] || fail "info lists $(jq '.namespaces | length' "$mnt/info") namespaces, not 2"
uuids=()
for nsid in 1 2; do
	dev=$dev1
	((nsid == 2)) && dev=$dev2
	f=n$nsid
	nvme id-ns "$dev" -o json >/tmp/sem-id-ns || fail "nvme id-ns $dev failed"
	nvme ns-descs "$dev" -o json >/tmp/sem-descs || fail "nvme ns-descs $dev failed"
	uuid=$(jq -r '.["ns-descs"][] | select(.type == "uuid") | .uuid' /tmp/sem-descs)
	[[ $uuid =~ ^[0-9a-f-]{36}$ ]] || fail "the kernel shows no UUID for namespace $nsid: $(cat /tmp/sem-descs)"
	uuids+=("$uuid")
	declare -A want=(
		[nsid]=$nsid [uuid]=$uuid [lba_size]=$(blockdev --getss "$dev") [capacity]=$(blockdev --getsize64 "$dev")
		[nguid]=$(jq -r .nguid /tmp/sem-id-ns) [eui64]=$(jq -r .eui64 /tmp/sem-id-ns)
	)
	for k in "${!want[@]}"; do
		x=$(xattr "$k" "$mnt/$f") || fail "getfattr user.nvmefs.$k $mnt/$f failed"
		[[ $x == "${want[$k]}" ]] || fail "xattr user.nvmefs.$k of $f is '$x', the kernel initiator says '${want[$k]}'"
	done
	jq -e --arg f "$f" --arg uuid "$uuid" --argjson nsid "$nsid" --argjson size "${want[capacity]}" \
		--argjson lba "${want[lba_size]}" --arg nguid "${want[nguid]}" --arg eui "${want[eui64]}" \
		'.namespaces[] | select(.file == $f) | .nsid == $nsid and .uuid == $uuid and .size == $size
		 and .lba_size == $lba and .nguid == $nguid and .eui64 == $eui' "$mnt/info" >/dev/null ||
		fail "info's entry for $f disagrees with the kernel initiator (nsid $nsid, uuid $uuid, size ${want[capacity]}, lba ${want[lba_size]}): $(jq -c --arg f "$f" '.namespaces[] | select(.file == $f)' "$mnt/info")"
	[[ ${want[capacity]} == "$size" ]] || fail "the kernel sees namespace $nsid with ${want[capacity]} bytes, not $size"
	unset want
done
[[ ${uuids[0]} != "${uuids[1]}" ]] || fail "both namespaces have the UUID ${uuids[0]}"
# The namespaces are distinct files: what is written to n2 is not in n1.
head -c 4096 /dev/urandom >/tmp/sem-n2
dd if=/tmp/sem-n2 of="$mnt/n2" bs=4096 seek=10 conv=notrunc status=none || fail "writing to $mnt/n2 failed"
kernel_read "$dev2" 40960 4096 >/tmp/sem-r
cmp -s /tmp/sem-n2 /tmp/sem-r || fail "data written to $mnt/n2 is not in the kernel's $dev2 (namespace 2)"
kernel_read "$dev1" 40960 4096 >/tmp/sem-r
cmp -s /tmp/sem-n2 /tmp/sem-r && fail "data written to $mnt/n2 turned up in namespace 1 ($dev1)"
kernel_disconnect_all

log "fsync sends one Flush each"
before=$(nvmefs_stats "$mnt" .total.flushes)
python3 - "$mnt/n1" <<'PY' || fail "fsync or fdatasync of $mnt/n1 failed"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, b"x" * 4096, 0)
os.fsync(fd)
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)
PY
after=$(nvmefs_stats "$mnt" .total.flushes)
((after - before == 3)) || fail "3 fsync/fdatasync calls made stats total.flushes go from $before to $after, not up by 3"
# A file opened only to read and closed sends no Flush.
dd if="$mnt/n1" of=/dev/null bs=64K count=16 status=none || fail "reading $mnt/n1 failed"
after2=$(nvmefs_stats "$mnt" .total.flushes)
((after2 == after)) || fail "reading and closing $mnt/n1 sent $((after2 - after)) Flush commands"

log "fallocate --punch-hole and --zero-range"
base=$((1 << 20))
head -c 131072 /dev/urandom >/tmp/sem-shadow
dd if=/tmp/sem-shadow of="$mnt/n1" bs=64K seek=$((base / 65536)) conv=notrunc status=none || fail "writing 128 KiB failed"
zw=$(nvmefs_stats "$mnt" '.total.write_zeroes + .total.deallocates')
# OFFSET LENGTH, relative to base: unaligned both ends; within one block; aligned; head only.
holes=(100:5000 20000:300 32768:8192 65000:1036)
zeros=(41000:9000 51210:10 73728:512 80001:16383)
punch_zero() {
	local mode=$1 r off len
	shift
	for r in "$@"; do
		off=${r%:*} len=${r#*:}
		fallocate "$mode" -o $((base + off)) -l "$len" "$mnt/n1" || fail "fallocate $mode -o $((base + off)) -l $len $mnt/n1 failed"
		python3 -c "import sys
f = open('/tmp/sem-shadow', 'r+b'); f.seek($off); f.write(bytes($len))"
	done
}
punch_zero --punch-hole "${holes[@]}"
punch_zero --zero-range "${zeros[@]}"
# The whole 128 KiB and a block on either side: zeros exactly where punched or zeroed.
dd if="$mnt/n1" of=/tmp/sem-r bs=512 skip=$((base / 512 - 1)) count=258 status=none || fail "reading back failed"
{ head -c 512 /dev/zero; cat /tmp/sem-shadow; head -c 512 /dev/zero; } >/tmp/sem-expect
# The blocks on either side were never written: zeros on the fresh null_blk namespace.
if ! cmp -s /tmp/sem-expect /tmp/sem-r; then
	at=$(cmp /tmp/sem-expect /tmp/sem-r | awk '{print $5}' | tr -d ,)
	fail "after fallocate, byte $((base - 512 + at - 1)) reads $(cmp -l /tmp/sem-expect /tmp/sem-r | wc -l) bytes differ from what the punched/zeroed ranges predict; the first at offset $((at - 513)) from the start of the written range"
fi
zw2=$(nvmefs_stats "$mnt" '.total.write_zeroes + .total.deallocates')
((zw2 > zw)) || fail "fallocate sent no Write Zeroes or Deallocate (stats stayed at $zw)"
log "fallocate sent $((zw2 - zw)) Write Zeroes/Deallocate commands"

log "writing past the end: ENOSPC, nothing written"
head -c 4096 /dev/urandom >/tmp/sem-last
dd if=/tmp/sem-last of="$mnt/n1" bs=4096 seek=$((size / 4096 - 1)) conv=notrunc status=none || fail "writing the last 4 KiB failed"
out=$(dd if=/dev/zero of="$mnt/n1" bs=1024 count=1 seek=$((size - 512)) oflag=seek_bytes conv=notrunc 2>&1) &&
	fail "a 1 KiB write at $((size - 512)) (straddling the end) succeeded: $out"
[[ $out == *"No space left on device"* ]] || fail "a write straddling the end failed, but not with ENOSPC: $out"
out=$(dd if=/dev/zero of="$mnt/n1" bs=512 count=1 seek=$((size / 512)) conv=notrunc 2>&1) &&
	fail "a write at the end ($size) succeeded: $out"
[[ $out == *"No space left on device"* ]] || fail "a write at the end failed, but not with ENOSPC: $out"
python3 - "$mnt/n1" "$size" <<'PY' || fail "see above"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for off in (int(sys.argv[2]) - 1, int(sys.argv[2]) + 4096, 1 << 50):
    try:
        n = os.pwrite(fd, b"z" * 2, off)
        print(f"FAIL: a 2-byte pwrite at {off} wrote {n} bytes instead of failing", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            print(f"FAIL: a 2-byte pwrite at {off} failed with {e.strerror}, not ENOSPC", file=sys.stderr)
            sys.exit(1)
PY
dd if="$mnt/n1" of=/tmp/sem-r bs=4096 skip=$((size / 4096 - 1)) status=none || fail "reading the last 4 KiB failed"
cmp -s /tmp/sem-last /tmp/sem-r || fail "the writes past the end changed the last 4 KiB of the namespace (part of them was written)"
[[ $(stat -c %s "$mnt/n1") == "$size" ]] || fail "after writes past the end, $mnt/n1 has size $(stat -c %s "$mnt/n1")"

log "truncate, O_TRUNC, writing info and stats"
for s in 0 $((size / 2)) $((size + 4096)); do
	out=$(truncate -s "$s" "$mnt/n1" 2>&1) && fail "truncate -s $s $mnt/n1 succeeded"
	[[ $out == *"Operation not permitted"* ]] || fail "truncate -s $s failed, but not with EPERM: $out"
done
truncate -s "$size" "$mnt/n1" || fail "truncate -s $size (the size it has) failed"
python3 -c "import os; os.close(os.open('$mnt/n1', os.O_WRONLY | os.O_TRUNC))" || fail "open with O_TRUNC failed"
[[ $(stat -c %s "$mnt/n1") == "$size" ]] || fail "after open(O_TRUNC) $mnt/n1 has size $(stat -c %s "$mnt/n1")"
dd if="$mnt/n1" of=/tmp/sem-r bs=4096 skip=$((size / 4096 - 1)) status=none
cmp -s /tmp/sem-last /tmp/sem-r || fail "open(O_TRUNC) changed the data"
for f in info stats; do
	out=$(sh -c "echo x >>'$mnt/$f'" 2>&1) && fail "writing to $mnt/$f succeeded"
	[[ $out == *"Permission denied"* ]] || fail "opening $mnt/$f to write failed, but not with EACCES: $out"
done
[[ $(nvmefs_stats "$mnt" .total.errors) == 0 ]] || fail "the stats count failed requests: $(jq -c .total "$mnt/stats")"
nvmefs_unmount "$mnt"
echo "PASS: files, identity, fsync, fallocate, ENOSPC, truncate and O_TRUNC behave as specified"
