#!/usr/bin/env bash
# testbed: --ns-size 64M
# Issue 34 item 1: an old write must not land after a newer one once a TCP partition heals.
# Every packet of the mount's connections is dropped (iptables, matched on their own source
# ports) while a write of pattern A is in flight, so the I/O times out and the controller
# reconnects on new connections, where A is sent again and completes. Pattern B is then written
# over the same blocks and completes. Then the drop is lifted. Had the old sockets been closed
# gracefully, the kernel would still hold A in their send buffers and retransmit it to the
# target's old queues, which live on until their keep-alive timeout: A would land after B. Linux
# closes every queue socket abortively (SO_LINGER 0) for this reason. The target's backing device
# must hold B.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-stale
backing=$(cat "$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/1/device_path")
[[ -b $backing ]] || fail "namespace 1 of $nqn has no backing block device ('$backing')"
trap 'tcp_drop_lift; nvmefs_cleanup' EXIT

# Small enough to travel in the command capsule (the target's in-capsule data size is larger): a
# retransmitted capsule then carries its data, where a larger write would wait for an R2T.
len=4096
head -c "$len" /dev/zero | tr '\0' 'A' >/tmp/stale-a
head -c "$len" /dev/zero | tr '\0' 'B' >/tmp/stale-b

# A keep-alive timeout far past the test's length keeps the target's old controller, and so its
# old queues, alive until after the drop is lifted, as a target across a short partition does.
nvmefs_mount "$nqn" "$mnt" -i 1 -k 120 --io-timeout 2000 -c 1
[[ $(nvmefs_ctrl_stat "$mnt" state) == live ]] || fail "a fresh mount's controller is not live"
pid=$(nvmefs_pid "$mnt")
mapfile -t ports < <(ss -Htnp state established "( dport = :$NVMEFS_TEST_TRSVCID )" |
	awk -v pid="pid=$pid," 'index($0, pid) { n = split($3, a, ":"); print a[n] }')
((${#ports[@]} == 2)) || fail "expected the mount's admin and I/O queue connections, found ports: ${ports[*]:-none}"
log "dropping every packet of the connections from ports ${ports[*]}"
for p in "${ports[@]}"; do
	tcp_drop OUTPUT --sport "$p"
	tcp_drop OUTPUT --dport "$p"
done

start=$(now_ms)
dd if=/tmp/stale-a of="$mnt/n1" bs="$len" count=1 oflag=direct conv=notrunc status=none ||
	fail "writing A through the mount failed across the reconnect: $(jq -c .controller "$mnt/stats")"
reconnects=$(nvmefs_ctrl_stat "$mnt" reconnects)
((reconnects >= 1)) || fail "writing A ended without a reconnect: the drop did not hold it up"
log "A written after $(($(now_ms) - start)) ms, across $reconnects reconnect(s)"
mapfile -t now < <(ss -Htnp state established "( dport = :$NVMEFS_TEST_TRSVCID )" |
	awk -v pid="pid=$pid," 'index($0, pid) { n = split($3, a, ":"); print a[n] }')
for p in "${now[@]}"; do
	[[ " ${ports[*]} " != *" $p "* ]] || fail "the mount still uses the dropped connection from port $p"
done
dd if=/tmp/stale-b of="$mnt/n1" bs="$len" count=1 oflag=direct conv=notrunc status=none ||
	fail "writing B through the mount failed"
old=$(ss -Htno "( sport = :${ports[0]} or sport = :${ports[1]} )" | tr -s ' ' | tr '\n' ';')
log "the old connections now: ${old:-none}"
tcp_drop_lift
log "the drop lifted $(($(now_ms) - start)) ms after it began; waiting for what old sockets would retransmit"
# TCP's retransmission timer has backed off to several seconds by now: wait out two of its steps.
sleep 25
cmp -s <(dd if="$backing" bs="$len" count=1 iflag=direct status=none) /tmp/stale-b ||
	fail "the target's $backing starts with '$(dd if="$backing" bs=4096 count=1 iflag=direct status=none | head -c 1)', not B: an old write landed after the newer one"
nvmefs_unmount "$mnt"
echo "PASS: a write resent after a TCP partition did not land after the newer write once the partition healed"
