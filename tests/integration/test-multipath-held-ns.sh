#!/usr/bin/env bash
# testbed: --ports 2 --namespaces 2 --ns-size 64M
# A namespace without a usable path does not starve one with a path (issue 24 item 9): n1 in ANA
# group 1, n2 in group 2, a mount over both ports with 16 request buffers (2 workers x depth 8).
# Group 1 inaccessible on both ports, fio holds 64 I/Os to n1 (4 times the buffers, libaio direct);
# meanwhile a direct dd writes and reads back 1 MiB of n2 within 20 s, a short fio job on n2 at
# depth 16 ends with no error, and stats, ls and stat answer within 5 s (without this they hang
# until n1's group comes back: n1's held I/O takes every buffer and every FUSE background slot).
# Group 1 optimized again: fio on n1 runs to its end, no I/O error, no verify error.
# Then n1 loses its paths again under load, with fio on n2 too: the I/O n1 had in flight keeps its
# buffers until the group is back, yet stats, ls and stat answer within 5 s, and both fio jobs end
# with no error once it is.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
multipath_setup "$nqn"
((NVMEFS_TEST_NAMESPACES >= 2)) || fail "the testbed gave $NVMEFS_TEST_NAMESPACES namespaces, not 2"
grp1=(ports/1/ana_groups/1/ana_state ports/2/ana_groups/1/ana_state)
restore() {
	for f in "${grp1[@]}"; do echo optimized >"$NVMEFS_TEST_NVMET/$f" 2>/dev/null || true; done
	multipath_restore
}
trap 'load_cleanup; nvmefs_cleanup; restore' EXIT
mnt=/tmp/nvmefs-mp-held
cd /tmp

# answers WHAT SECONDS COMMAND...: COMMAND must succeed within SECONDS (it is killed after twice
# that).
answers() {
	local what=$1 secs=$2 start rc=0 elapsed
	shift 2
	start=$(now_ms)
	timeout -s KILL $((secs * 2)) "$@" >/tmp/answers.out 2>&1 || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc == 0)) || fail "$what failed or hung (exit $rc after $elapsed ms): $(head -c 300 /tmp/answers.out)"
	((elapsed <= secs * 1000)) || fail "$what took $elapsed ms, more than $secs s"
	log "$what answered in $elapsed ms"
}

# n2 in its own ANA group, optimized on both ports; group 1 keeps n1.
for p in 1 2; do
	d=$NVMEFS_TEST_NVMET/ports/$p/ana_groups/2
	[[ -d $d ]] || mkdir "$d" || fail "making ANA group 2 on port $p failed"
	echo optimized >"$d/ana_state" || fail "setting $d/ana_state failed"
done
echo 2 >"$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/2/ana_grpid" || fail "moving namespace 2 to ANA group 2 failed"

nvmefs_mount "$nqn" "$mnt" --path "$path2" -i 2 --depth 8
# ana_is K NS STATE: path K reaches namespace NS (1-based) in STATE, as the mount's stats say.
ana_is() { [[ $(jq -r ".paths[$(($1 - 1))].ana[$(($2 - 1))].state" "$mnt/stats") == "$3" ]]; }
for p in 1 2; do
	wait_until 10000 ana_is $p 2 optimized || fail "path $p does not reach n2 optimized: $(jq -c .paths "$mnt/stats")"
done

for f in "${grp1[@]}"; do echo inaccessible >"$NVMEFS_TEST_NVMET/$f"; done
for p in 1 2; do
	wait_until 10000 ana_is $p 1 inaccessible ||
		fail "path $p does not reach n1 inaccessible 10 s after group 1 was: $(jq -c .paths "$mnt/stats")"
done
log "n1 has no usable path: $(jq -c '[.paths[] | .ana]' "$mnt/stats")"
start=$(now_ms)
fio_load_start held "$mnt/n1" 40 --iodepth=32 --numjobs=2 --size=16M --offset_increment=16M \
	--group_reporting
# fio has its 64 I/Os queued within a second or two; nothing of them can complete.
sleep_until "$start" 4000
load_running held || fail "fio on n1 ended while n1 had no path: $(cat /tmp/fio-held.err)"

