#!/usr/bin/env bash
# testbed: --backing loop --ns-size 2049G --lba-size 512
# fallocate --zero-range and --punch-hole over more than 2^32 blocks through the mount zero every
# block of the range, as the kernel initiator then reads, and nothing past it. 2049 GiB of 512-byte
# blocks is 2^32 + 2^21 blocks: a block count narrowed to 32 bits zeroes only the first GiB of the
# range and leaves the markers further in. The namespace is a sparse file behind a loop device, to
# which nvmet hands Write Zeroes as hole punches, so zeroing terabytes costs no memory.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -f /tmp/zh-*' EXIT
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-zh
size=$NVMEFS_TEST_NS_SIZE
((size / 512 > 1 << 32)) || fail "the namespace has $((size / 512)) blocks; this test needs more than 2^32"

dev=$(kernel_connect "$nqn")
bs=$(blockdev --getss "$dev")
((bs == 512)) || fail "the namespace has $bs-byte blocks; this test expects 512"
nvmefs_mount "$nqn" "$mnt"
file=$mnt/n1
[[ $(stat -c %s "$file") == "$size" ]] || fail "$file is $(stat -c %s "$file") bytes, the namespace $size"

# The range leaves 1 MiB at either end. Markers: two outside it, four inside (its first block, one
# past the first 2^32 blocks of it, one in the last 2^32 blocks, its last block).
first=$((1 << 20)) end=$((size - (1 << 20)))
outside=(0 "$end")
inside=("$first" $((first + (1 << 41) + 4096)) $((size / 2)) $((end - 4096)))
markers=("${outside[@]}" "${inside[@]}")

write_markers() {
	local m
	for m in "${markers[@]}"; do
		head -c 4096 /dev/urandom >"/tmp/zh-$m"
		dd if="/tmp/zh-$m" of="$file" bs=4096 seek=$((m / 4096)) conv=notrunc,fsync status=none ||
			fail "writing the 4 KiB marker at $m through the mount failed"
	done
}

# check_markers WHAT: the kernel initiator reads zeros at every marker inside the range and the
# marker itself at every one outside.
check_markers() {
	local m
	for m in "${inside[@]}"; do
		kernel_read "$dev" "$m" 4096 | cmp -s - <(head -c 4096 /dev/zero) ||
			fail "after $1 over bytes $first..$end, the 4 KiB at $m (inside) still hold data"
	done
	for m in "${outside[@]}"; do
		kernel_read "$dev" "$m" 4096 | cmp -s - "/tmp/zh-$m" ||
			fail "after $1 over bytes $first..$end, the 4 KiB at $m (outside) are no longer what was written"
	done
}

# The stats count zeroing commands as write_zeroes, punching ones as deallocates.
for mode in --zero-range:write_zeroes --punch-hole:deallocates; do
	counter=${mode#*:} mode=${mode%:*}
	write_markers
	# Not vacuous: the markers are on the target before the range is zeroed.
	for m in "${markers[@]}"; do
		kernel_read "$dev" "$m" 4096 | cmp -s - "/tmp/zh-$m" || fail "the marker written at $m is not on the target"
	done
	before=$(nvmefs_stats "$mnt" ".total.$counter")
	t0=$(now_ms)
	fallocate "$mode" -o "$first" -l $((end - first)) "$file" ||
		fail "fallocate $mode -o $first -l $((end - first)) $file failed"
	ms=$(($(now_ms) - t0))
	sent=$(($(nvmefs_stats "$mnt" ".total.$counter") - before))
	# Each Write Zeroes carries at most 65536 blocks.
	need=$((((end - first) / 512 + 65535) / 65536))
	((sent == need)) || fail "fallocate $mode over $(((end - first) / 512)) blocks counted $sent commands in stats $counter, not the $need it takes"
	log "fallocate $mode over $(((end - first) / 512)) blocks: $sent commands in $ms ms"
	check_markers "fallocate $mode"
	# The mount reads what the kernel initiator reads.
	for m in "${inside[@]}"; do
		dd if="$file" bs=4096 skip=$((m / 4096)) count=1 status=none | cmp -s - <(head -c 4096 /dev/zero) ||
			fail "after fallocate $mode, the mount reads data at $m where the kernel initiator reads zeros"
	done
done
nvmefs_unmount "$mnt"
echo "PASS: fallocate --zero-range and --punch-hole over $(((end - first) / 512)) blocks (more than 2^32) zero all of them and nothing else"
