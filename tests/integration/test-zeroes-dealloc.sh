#!/usr/bin/env bash
# testbed: --ns-size 64M
# Write Zeroes and Deallocate through the library touch exactly the blocks asked for: over random
# data, the kernel initiator reads zeros in those ranges (null_blk discards on deallocate, so
# deallocated blocks read as zeros) and the original data everywhere else, to the byte.  The
# Write Zeroes range is larger than one command takes (65536 blocks of 512 bytes), so it is split;
# the ranges start and end on odd 512-byte blocks to catch an off-by-one.
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_io_tool
trap 'kernel_disconnect_all; rm -f /tmp/zd-*' EXIT
nqn=${subnqns[0]}
mib=48
# OFFSET LENGTH in bytes
zeroes=($(((1 << 20) + 512)) $(((33 << 20) + 1536)))
dealloc=($(((40 << 20) - 512)) $(((3 << 20) + 1024)))

dev=$(kernel_connect "$nqn")
bs=$(blockdev --getss "$dev")
((bs == 512)) || fail "the namespace has $bs-byte blocks; this test expects 512"

log "fill $mib MiB with random data through the kernel initiator"
head -c $((mib << 20)) /dev/urandom >/tmp/zd-expected
dd if=/tmp/zd-expected of="$dev" bs=1M oflag=direct status=none || fail "dd to $dev failed"

log "io-tool zeroes ${zeroes[*]}, dealloc ${dealloc[*]}, flush"
io_tool "$nqn" zeroes "${zeroes[@]}" || fail "io-tool zeroes ${zeroes[*]} failed"
io_tool "$nqn" dealloc "${dealloc[@]}" || fail "io-tool dealloc ${dealloc[*]} failed"
io_tool "$nqn" flush || fail "io-tool flush failed"

# What the namespace should hold now.
punch() { dd if=/dev/zero of=/tmp/zd-expected bs=512 seek=$(($1 / 512)) count=$(($2 / 512)) conv=notrunc status=none; }
punch "${zeroes[@]}"
punch "${dealloc[@]}"

log "the kernel initiator reads it all back"
dd if="$dev" of=/tmp/zd-actual bs=1M count=$mib iflag=direct status=none || fail "dd from $dev failed"
if ! cmp /tmp/zd-expected /tmp/zd-actual >/tmp/zd-cmp 2>&1; then
	diff_bytes=$(cmp -l /tmp/zd-expected /tmp/zd-actual | wc -l)
	fail "the namespace differs from the expected image in $diff_bytes bytes, the first at $(cat /tmp/zd-cmp)"
fi
# Not vacuous: the zeroed ranges held data before and the rest still does.
for r in "${zeroes[0]} ${zeroes[1]}" "${dealloc[0]} ${dealloc[1]}"; do
	read -r off len <<<"$r"
	cmp -s -n "$len" -i "$off:0" /tmp/zd-actual <(head -c "$len" /dev/zero) ||
		fail "bytes $off+$len are not all zero"
done
[[ $(head -c 512 /tmp/zd-actual | tr -d '\0' | wc -c) -gt 0 ]] || fail "the data before the ranges is gone"
echo "PASS: Write Zeroes ${zeroes[*]} (split) and Deallocate ${dealloc[*]} hit exactly their blocks"