dd if=/dev/urandom of=/tmp/n2.bin bs=64k count=16 status=none
answers "writing 1 MiB to $mnt/n2" 20 dd if=/tmp/n2.bin of="$mnt/n2" bs=64k oflag=direct conv=notrunc status=none
answers "reading 1 MiB of $mnt/n2" 20 dd if="$mnt/n2" of=/tmp/n2.back bs=64k count=16 iflag=direct status=none
cmp /tmp/n2.bin /tmp/n2.back || fail "n2 read back other data than was written"
answers "fio on $mnt/n2 at depth 16" 30 fio --name=n2 --filename="$mnt/n2" --ioengine=libaio --direct=1 \
	--iodepth=16 --rw=randrw --bs=4k --size=8M --io_size=4M --output-format=json --output=/tmp/fio-n2.json
jq -e '.jobs[0].error == 0' /tmp/fio-n2.json >/dev/null || fail "fio on n2 failed: $(head -c 500 /tmp/fio-n2.json)"
answers "reading $mnt/stats" 5 cat "$mnt/stats"
answers "ls $mnt" 5 ls "$mnt"
answers "stat $mnt/n1" 5 stat "$mnt/n1"
load_running held || fail "fio on n1 ended while n1 had no path: $(cat /tmp/fio-held.err)"
writes=$(nvmefs_stats "$mnt" .total.writes)

for f in "${grp1[@]}"; do echo optimized >"$NVMEFS_TEST_NVMET/$f"; done
# n1's I/O goes on, 2 s more of it, and the load has done its part (its 40 s are a bound).
wait_writes "$mnt" $((writes + 64)) held
load_stop_after held 2000
fio_load_check held 150
[[ $(nvmefs_stats "$mnt" .total.errors) == 0 ]] || fail "the mount counts failed requests: $(jq -c .total "$mnt/stats")"
(($(nvmefs_stats "$mnt" .total.writes) > writes + 64)) || fail "n1's I/O did not go on once its group was back: $(jq -c .total "$mnt/stats")"

# n1 loses its paths under load: the I/O it has in flight keeps its buffers; stats, ls and stat
# must still be answered.
fio_load_start busy "$mnt/n1" 40 --iodepth=32 --numjobs=2 --size=16M --offset_increment=16M \
	--group_reporting
wait_writes "$mnt" $((writes + 1000)) busy
fio_load_start other "$mnt/n2" 40 --iodepth=8 --numjobs=2 --size=16M --offset_increment=16M \
	--group_reporting
start=$(now_ms)
for f in "${grp1[@]}"; do echo inaccessible >"$NVMEFS_TEST_NVMET/$f"; done
# The ANA change is seen within a second or two; the wait cannot read the stats, which are on trial.
sleep_until "$start" 4000
answers "with n1's I/O in flight held, reading $mnt/stats" 5 cat "$mnt/stats"
jq -e '[.paths[] | .ana[0].state == "inaccessible"] | all' /tmp/answers.out >/dev/null ||
	fail "n1 still has a usable path 4 s after group 1 was made inaccessible: $(jq -c '[.paths[] | .ana]' /tmp/answers.out)"
answers "with n1's I/O in flight held, ls $mnt" 5 ls "$mnt"
answers "with n1's I/O in flight held, stat $mnt/n2" 5 stat "$mnt/n2"
sleep_until "$start" 10000
for f in "${grp1[@]}"; do echo optimized >"$NVMEFS_TEST_NVMET/$f"; done
# The held I/O goes on: 3 s more of both loads, then they stop (fio waits for what it has in
# flight, so a request still held fails the check below).
load_stop_after busy 3000
load_stop other
fio_load_check busy 150
fio_load_check other 150
[[ $(nvmefs_stats "$mnt" .total.errors) == 0 ]] || fail "the mount counts failed requests: $(jq -c .total "$mnt/stats")"
nvmefs_unmount "$mnt"
echo "PASS: with n1 held for want of a path, n2's I/O, stats, ls and stat were answered; n1's I/O then verified"
