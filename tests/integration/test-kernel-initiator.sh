#!/usr/bin/env bash
# testbed: --subsystems 3 --ports 2 --ns-size 64M
# The testbed's reference check: the kernel initiator (our reference peer and baseline) discovers
# every configured subsystem, connects, and the data it writes reads back intact, also after a
# reconnect (so the target really stored it).
. "$(dirname "$0")/lib.sh"
trap kernel_disconnect_all EXIT

log "discover on every port"
for port in $NVMEFS_TEST_TRSVCIDS; do
	disc=$(nvme discover -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$port" -o json) ||
		fail "nvme discover on port $port failed"
	for nqn in "${subnqns[@]}"; do
		jq -e --arg nqn "$nqn" --arg port "$port" \
			'[.records[] | select(.subnqn == $nqn and .trsvcid == $port and .trtype == "rdma")] | length == 1' \
			<<<"$disc" >/dev/null || fail "discovery on port $port does not list $nqn exactly once: $disc"
	done
done

log "connect to ${subnqns[0]}"
dev=$(kernel_connect "${subnqns[0]}")
size=$(blockdev --getsize64 "$dev")
[[ $size == "$NVMEFS_TEST_NS_SIZE" ]] || fail "$dev has $size bytes, the testbed configured $NVMEFS_TEST_NS_SIZE"

log "write 4 MiB of random data to $dev and read it back"
head -c 4M /dev/urandom >/tmp/pattern
dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of=/tmp/readback bs=1M count=4 iflag=direct status=none
cmp /tmp/pattern /tmp/readback || fail "data read back from $dev differs from what was written"

log "reconnect and read it again"
kernel_disconnect "${subnqns[0]}"
[[ ! -b $dev ]] || fail "$dev still exists after disconnect"
dev=$(kernel_connect "${subnqns[0]}")
dd if="$dev" of=/tmp/readback bs=1M count=4 iflag=direct status=none
cmp /tmp/pattern /tmp/readback || fail "data differs after a reconnect: the target did not keep it"
kernel_disconnect "${subnqns[0]}"
echo "PASS: kernel initiator discover, connect, 4 MiB write/read/compare, disconnect"
