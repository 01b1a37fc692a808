#!/usr/bin/env bash
# testbed: --ns-size 64M
# Benchmark (not a test): where a mount's daemon spends CPU across an outage, per phase and thread,
# under test-outage-busy.sh's load (fio, 2 verifying jobs of 256 in flight and a writer of 16
# overlapping blocks) with the subsystem unlinked from the port for NVMEFS_OUTAGE_SECS seconds (10):
#   load       the same span of time before the fault, at full speed (for scale)
#   noticing   from the unlink until the controller leaves 'live' (it serves and drains meanwhile)
#   stopping   until it is 'connecting' (the queues stopped, drained and torn down)
#   probing    until the port is linked again (reconnect attempts against a refused port)
#   reconnect  until it is 'live' again
# and a row per thread kind: nvmefs-worker (summed), nvmefs-ctrl, nvmefs-notify, the others
# (main and FUSE threads, summed), and "exited" (the process's total less its live threads': threads
# that came and went). The stats are read every 0.1 s to see the state change; that costs the
# daemon a little in every phase.
# Numbers under 100 ms are within the per-thread accounting's noise (clock ticks, and threads' and
# the process's times rounded apart), so "exited" can come out negative. With NVMEFS_PROFILE=ctrl
# (or workers), the controller thread's (the workers') system calls for 2 s into the probing are
# printed, from strace.
#   NVMEFS_OUTAGE_SECS=10 tests/integration/run-in-testbed tests/bench/outage-cpu.sh
. "$(dirname "$0")/../integration/lib.sh"
require_nvmefs
syslog_start
secs=${NVMEFS_OUTAGE_SECS:-10}
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-cpu
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true' EXIT
cd /tmp
hz=$(getconf CLK_TCK)

# snapshot PID FILE: "KIND CPU_MS" for each thread kind, and "total CPU_MS" for the process.
snapshot() {
	local t f kind
	declare -A sum=([nvmefs-worker]=0 [nvmefs-ctrl]=0 [nvmefs-notify]=0 [other]=0)
	for t in /proc/"$1"/task/*; do
		read -r -a f <<<"$(sed 's/^.*) //' "$t/stat" 2>/dev/null)" || continue
		kind=$(<"$t/comm")
		[[ -v sum[$kind] ]] || kind=other
		sum[$kind]=$((sum[$kind] + (f[11] + f[12]) * 1000 / hz))
	done
	read -r -a f <<<"$(sed 's/^.*) //' "/proc/$1/stat")"
	for kind in "${!sum[@]}"; do echo "$kind ${sum[$kind]}"; done >"$2"
	echo "total $(((f[11] + f[12]) * 1000 / hz))" >>"$2"
}
get() { sed -n "s/^$2 //p" "$1"; }

nvmefs_mount "$nqn" "$mnt"
pid=$(nvmefs_pid "$mnt")
fio_load_start busy "$mnt/n1" $((secs + 35)) --iodepth=256 --numjobs=2 --size=16M \
	--offset_increment=16M --group_reporting
fio --name=overlap --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
	--bs=4k --offset=48M --size=64k --time_based --runtime=$((secs + 35)) \
	--output=/tmp/fio-overlap.out >/dev/null 2>&1 &
load_pids[overlap]=$!
wait_writes "$mnt" 1000 busy

declare -A at
at[load]=$(now_ms)
snapshot "$pid" /tmp/cpu.0
sleep_until "${at[load]}" $((secs * 1000))
at[noticing]=$(now_ms)
snapshot "$pid" /tmp/cpu.1
port_unlink "$nqn"
wait_ctrl_state "$mnt" '^(resetting|connecting)$' 15000
at[stopping]=$(now_ms)
snapshot "$pid" /tmp/cpu.2
wait_ctrl_state "$mnt" '^connecting$' 15000
at[probing]=$(now_ms)
snapshot "$pid" /tmp/cpu.3
case ${NVMEFS_PROFILE:-} in
ctrl) # The controller thread's system calls, timed, for 2 s.
	for t in /proc/"$pid"/task/*; do [[ $(<"$t/comm") == nvmefs-ctrl ]] && ctid=${t##*/}; done
	timeout -s INT 2 strace -tt -T -p "$ctid" -o /tmp/strace.out >/dev/null 2>&1 || true ;;
workers) # The workers' system calls, counted, for 2 s.
	wt=()
	for t in /proc/"$pid"/task/*; do [[ $(<"$t/comm") == nvmefs-worker ]] && wt+=(-p "${t##*/}"); done
	timeout -s INT 2 strace -c "${wt[@]}" -o /tmp/strace.out >/dev/null 2>&1 || true ;;
esac
sleep_until "${at[noticing]}" $((secs * 1000))
port_link "$nqn"
at[reconnect]=$(now_ms)
snapshot "$pid" /tmp/cpu.4
wait_ctrl_state "$mnt" '^live$' 20000
at[end]=$(now_ms)
snapshot "$pid" /tmp/cpu.5
log "controller: $(jq -c '.controller' "$mnt/stats")"

phases=(load noticing stopping probing reconnect end)
printf '%-14s' "CPU ms" && printf '%11s' "${phases[@]:0:5}" "outage" && echo
printf '%-14s' "(span ms)"
for i in 0 1 2 3 4; do printf '%11s' $((at[${phases[i + 1]}] - at[${phases[i]}])); done
printf '%11s\n' $((at[end] - at[noticing]))
for kind in nvmefs-worker nvmefs-ctrl nvmefs-notify other exited total; do
	printf '%-14s' "$kind"
	for i in 0 1 2 3 4 5; do
		a=/tmp/cpu.$i b=/tmp/cpu.$((i + 1))
		((i == 5)) && a=/tmp/cpu.1 b=/tmp/cpu.5
		if [[ $kind == exited ]]; then
			live=0
			for k in nvmefs-worker nvmefs-ctrl nvmefs-notify other; do
				live=$((live + $(get "$b" $k) - $(get "$a" $k)))
			done
			v=$(($(get "$b" total) - $(get "$a" total) - live))
		else
			v=$(($(get "$b" "$kind") - $(get "$a" "$kind")))
		fi
		printf '%11s' "$v"
	done
	echo
done
case ${NVMEFS_PROFILE:-} in
ctrl|workers) cat /tmp/strace.out ;;
esac
[[ -z $syslog_file ]] || grep -a nvmefs "$syslog_file" | tail -n 20
fio_load_check busy 150
load_wait overlap 150 || fail "the overlapping writer failed: $(cat /tmp/fio-overlap.out)"
nvmefs_unmount "$mnt"
