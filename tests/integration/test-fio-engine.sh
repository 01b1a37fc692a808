#!/usr/bin/env bash
# testbed: --ns-size 32M
# The fio engine (fio-nvmefs.so, issue #37 item 2) runs fio's jobs straight on libnvmefs: random
# writes then fio's own verify (crc32c, fatal) of every block, at depth 16 sleeping on completions
# and at depth 1 polling with sizes mixed from 4 KiB to 512 KiB, two jobs at once each on its own
# queue; not one error, as much read back as written, over the run's transport only.  A job that
# lacks the target or names a namespace that is not there fails with one line saying so.
. "$(dirname "$0")/lib.sh"
engine=$NVMEFS_BUILDDIR/src/fio/.libs/fio-nvmefs.so
[[ -f $engine ]] || fail "$engine is not built: configure with --with-fio=DIR (contrib/fetch-fio-source DIR) and run make"
nqn=${subnqns[0]}
# fio writes state files in the working directory, the shared source tree: work in /tmp.
cd /tmp
trap 'rm -f /tmp/fe-*' EXIT
target=(--ioengine="external:$engine" --transport="$trtype" --traddr="$NVMEFS_TEST_TRADDR"
	--trsvcid="$NVMEFS_TEST_TRSVCID" --nqn="$nqn" --nsid=1)

# verify NAME JOBS MIB_PER_JOB FIO_OPTIONS...: JOBS jobs each write MIB_PER_JOB MiB at random in a
# range of their own and verify it.
verify() {
	local name=$1 jobs=$2 mib=$3 rc=0 start
	shift 3
	start=$(now_ms)
	fio --name="$name" --filename=ns1 "${target[@]}" --rw=randwrite --size=${mib}M \
		--numjobs="$jobs" --offset_increment=${mib}M --group_reporting=0 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 --verify_state_save=0 \
		--output-format=json --output="/tmp/fe-$name.json" "$@" 2>"/tmp/fe-$name.err" || rc=$?
	((rc == 0)) || fail "fio $name exited $rc: $(cat "/tmp/fe-$name.err") $(jq -c '[.jobs[] | {error, verify_errors}]' "/tmp/fe-$name.json" 2>/dev/null || tail -c 2000 "/tmp/fe-$name.json")"
	jq -e --argjson n $((mib << 20)) --argjson j "$jobs" '(.jobs | length) == $j and
		all(.jobs[]; .error == 0 and .write.io_bytes == $n and .read.io_bytes == $n)' \
		"/tmp/fe-$name.json" >/dev/null ||
		fail "fio $name: not every job wrote and verified $mib MiB without error: $(jq -c '[.jobs[] | {error, w: .write.io_bytes, r: .read.io_bytes}]' "/tmp/fe-$name.json")"
	log "$name: $jobs x $mib MiB written and verified in $(($(now_ms) - start)) ms ($(jq -r '[.jobs[].write.iops] | add | floor' "/tmp/fe-$name.json") write IOPS)"
}

verify qd16-event 1 8 --bs=4k --iodepth=16 --completions=event
verify qd1-poll-mixed 2 4 --bssplit=4k/40:16k/20:64k/20:512k/20 --iodepth=1 --completions=poll --thread
check_run_transport

# bad_job WHAT PATTERN FIO_OPTIONS...: the job fails, and the engine's one line matches PATTERN.
bad_job() {
	local what=$1 pattern=$2 rc=0
	shift 2
	fio --name=bad --filename=ns1 --rw=read --size=1M "$@" >/tmp/fe-bad.out 2>&1 || rc=$?
	((rc != 0)) || fail "fio ran a job with $what: $(cat /tmp/fe-bad.out)"
	grep -q "^nvmefs: job bad: $pattern" /tmp/fe-bad.out || fail "fio with $what did not say so in one line: $(cat /tmp/fe-bad.out)"
	log "$what: $(grep '^nvmefs:' /tmp/fe-bad.out | head -n 1)"
}
bad_job "no traddr" "traddr=, nqn= and nsid= are required" --ioengine="external:$engine" --nqn="$nqn" --nsid=1
bad_job "namespace 9" "namespace 9: " "${target[@]}" --nsid=9
echo "PASS: fio verify through the fio engine at depth 16 (event) and 1 (poll, 2 jobs, mixed sizes), bad jobs told in one line"
