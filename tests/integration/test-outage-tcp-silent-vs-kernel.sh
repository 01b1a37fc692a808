#!/usr/bin/env bash
# testbed: --subsystems 2 --ns-size 64M
# Issue 34 item 10: a silent NVMe/TCP link (every segment dropped, no reset, no error on send) is
# noticed by nvmefs no later than by the kernel's nvme-tcp on the same fault. Both initiators run
# the same fio job at once over TCP, nvmefs through a mount of the first subsystem, the kernel on
# its block device of the second (one target, one port), with the same keep-alive timeout (5 s),
# I/O timeout (30 s), reconnect delay and loss timeout. Then every TCP segment to and from the
# target's service ids is dropped (iptables, both directions) for both at the same instant, and
# one loop polls both controllers' states: each is noticed when it leaves 'live'. Prints a table;
# nvmefs must notice no later than the kernel plus tolerance_ms. Then the drop is lifted and both
# must be live again, and both fio jobs end without an error.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
((${#subnqns[@]} >= 2)) || fail "the testbed has ${#subnqns[@]} subsystem(s): this test needs 2"
syslog_start
mnt=/tmp/nvmefs-silent
kato_s=5 io_timeout_s=30
trap 'tcp_drop_lift; load_cleanup; nvmefs_cleanup' EXIT
cd /tmp

# The kernel's I/O timeout is nvme_core's io_timeout: ours is set to the same.
k_io=$(cat /sys/module/nvme_core/parameters/io_timeout)
((k_io == io_timeout_s)) || fail "nvme_core.io_timeout is $k_io s, not the $io_timeout_s s this test sets for nvmefs"
kdev=$(kernel_connect "${subnqns[1]}" 1 -k "$kato_s" -c 1 -l 60)
kctrl=$(kernel_ctrl "${subnqns[1]}") || fail "no kernel controller for ${subnqns[1]}"
if [[ -e /sys/class/nvme/$kctrl/kato ]]; then
	[[ $(<"/sys/class/nvme/$kctrl/kato") == "$kato_s" ]] ||
		fail "the kernel's controller runs with KATO $(<"/sys/class/nvme/$kctrl/kato") s, not $kato_s"
fi
nvmefs_mount "${subnqns[0]}" "$mnt" -k "$kato_s" --io-timeout $((io_timeout_s * 1000)) -c 1 -l 60
log "the kernel ($kctrl, $kdev) and nvmefs ($mnt) are live, KATO $kato_s s, I/O timeout $io_timeout_s s"

fio_load_start kernel "$kdev" 40
fio_load_start nvmefs "$mnt/n1" 40
wait_writes "$mnt" 100 nvmefs
sleep 2
load_running kernel || fail "fio on the kernel's device ended early: $(cat /tmp/fio-kernel.err)"
[[ $(<"/sys/class/nvme/$kctrl/state") == live && $(nvmefs_ctrl_stat "$mnt" state) == live ]] ||
	fail "an initiator is not live under load: kernel $(<"/sys/class/nvme/$kctrl/state"), nvmefs $(nvmefs_ctrl_stat "$mnt" state)"

dmesg_lines=$(dmesg | wc -l)
syslog_lines=$(wc -l <"${syslog_file:-/dev/null}" 2>/dev/null || echo 0)
# INPUT sees every segment between the initiators and the target (all in this guest): both
# directions of every connection are dropped, as on a link that went silent.
for p in $NVMEFS_TEST_TRSVCIDS; do
	tcp_drop INPUT --dport "$p"
	tcp_drop INPUT --sport "$p"
done
# The fault's instant in the kernel's log's clock, and in ours.
echo "nvmefs-test: the link to the target is silent from here" >/dev/kmsg
t=${EPOCHREALTIME/./}
start=$((t / 1000))
log "every segment to and from port(s) $NVMEFS_TEST_TRSVCIDS dropped"

# When each noticed, each measured on its own so that neither's delay counts against the other:
# - the kernel: the time of its "starting error recovery" (logged as its controller leaves live)
#   after the marker, in the kernel log's clock;
# - nvmefs: its stats, read every 20 ms or so until the controller has left live, say how long
#   it has been in its state; that began when it left live, or later (reconnecting already),
#   which can only count against nvmefs. A read of the stats the daemon holds up counts from its
#   end, against nvmefs too.
# At most 60 s (twice the I/O timeout) for both.
n_ms="" n_state="" k_state=""
ws='[[:space:]]*'
while [[ -z $n_ms ]]; do
	read -r -d '' s <"$mnt/stats" || true
	t=${EPOCHREALTIME/./}
	now=$((t / 1000))
	[[ $s =~ \"controller\":$ws\{$ws\"state\":$ws\"([a-z]+)\".*\"time_in_state_ms\":$ws([0-9]+) ]] ||
		fail "the mount's stats show no controller state: $s"
	n_state=${BASH_REMATCH[1]}
	[[ $n_state == live ]] || n_ms=$((now - BASH_REMATCH[2] - start))
	((now - start <= 60000)) || break
	sleep 0.02
done
kernel_left_live() { read -r k_state <"/sys/class/nvme/$kctrl/state" || k_state=gone; [[ $k_state != live ]]; }
wait_until $((60000 - ($(now_ms) - start))) kernel_left_live || true
k_ms=$(dmesg | awk -v ctrl="$kctrl" '
	{ ts = $0; sub(/^\[ */, "", ts); sub(/\].*/, "", ts) }
	/nvmefs-test: the link to the target is silent/ { t0 = ts }
	t0 != "" && index($0, "nvme " ctrl ": starting error recovery") { printf "%d\n", (ts - t0) * 1000; exit }')
tcp_drop_lift
log "the drop lifted $(($(now_ms) - start)) ms after it began"
log "the kernel's messages: $(dmesg | tail -n +$((dmesg_lines + 1)) | grep -E "nvme|$kctrl" | head -n 4 | tr '\n' '|')"
[[ -n $syslog_file ]] && log "nvmefs's messages: $(tail -n +$((syslog_lines + 1)) "$syslog_file" | grep nvmefs | head -n 3 | tr '\n' '|')"

# Tolerance: the emulated guest's scheduling, which can hold either initiator's timer back by a
# few hundred ms when both reset at once.
tolerance_ms=250
printf '# %-34s %-20s %s\n' "silent TCP link: noticed after" nvmefs "kernel (nvme-tcp)"
printf '# %-34s %-20s %s\n' "" "${n_ms:-not in 60 s} ms (${n_state})" "${k_ms:-not in 60 s} ms (${k_state})"
[[ -n $k_ms ]] || fail "the kernel's nvme-tcp did not notice the silent link within 60 s"
[[ -n $n_ms ]] || fail "nvmefs did not notice the silent link within 60 s (the kernel did after $k_ms ms)"
((n_ms <= k_ms + tolerance_ms)) ||
	fail "nvmefs noticed the silent link after $n_ms ms, later than the kernel's $k_ms ms (+${tolerance_ms} ms tolerance)"

wait_ctrl_state "$mnt" '^live$' 20000
wait_until 20000 output_is live cat "/sys/class/nvme/$kctrl/state" ||
	fail "the kernel's controller is $(<"/sys/class/nvme/$kctrl/state") 20 s after the drop was lifted"
# Both live again: 2 s more of verified I/O through each, and the loads (40 s, a bound) stop.
load_stop_after nvmefs 2000
load_stop kernel
fio_load_check nvmefs 60
fio_load_check kernel 60
check_run_transport
nvmefs_unmount "$mnt"
echo "PASS: a silent TCP link noticed by nvmefs after $n_ms ms, by the kernel after $k_ms ms; both live again"
