#!/usr/bin/env bash
# testbed: --ns-size 64M
# The netdev soft-RoCE runs on taken down (ip link set DEV down) for 8 s under load, then up: the
# rxe port goes DOWN and the queue pairs fail, so the controller goes resetting, then connecting,
# and reconnects once the link is back. Across it, fio writing and verifying (crc32c) through the
# mounted file, and then nvmefs perf --verify, run to their end with no I/O error and no verify
# error. The mount's stats count the reconnect.
# In this testbed a link that goes down also breaks soft-RoCE's GSI queue pair for good (the first
# connection message sent while the port is down cannot be routed, whoever sends it: the target
# tearing its queues down does), so no initiator could connect on that device again: link_restore
# then re-creates the device, as a NIC reset would. nvmefs has to let go of the removed device and
# reconnect on the new one. (The kernel initiator does not recover: see test-outage-vs-kernel.sh.)
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
netdev=$(rxe_netdev)
trap 'load_cleanup; nvmefs_cleanup; ip link set "$netdev" up 2>/dev/null || true' EXIT
cd /tmp
outage_under_load "$nqn" /tmp/nvmefs-outage 8 link_down link_restore
check_run_transport
echo "PASS: 8 s link down under fio verify through the mount and under perf --verify: reconnected, no I/O or verify error"
