#!/usr/bin/env bash
# testbed: --subsystems 1 --ns-size 64M
# A namespace disabled on the target under running I/O: nvmefs ends it as the kernel initiator
# does, side by side on the same namespace. nvmet answers I/O to a namespace of the subsystem
# that is disabled with Internal Path Error (status 0x300, without Do Not Retry:
# nvmet_req_find_ns()), for a host with another path to try. Linux's host sends the I/O again
# until the rescan that follows the target's Namespace Attribute Changed event finds the
# namespace gone, then fails it with EIO ("no available path - failing I/O") and its block
# device goes away. Here a loop of reads on the kernel's block device and one on the mount's
# file, and nvmefs perf (2 queues, I/O timeout 5 s), run while the namespace is disabled:
# - both read loops fail with EIO, nvmefs's no later than tolerance_ms after the kernel's;
# - perf exits 1 by itself (no signal, no core, no hang) within 15 s, saying its I/Os failed with
#   Internal Path Error, that nvmet answers so for a disabled namespace, and to enable it; the
#   mount's log says the same for its EIO;
# - the mount's file is no longer listed, as the kernel's block device is gone.
# Once the namespace is enabled again, perf runs, and the file and the device are back.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-nd
enable=$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/1/enable
[[ -w $enable ]] || fail "$enable is missing: cannot disable the namespace"
trap 'echo 1 >"$enable" 2>/dev/null || true; load_cleanup; nvmefs_cleanup; rm -f /tmp/nd-*' EXIT
perf() { "$NVMEFS" perf -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$@"; }
ulimit -c unlimited
cd /tmp
rm -f /tmp/core*
# What nvmefs says of the target's answer (src/common/status.c): what failed, why, what to do.
said='Internal Path Error \(NVMe status 0x300\): the target has no path to the namespace, as '
said+="Linux's nvmet answers while the namespace is disabled on it: enable the namespace on the target"
# Tolerance for the mount's EIO after the kernel's: the kernel holds the I/O until nvmet's event
# (sent once the namespace's I/O in flight has drained, about 0.5 s here), nvmefs tries a path
# error 5 times 100 ms apart while it reads the namespace list again (0.5 s and the emulated
# guest's scheduling): either can be first.
tolerance_ms=1000

kdev=$(kernel_connect "$nqn" 1)
nvmefs_mount "$nqn" "$mnt"
io_loop_start kernel "$kdev" read
io_loop_start mount "$mnt/n1" read
log "start perf (30 s, 2 queues, --io-timeout 5000), reads on $kdev and $mnt/n1; disable the namespace after 2 s"
timeout -s KILL 40 "$NVMEFS" perf -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
	--time 30 --io-timeout 5000 --queues 2 --rw randrw --bs 4k >/tmp/nd-out 2>/tmp/nd-err &
pid=$!
wait_progress "$pid" /tmp/nd-err 2
dmesg_lines=$(dmesg | wc -l)
# Timed from the start of the write: nvmet takes the namespace out of its list at once, then
# waits for its I/O in flight and tells the hosts (a Namespace Attribute Changed event), and
# returns from the write after closing the backing device, a second or more later here.
disabled=$(now_ms)
(
	while [[ -e $mnt/n1 ]] && ((($(now_ms) - disabled) < 20000)); do sleep 0.05; done
	echo "$(($(now_ms) - disabled))" >/tmp/nd-unlisted
) &
echo 0 >"$enable" || fail "disabling the namespace failed"
log "the write of 0 to $enable returned after $(($(now_ms) - disabled)) ms"
rc=0
wait "$pid" || rc=$?
elapsed=$(($(now_ms) - disabled))
io_loop_error kernel 30
k_ms=$((io_err_at - disabled)) k_err=$io_err
io_loop_error mount 30
m_ms=$((io_err_at - disabled)) m_err=$io_err
log "the kernel's messages: $(dmesg | tail -n +$((dmesg_lines + 1)) | grep -E 'nvme' | head -n 4 | tr '\n' '|')"
printf '# %-26s %-34s %s\n' "namespace disabled" "nvmefs" "kernel"
printf '# %-26s %-34s %s\n' "reads fail after" "$m_ms ms: $m_err" "$k_ms ms: $k_err"
printf '# %-26s %-34s %s\n' "perf exits after" "$elapsed ms, status $rc" "-"
log "the mount stopped listing n1 after $(cat /tmp/nd-unlisted 2>/dev/null) ms"
log "the mount's messages: $(grep nvmefs "$syslog_file" | tail -n 3 | tr '\n' '|')"

[[ $k_err == "Input/output error" ]] || fail "the kernel's reads failed with '$k_err', not EIO: the reference changed"
[[ $m_err == "Input/output error" ]] || fail "the mount's reads failed with '$m_err', where the kernel's failed with EIO"
((m_ms <= k_ms + tolerance_ms)) ||
	fail "the mount's reads failed $m_ms ms after the namespace was disabled, the kernel's after $k_ms ms (+${tolerance_ms} ms tolerance)"
((rc != 137)) || fail "perf hung: 'timeout 40' had to kill it ($elapsed ms after the namespace was disabled). stderr: $(cat /tmp/nd-err)"
((rc < 128)) || fail "perf died of signal $((rc - 128)): $(cat /tmp/nd-err)"
((rc == 1)) || fail "perf exited $rc, not 1, although its namespace was disabled under it: $(cat /tmp/nd-err)"
((elapsed <= 15000)) || fail "perf took $elapsed ms to give up after the namespace was disabled (at most 15000)"
compgen -G '/tmp/core*' >/dev/null && fail "perf dumped core: $(ls /tmp/core*)"
grep -Eq "^nvmefs perf: thread [0-9]+: [0-9]+ I/Os? failed, the first with: $said" /tmp/nd-err ||
	fail "perf did not say its I/Os failed with Internal Path Error, what nvmet answers for a disabled namespace, and what to do: $(grep -v '^\[' /tmp/nd-err)"
grep -v '^\[' /tmp/nd-err | head -n 3 | while read -r line; do log "perf: $line"; done
[[ -n $syslog_file ]] || fail "no syslog: the mount's message cannot be checked"
wait_until 5000 grep -Eq "nvmefs\[[0-9]+\]: n1, read at byte [0-9]+ \(4096 bytes\): $said.*; returning Input/output error" "$syslog_file" ||
	fail "the mount's log does not say its reads failed with Internal Path Error and why: $(grep nvmefs "$syslog_file" | tail -n 4)"
wait_until 5000 output_is "" ls "$mnt" -I info -I stats ||
	fail "the mount still lists n1 after namespace 1 was disabled"
[[ ! -e $kdev ]] || log "the kernel's $kdev is still there"

log "enable the namespace again: perf runs, and the mount's file and the kernel's device are back"
echo 1 >"$enable" || fail "enabling the namespace again failed"
perf --time 2 --queues 2 --io-timeout 5000 -o json >/tmp/nd-out 2>/tmp/nd-err ||
	fail "perf after re-enabling the namespace failed: $(cat /tmp/nd-err)"
jq -e '.errors == 0 and .iops > 0' /tmp/nd-out >/dev/null || fail "perf after re-enabling: $(cat /tmp/nd-out)"
wait_until 10000 test -e "$mnt/n1" || fail "the mount does not list n1 10 s after the namespace was enabled again"
dd if="$mnt/n1" of=/dev/null bs=4096 count=1 iflag=direct status=none || fail "reading $mnt/n1 after re-enabling failed"
wait_until 10000 kernel_ns_dev "$nqn" 1 >/dev/null || fail "the kernel has no device for namespace 1 10 s after it was enabled again"
nvmefs_unmount "$mnt"
echo "PASS: a disabled namespace: reads fail with EIO after $m_ms ms through the mount, $k_ms ms on the kernel's device; perf exits $rc after $elapsed ms naming the cause; re-enabled, all work again"
