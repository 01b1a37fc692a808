#!/usr/bin/env bash
# testbed: --ns-size 96M --memory 2048 --mtu 1500
# The library's asynchronous I/O path moves data exactly: a 64 MiB image written by io-tool (random
# chunk sizes from one block to 2 MiB, so some are split at the 1 MiB MDTS, in random order, over 2
# queues with 8 in flight each, from one registered buffer) reads back byte-identical through the
# kernel initiator, and an image the kernel wrote reads back byte-identical through io-tool.
# It runs at the 1024-byte RDMA MTU of a standard Ethernet link, where every transfer of more than
# one small block is several packets; the other tests run on the testbed's jumbo-frame link.
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_io_tool
rdma_mtu=$(ibv_devinfo -d rxe0 | awk '/active_mtu/ { print $2 }')
[[ $rdma_mtu == 1024 ]] || fail "the testbed's RDMA MTU is '$rdma_mtu', not the 1024 asked for with --mtu 1500"
trap 'kernel_disconnect_all; rm -f /tmp/xc-*' EXIT
nqn=${subnqns[0]}
size=$((64 << 20))

log "io-tool writes a random 64 MiB image"
head -c "$size" /dev/urandom >/tmp/xc-image1
start=$(now_ms)
io_tool "$nqn" --queues 2 --qd 8 write /tmp/xc-image1 1234 || fail "io-tool write failed"
log "io-tool write took $(($(now_ms) - start)) ms"

log "the kernel initiator reads it back"
dev=$(kernel_connect "$nqn")
dd if="$dev" of=/tmp/xc-readback bs=1M count=64 iflag=direct status=none || fail "dd from $dev failed"
cmp /tmp/xc-image1 /tmp/xc-readback ||
	fail "what the kernel initiator read from $dev differs from the image io-tool wrote"
rm -f /tmp/xc-readback

log "the kernel initiator writes a new random image"
head -c "$size" /dev/urandom >/tmp/xc-image2
cmp -s /tmp/xc-image1 /tmp/xc-image2 && fail "urandom gave the same image twice"
dd if=/tmp/xc-image2 of="$dev" bs=1M oflag=direct status=none || fail "dd to $dev failed"
kernel_disconnect "$nqn"

log "io-tool reads it back"
rm -f /tmp/xc-image1
start=$(now_ms)
io_tool "$nqn" --queues 2 --qd 8 read /tmp/xc-out 5678 "$size" || fail "io-tool read failed"
log "io-tool read took $(($(now_ms) - start)) ms"
[[ $(stat -c %s /tmp/xc-out) == "$size" ]] || fail "io-tool read wrote $(stat -c %s /tmp/xc-out) bytes, not $size"
cmp /tmp/xc-image2 /tmp/xc-out || fail "what io-tool read differs from the image the kernel initiator wrote"
echo "PASS: 64 MiB io-tool write -> kernel read, kernel write -> io-tool read, byte-identical"
