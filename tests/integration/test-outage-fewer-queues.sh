#!/usr/bin/env bash
# testbed: --ns-size 64M
# The target grants fewer I/O queues at a reconnect, as blktests nvme/048 checks for the kernel:
# lowering nvmet's attr_qid_max to 1 under load drops every controller of the subsystem, and the
# reconnect gets one I/O queue where the mount has two (one per worker). The mount carries on, the
# second worker's I/O going through the first queue: fio writing and verifying (crc32c) through
# the file sees no error, and both workers keep doing I/O. attr_qid_max raised again forces
# another reconnect, which brings both queues back. With one queue again, reads one at a time
# leave the first worker idle while the second's I/O goes out on its queue: no I/O waits for the
# timeout, and the idle daemon sleeps (over TCP too). Then the same under nvmefs perf --verify with
# two queues on one thread, and, as the reference, the kernel initiator connected with two I/O
# queues under the same fio job on its block device.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-fewer
qid_max=$NVMEFS_TEST_NVMET/subsystems/$nqn/attr_qid_max
[[ -w $qid_max ]] || fail "$qid_max is missing: this nvmet has no attr_qid_max"
orig=$(cat "$qid_max")
((orig >= 2)) || fail "$qid_max is $orig: the test needs a target that grants 2 I/O queues"
trap 'load_cleanup; echo "$orig" >"$qid_max" 2>/dev/null; nvmefs_cleanup; kernel_disconnect_all' EXIT
cd /tmp

# set_qid_max N: nvmet takes the new limit and drops the subsystem's controllers, which reconnect.
set_qid_max() {
	echo "$1" >"$qid_max" || fail "writing $1 to $qid_max failed"
	log "attr_qid_max is $1"
}

# wait_io_queues DIR N: waits (20 s at most) for the mount's controller to be live with N I/O
# queues of its own.
wait_io_queues() {
	local dir=$1 want=$2
	live_with() { [[ $(jq -r '"\(.controller.state) \(.controller.io_queues)"' "$1/stats") == "live $2" ]]; }
	wait_until 20000 live_with "$dir" "$want" ||
		fail "the mount is not live with $want I/O queues after 20 s: $(jq -c .controller "$dir/stats")"
}

# worker_ios DIR: each worker's reads and writes so far, one line per worker.
worker_ios() { jq -r '.queues[] | .reads + .writes' "$1/stats"; }

