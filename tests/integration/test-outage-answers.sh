#!/usr/bin/env bash
# testbed: --ns-size 64M
# Held I/O does not take the mount's answers away: with fio holding more I/Os than the mount has
# request buffers (2 jobs of 256 in flight on a default mount, 16 per worker) while the subsystem
# is unlinked from the port, reading stats and info, listing the mount and stat'ing a namespace
# each answer within 5 s (without an answer they hang until the controller is back; while fio
# runs they take seconds in the emulated guest, whose CPUs it keeps busy); once the port is back
# fio runs to its end with no I/O error and no verify error.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-answers
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true' EXIT
cd /tmp

# answers WHAT COMMAND...: COMMAND must succeed within 5 s (it is killed after 10 s).
answers() {
	local what=$1 start rc=0 elapsed
	shift
	start=$(now_ms)
	timeout -s KILL 10 "$@" >/tmp/answers.out 2>&1 || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc == 0)) || fail "$what failed or hung (exit $rc after $elapsed ms): $(head -c 300 /tmp/answers.out)"
	((elapsed <= 5000)) || fail "$what took $elapsed ms, more than 5 s"
	log "$what answered in $elapsed ms"
}

nvmefs_mount "$nqn" "$mnt"
fio_load_start held "$mnt/n1" 45 --iodepth=256 --numjobs=2 --size=16M --offset_increment=16M \
	--group_reporting
wait_writes "$mnt" 1000 held
start=$(now_ms)
port_unlink "$nqn"
# The failure is seen within a second or two; the wait cannot read the stats, which are on trial.
sleep_until "$start" 4000
answers "during the outage, reading $mnt/stats" cat "$mnt/stats"
state=$(jq -r '.controller.state' /tmp/answers.out) || fail "$mnt/stats is not JSON: $(head -c 300 /tmp/answers.out)"
[[ $state != live ]] || fail "the controller is still live 4 s after the port was unlinked: $(jq -c '.controller' /tmp/answers.out)"
answers "during the outage, ls $mnt" ls "$mnt"
answers "during the outage, stat $mnt/n1" stat "$mnt/n1"
answers "during the outage, reading $mnt/info" cat "$mnt/info"
sleep_until "$start" 10000
port_link "$nqn"
fio_load_check held 150
nvmefs_unmount "$mnt"
echo "PASS: stats, ls, stat and info answered during an outage with every request buffer's I/O held"
