#!/usr/bin/env bash
# testbed: --ns-size 64M
# nvmefs perf --verify checks every block it reads against what it wrote (randrw's report gives
# reads and writes apart, and --quiet leaves out only the progress lines): on 1, 2 and 4 queues,
# with a thread per queue or one thread over several, with random and sequential mixes, it finds
# no mismatch and no error; --cpus pins its threads where it is told; with no tuning flags it
# takes the layout it chooses (queues from --qd, one thread pinned to the first CPU it may use,
# polling at depth 1, fewer queues if the controller grants fewer) and says so with -v.  And the check really bites: a
# block overwritten behind perf's back (on the target's backing null_blk device) while a
# read-only verify run is going makes perf report the mismatch at that block and exit 1.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'rm -f /tmp/pv-*' EXIT
nqn=${subnqns[0]}
backing=/dev/nullb_s1n1
[[ -b $backing ]] || fail "$backing, the null_blk device behind namespace 1 of $nqn, is missing"
perf() { "$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -o json "$@"; }

# QUEUES RW BS [MORE OPTIONS]: a clean verify run. A second over 8 MiB reads every block of the
# region several times over at the guest's few thousand IOPS: what the check needs; most of a
# run's time is its connect and the region's prefill.
clean_run() {
	local queues=$1 rw=$2 bs=$3 out rc=0 start
	shift 3
	start=$(now_ms)
	out=$(perf --verify --queues "$queues" --rw "$rw" --bs "$bs" --size 8M --time 1 "$@" 2>/tmp/pv-err) || rc=$?
	((rc == 0)) || fail "perf --verify --queues $queues --rw $rw --bs $bs $*: exit $rc: $(cat /tmp/pv-err) $out"
	jq -e '.errors == 0 and .iops > 0 and .verify.mismatches == 0' <<<"$out" >/dev/null ||
		fail "perf --verify --queues $queues --rw $rw --bs $bs: errors, no I/O or mismatches: $out"
	if [[ $rw != write && $rw != randwrite ]]; then
		jq -e '.verify.blocks_read > 0' <<<"$out" >/dev/null ||
			fail "perf --verify --queues $queues --rw $rw --bs $bs checked no block: $out"
	fi
	log "$queues queue(s) $rw bs $bs $*: $(jq -r '"\(.iops | floor) IOPS, \(.verify.blocks_read) blocks checked, \(.verify.mismatches) mismatches"' <<<"$out") ($(($(now_ms) - start)) ms)"
}

clean_run 1 randrw 4k
clean_run 2 read 64k --threads 2
clean_run 2 write 4k
clean_run 4 randrw 64k --mix 30 --threads 4
clean_run 4 randread 4k --qd 16
# One thread spreading its I/Os over 4 queues: each queue's completions reach their own slots.
clean_run 4 randrw 4k --threads 1 --qd 8
clean_run 3 write 64k --threads 2 --qd 4

# randrw as fio and spdk_nvme_perf report it: reads and writes apart, each with its IOPS and
# latencies, after the lines of all I/Os together; --quiet leaves out the progress lines only.
log "randrw's text report, --quiet"
"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw randrw --mix 50 \
	--size 8M --time 1 --quiet >/tmp/pv-out 2>/tmp/pv-err || fail "perf --rw randrw --quiet: $(cat /tmp/pv-err)"
[[ ! -s /tmp/pv-err ]] || fail "perf --quiet wrote on stderr: $(cat /tmp/pv-err)"
for dir in read write; do
	grep -qE "^  $dir: IOPS [1-9][0-9]*, [0-9.]+ MiB/s, [1-9][0-9]* I/Os$" /tmp/pv-out ||
		fail "perf --rw randrw has no $dir line: $(cat /tmp/pv-out)"
done
[[ $(grep -c "^    percentiles (us): p50 " /tmp/pv-out) == 2 ]] ||
	fail "perf --rw randrw has not the percentiles of reads and of writes: $(cat /tmp/pv-out)"
total=$(sed -n 's/^  IOPS [0-9]*, [0-9.]* MiB\/s, \([0-9]*\) I\/Os, \([0-9]*\) errors$/\1 - \2/p' /tmp/pv-out)
split=$(sed -n 's/^  \(read\|write\): IOPS [0-9]*, [0-9.]* MiB\/s, \([0-9]*\) I\/Os$/\2/p' /tmp/pv-out | paste -sd+)
[[ -n $total && -n $split ]] && (($(($total)) == $(($split)))) ||
	fail "perf --rw randrw: reads and writes ($split) do not add up to the I/Os that succeeded ($total): $(cat /tmp/pv-out)"
log "$(grep -E '^  (read|write):' /tmp/pv-out | tr -s ' ' | paste -sd';')"
"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw randread --size 16M \
	--time 2 >/tmp/pv-out 2>/tmp/pv-err || fail "perf --rw randread: $(cat /tmp/pv-err)"
[[ $(grep -c '^\[ *[0-9]*s\] ' /tmp/pv-err) -ge 1 ]] || fail "perf without --quiet printed no progress line: $(cat /tmp/pv-err)"
! grep -qE '^  (read|write):' /tmp/pv-out || fail "perf --rw randread reports reads and writes apart: $(cat /tmp/pv-out)"

log "no tuning flags: the layout perf chooses, and -v says it"
# layout JQ_TEST OPTIONS...: a verify run with OPTIONS and -v whose JSON passes JQ_TEST.
layout() {
	local want=$1 out
	shift
	out=$(perf --verify --size 8M --time 1 -v "$@" 2>/tmp/pv-err) || fail "perf $*: $(cat /tmp/pv-err)"
	jq -e "$want and .errors == 0 and .verify.mismatches == 0" <<<"$out" >/dev/null ||
		fail "perf $* ran with $(jq -c .job <<<"$out"), not as $want"
	log "perf $*: $(jq -c '.job | {qd, queues, threads, cpus, mode}' <<<"$out"), $(jq -r '.iops | floor' <<<"$out") IOPS"
}
first_cpu=$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')
layout ".job.qd == 32 and .job.queues == 4 and .job.threads == 1 and .job.cpus == [$first_cpu] and .job.mode == \"event\""
grep -q "4 I/O queues, chosen: one per 8 I/Os of --iodepth" /tmp/pv-err || fail "-v does not say why 4 queues: $(cat /tmp/pv-err)"
grep -q "threads pinned to CPU $first_cpu (of the" /tmp/pv-err || fail "-v does not say where the thread runs: $(cat /tmp/pv-err)"
layout ".job.qd == 1 and .job.queues == 1 and .job.mode == \"poll\"" --qd 1
grep -q "poll mode, chosen" /tmp/pv-err || fail "-v does not say why it polls at --qd 1: $(cat /tmp/pv-err)"
layout ".job.queues == 2 and .job.threads == 1 and (.job | has(\"cpus\") | not)" --qd 12 --cpus none
# A controller that grants fewer queues than perf chose: perf spreads its depth over those; a
# --queues the user gave is not cut down but refused, as before.
qid_max=$NVMEFS_TEST_NVMET/subsystems/$nqn/attr_qid_max
[[ -w $qid_max ]] || fail "$qid_max is missing: this nvmet has no attr_qid_max"
old_qid_max=$(cat "$qid_max")
echo 2 >"$qid_max"
# Each granted queue is connected once: perf asks for the count before creating any, as Linux does.
# It used to create 2, delete them and create them again at once, and nvmet, which lets go of a
# queue from a work item, now and then answered the new Connect with Command Sequence Error. nvmet
# says "adding queue N" at each Connect that gets through, with its debug messages on.
dyndbg=/sys/kernel/debug/dynamic_debug/control
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug ||
	fail "mounting debugfs for nvmet's debug messages failed"
echo 'file drivers/nvme/target/fabrics-cmd.c +p' >"$dyndbg" || fail "turning nvmet's debug messages on failed"
added=$(dmesg | grep -c "nvmet: adding queue" || true)
layout ".job.queues == 2 and .job.qd == 32"
connects=$(dmesg | grep "nvmet: adding queue" | tail -n +$((added + 1)) | sed 's/.*adding queue \([0-9]*\).*/\1/' | sort -n | tr '\n' ' ' || true)
echo 'file drivers/nvme/target/fabrics-cmd.c -p' >"$dyndbg"
[[ $connects == "1 2 " ]] || fail "perf on a controller granting 2 of 4 queues connected queues ${connects:-none}, not 1 and 2 once each"
grep -q "the controller grants 2 I/O queues, not the 4 chosen" /tmp/pv-err || fail "-v does not say the controller granted fewer: $(cat /tmp/pv-err)"
perf --queues 4 --time 1 >/tmp/pv-out 2>/tmp/pv-err && fail "perf --queues 4 ran on a controller granting 2: $(cat /tmp/pv-out)"
grep -q "grants only 2 I/O queues, fewer than the 4 asked for" /tmp/pv-err || fail "perf --queues 4 with 2 granted: $(cat /tmp/pv-err)"
echo "$old_qid_max" >"$qid_max"
# Within the CPUs taskset leaves it: the first of those, not CPU 0.
out=$(taskset -c "$(($(nproc) - 1))" "$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
	-o json --time 1 --size 16M 2>/tmp/pv-err) || fail "perf under taskset: $(cat /tmp/pv-err)"
jq -e --argjson c "$(($(nproc) - 1))" '.job.cpus == [$c]' <<<"$out" >/dev/null ||
	fail "under taskset -c $(($(nproc) - 1)), perf pinned its thread to $(jq -c .job.cpus <<<"$out")"

log "--cpus pins each thread to its CPU"
# Two threads, the first on the last CPU and the second on CPU 0: while the run goes, the worker
# threads (created last, so the highest thread IDs) may run only there.  The run may be long,
# because a busy guest can print the progress line seconds late: once the threads have been
# looked at, it stops (SIGINT: perf reports what ran).
last=$(($(nproc) - 1))
((last > 0)) || fail "the testbed has one CPU: --cpus needs two to show the order"
"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -o json --verify --queues 2 --threads 2 \
	--rw randrw --bs 4k --size 16M --time 30 --cpus "$last,0" >/tmp/pv-out 2>/tmp/pv-err &
pid=$!
wait_progress "$pid" /tmp/pv-err 1
# One awk over every thread's status file, oldest thread first: a loop forking per thread took
# seconds in a loaded guest, long enough for perf's run to end in the middle of it (a thread
# gone between the listing and the read once ended the test with awk's status 2 and no
# message). A thread that ends meanwhile is left out; which threads there were is kept for the
# failure message.
threads=$(awk '/^Name:/ { name = $2 } /^Cpus_allowed_list:/ { split(FILENAME, p, "/"); print p[5], name, $2 }' \
	/proc/"$pid"/task/*/status 2>/dev/null | sort -n) || true
allowed=$(awk '{ printf "%s ", $3 }' <<<"$threads")
threads=$(awk '{ printf "%s:%s:%s ", $1, $2, $3 }' <<<"$threads")
kill -0 "$pid" 2>/dev/null || fail "perf ended before its threads could be looked at: $(cat /tmp/pv-err)"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
((rc == 0)) || fail "perf --verify --cpus $last,0: exit $rc: $(cat /tmp/pv-err)"
# The other threads (main, keep-alive) stay unpinned.
[[ $allowed =~ ^("0-$last ")+"$last 0 "$ ]] ||
	fail "with --cpus $last,0 the threads of perf (oldest first) were allowed on '$allowed', not 0-$last for all but the workers, $last and 0 for those (thread:name:CPUs $threads)"
jq -e --argjson last "$last" '.job.cpus == [$last, 0] and .errors == 0 and .verify.mismatches == 0 and .verify.blocks_read > 0' \
	/tmp/pv-out >/dev/null || fail "perf --verify --cpus $last,0: wrong job.cpus, errors or mismatches: $(cat /tmp/pv-out)"
log "threads allowed on: $allowed(oldest first; thread:name:CPUs $threads); $(jq -r '"\(.iops | floor) IOPS, \(.verify.mismatches) mismatches"' /tmp/pv-out)"
expect_failure "--cpus names a CPU the guest lacks" "--cpus: CPU 64 is not one this process may run on; pick from 0-$last" 5000 -- \
	"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -n "$nqn" --cpus 64

log "corrupt a block during a read-only verify run"
# One queue, so the first mismatch perf names is the block we overwrite.  4 MiB of 4 KiB blocks
# read at random, 10 reads a block after the corruption (its progress lines count them), then
# perf is stopped (SIGINT: it reports what ran). A fixed 5 s was that on an idle host, and 3 reads
# a block on one with a load of 15, where the block once went unread.
offset=$((1 << 20))
# The program itself, not the perf function: $! must be its PID, for the signal.
"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -o json --verify --queues 1 --rw randread \
	--bs 4k --size 4M --time 120 >/tmp/pv-out 2>/tmp/pv-err &
pid=$!
wait_progress "$pid" /tmp/pv-err 1
grep -q 'writing the .* region once for --verify' /tmp/pv-err || fail "perf did not say it prefilled: $(cat /tmp/pv-err)"
head -c 4096 /dev/urandom | dd of="$backing" bs=4096 seek=$((offset / 4096)) oflag=direct status=none ||
	fail "overwriting a block of $backing failed"
# ios_since N: the I/Os perf's progress lines count after its Nth.
progress() { grep '^\[ *[0-9]*s\]' /tmp/pv-err || true; }
ios_since() { progress | tail -n +$(($1 + 1)) | awk '{ sub(/^\[ *[0-9]+s\] */, ""); n += $1 } END { print n + 0 }'; }
lines=$(progress | wc -l)
read_enough() { (($(ios_since "$lines") >= 10 * 1024)) || ! kill -0 "$pid" 2>/dev/null; }
wait_until 110000 read_enough || true
kill -INT "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
((rc == 1)) || fail "perf --verify ran over a corrupted block and exited $rc, not 1: $(cat /tmp/pv-err) $(cat /tmp/pv-out)"
grep -q "verify found [0-9]* bad blocks, the first at byte $offset:" /tmp/pv-err ||
	fail "perf did not report the bad block at byte $offset: $(cat /tmp/pv-err)"
jq -e '.verify.mismatches > 0 and .errors == 0' /tmp/pv-out >/dev/null ||
	fail "perf's JSON does not count the mismatches: $(cat /tmp/pv-out)"
log "$(grep 'bad blocks' /tmp/pv-err)"
echo "PASS: perf --verify clean on 1, 2 and 4 queues, with threads driving one queue or several, pinned or not; a block corrupted on the target is caught (exit 1)"
