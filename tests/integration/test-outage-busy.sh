#!/usr/bin/env bash
# testbed: --ns-size 64M
# A mount under more I/O than it has request buffers (fio, 2 verifying jobs of 256 in flight, on
# a default mount: 16 per worker, and a third job rewriting 16 blocks, so that writes wait on
# each other's reservations) while the subsystem is unlinked from the port for 10 s: the
# workers, with nothing they can send, sleep until the controller is back instead of spinning.
# From when the queues stopped to the outage's end, each worker wakes fewer than 100 times
# a second and the workers use under a tenth of the window's CPU; fio's verifying jobs run to
# their end with no I/O error and no verify error. The daemon's whole CPU time (every thread: the
# controller thread's reconnect attempts count too) is under a fifth of the outage's, 2 s in 10:
# counted from when the daemon has stopped its queues (its stats say 'connecting') to the relink.
# Before that it still serves, and then drains, the load of 528 I/Os: that is load, not outage.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-busy
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true' EXIT
cd /tmp

# The samples below read /proc with the shell's own reads, no command forked per thread: forks in
# a loaded guest took seconds and stretched the outage past its 10 s.
clk_tck=$(getconf CLK_TCK)

# cpu_ms STAT: sets ms to the user + system CPU time in the stat(5) file STAT, in ms.
cpu_ms() {
	local line f
	read -r line <"$1"
	read -r -a f <<<"${line##*) }"
	# Fields 14 and 15 of stat(5); the array starts at field 3.
	ms=$(((f[11] + f[12]) * 1000 / clk_tck))
}

# workers_sample PID: the workers' summed CPU ms and each one's voluntary context switches
# (wakeups), as "CPU_MS SWITCHES...".
workers_sample() {
	local t comm key value cpu=0 sw=()
	for t in /proc/"$1"/task/*; do
		read -r comm <"$t/comm"
		[[ $comm == nvmefs-worker ]] || continue
		cpu_ms "$t/stat"
		cpu=$((cpu + ms))
		while read -r key value; do
			[[ $key == voluntary_ctxt_switches: ]] && sw+=("$value")
		done <"$t/status"
	done
	((${#sw[@]})) || fail "no thread of PID $1 is named nvmefs-worker"
	echo "$cpu ${sw[*]}"
}

nvmefs_mount "$nqn" "$mnt"
pid=$(nvmefs_pid "$mnt")
fio_load_start busy "$mnt/n1" 45 --iodepth=256 --numjobs=2 --size=16M --offset_increment=16M \
	--group_reporting
fio --name=overlap --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
	--bs=4k --offset=48M --size=64k --time_based --runtime=45 --output=/tmp/fio-overlap.out \
	>/dev/null 2>&1 &
load_pids[overlap]=$!
wait_writes "$mnt" 1000 busy

start=$(now_ms)
port_unlink "$nqn"
wait_ctrl_state "$mnt" '^connecting$' 9000
t0=$(now_ms)
cpu_ms "/proc/$pid/stat"
before=$ms
read -r -a w0 <<<"$(workers_sample "$pid")"
((t0 - start <= 7000)) || fail "the queues stopped only $((t0 - start)) ms into the 10 s outage: too little of it is left to measure"
sleep_until "$start" 10000
read -r -a w1 <<<"$(workers_sample "$pid")"
cpu_ms "/proc/$pid/stat"
after=$ms
window=$(($(now_ms) - t0))
port_link "$nqn"
log "queues stopped $((t0 - start)) ms into the 10 s outage; over its last $window ms the daemon used $((after - before)) ms of CPU, the workers $((w1[0] - w0[0])) ms, wakeups ${w0[*]:1} -> ${w1[*]:1}"
fio_load_check busy 150
load_wait overlap 150 || fail "the overlapping writer failed: $(cat /tmp/fio-overlap.out)"
((after - before < window / 5)) ||
	fail "the daemon used $((after - before)) ms of CPU in $window ms of outage with its queues stopped: more than a fifth"
((w1[0] - w0[0] < window / 10)) ||
	fail "the workers used $((w1[0] - w0[0])) ms of CPU in $window ms of outage with nothing to send: they spin"
for ((i = 1; i < ${#w1[@]}; i++)); do
	rate=$(((w1[i] - w0[i]) * 1000 / window))
	((rate < 100)) || fail "a worker woke $rate times a second during the outage, with nothing to send: it polls"
done
nvmefs_unmount "$mnt"
echo "PASS: a 10 s outage under 528 I/Os in flight: the workers slept, the daemon used under a fifth of a CPU; fio verified with no error"