log "fio through the mount (2 workers) while the target grants 1 I/O queue, then 2 again"
nvmefs_mount "$nqn" "$mnt" -c 1 -i 2
wait_io_queues "$mnt" 2
fio_load_start mount "$mnt/n1" 90
sleep 4
set_qid_max 1
wait_io_queues "$mnt" 1
log "live with 1 I/O queue: $(jq -c .controller "$mnt/stats")"
mapfile -t before < <(worker_ios "$mnt")
sleep 5
mapfile -t after < <(worker_ios "$mnt")
((${#after[@]} == 2)) || fail "the mount's stats list ${#after[@]} workers, not 2: $(jq -c .queues "$mnt/stats")"
for i in 0 1; do
	((after[i] > before[i])) ||
		fail "worker $i did no I/O while the target granted one queue: ${before[*]} -> ${after[*]}"
done
log "each worker's I/O over 5 s with one queue: $((after[0] - before[0])), $((after[1] - before[1]))"
load_running mount || fail "fio ended with one queue: $(cat /tmp/fio-mount.err)"
set_qid_max "$orig"
wait_io_queues "$mnt" 2
# Back on 2 queues: 2 s more of fio through them, and the load has done its part.
load_stop_after mount 2000
fio_load_check mount 120
errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests: $(jq -c 'del(.queues)' "$mnt/stats")"
reconnects=$(nvmefs_ctrl_stat "$mnt" reconnects)
((reconnects >= 2)) || fail "the mount reconnected $reconnects times, not twice: $(jq -c .controller "$mnt/stats")"

log "one read at a time through the mount while the target grants 1 I/O queue"
# One request at a time leaves the worker that did not read it idle: about half the reads are the
# second worker's, sent and answered on the first one's queue, which that worker must poll with
# nothing of its own in flight. Once, its socket's answer waited for the 30 s I/O timeout while the
# worker spun on the readable socket.
set_qid_max 1
wait_io_queues "$mnt" 1
reconnects=$(nvmefs_ctrl_stat "$mnt" reconnects)
# Which worker reads a request is the scheduler's choice, and one can take nearly all of them (400
# to 0 in one CI run): the reads come in rounds of 100 from one CPU, then the other, until worker 1
# has read some.
mapfile -t before < <(worker_ios "$mnt")
start=$(date +%s%N)
for cpu in 0 1 0 1; do
	timeout 25 taskset -c "$cpu" dd if="$mnt/n1" of=/dev/null bs=4k count=100 iflag=direct status=none ||
		fail "100 reads of 4 KiB one at a time through the mount did not end within 25 s (exit $?): I/O carried for the other worker waited for the I/O timeout"
	mapfile -t after < <(worker_ios "$mnt")
	((after[1] > before[1])) && break
done
log "$((after[0] + after[1] - before[0] - before[1])) reads one at a time with one queue: $((($(date +%s%N) - start) / 1000000)) ms, by worker: $((after[0] - before[0])), $((after[1] - before[1]))"
((after[1] > before[1])) || fail "worker 1 read nothing of 400 reads from either CPU: no I/O went through the other worker's queue"
[[ $(nvmefs_ctrl_stat "$mnt" reconnects) == "$reconnects" ]] ||
	fail "the mount reconnected during the reads (an I/O timed out?): $(jq -c .controller "$mnt/stats")"
errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests: $(jq -c 'del(.queues)' "$mnt/stats")"
# Idle with one queue for two workers, the daemon sleeps: a few ticks (keep-alive), not 10%.
pid=$(nvmefs_pid "$mnt")
hz=$(getconf CLK_TCK)
sleep 1
t0=$(cpu_ticks "$pid")
sleep 3
ticks=$(($(cpu_ticks "$pid") - t0))
log "idle with one queue, the daemon used $ticks ticks of $((3 * hz)) in 3 s"
((ticks * 10 < 3 * hz)) || fail "idle with one queue, the nvmefs daemon used $ticks clock ticks in 3 s (at $hz a second): it spins"
set_qid_max "$orig"
wait_io_queues "$mnt" 2
nvmefs_unmount "$mnt"

log "nvmefs perf --verify (2 queues, 1 thread) while the target grants 1 I/O queue, then 2 again"
perf_load_start fewer 20 -c 1
wait_progress "${load_pids[fewer]}" /tmp/perf-fewer.err 3
set_qid_max 1
wait_until 30000 grep -q "grants only 1 of the 2 I/O queues" /tmp/perf-fewer.err ||
	fail "perf did not report reconnecting with 1 of its 2 queues within 30 s: $(cat /tmp/perf-fewer.err)"
# Verified I/O on the one queue for a while, both queues' requests on it.
sleep 3
set_qid_max "$orig"
perf_load_check fewer 120 2
[[ $(jq -r .controller.io_queues /tmp/perf-fewer.json) == 2 ]] ||
	fail "perf ended with $(jq -r .controller.io_queues /tmp/perf-fewer.json) I/O queues, not 2"

log "the kernel initiator (2 I/O queues) under fio while the target grants 1, then 2 again"
dev=$(kernel_connect "$nqn" 1 -i 2 -c 1)
ctrl=$(kernel_ctrl "$nqn")
# The kernel's queue_count counts the admin queue too.
kernel_queues() { echo $(($(<"/sys/class/nvme/$ctrl/queue_count") - 1)); }
[[ $(kernel_queues) == 2 ]] || fail "the kernel connected with $(kernel_queues) I/O queues, not 2"
fio_load_start kernel "$dev" 20
sleep 3
set_qid_max 1
kernel_live_with_1() { [[ $(kernel_ctrl_state "$nqn") == live && $(kernel_queues) == 1 ]]; }
wait_until 20000 kernel_live_with_1 ||
	fail "the kernel initiator is $(kernel_ctrl_state "$nqn") with $(kernel_queues) I/O queues 20 s after the target granted 1, not live with 1"
log "kernel: $(kernel_ctrl_state "$nqn") with $(kernel_queues) I/O queue"
sleep 3
set_qid_max "$orig"
# The kernel back on 2 queues: 2 s more of fio, then the load ends (else it runs its time).
kernel_live_with_2() { [[ $(kernel_ctrl_state "$nqn") == live && $(kernel_queues) == 2 ]]; }
if wait_until 20000 kernel_live_with_2; then
	load_stop_after kernel 2000
fi
fio_load_check kernel 120
log "kernel: $(kernel_ctrl_state "$nqn") with $(kernel_queues) I/O queues at the end"
kernel_disconnect "$nqn"
echo "PASS: the target granting 1 of 2 I/O queues and then 2 again under fio verify through the mount and perf --verify: no I/O or verify error (the kernel initiator beside: the same); reads one at a time with one queue: none waited for the I/O timeout, and the idle daemon sleeps"
