#!/usr/bin/env bash
# testbed: --subsystems 2
# nvmefs discover --persistent stays connected to the discovery controller and prints its log again
# each time the target reports a change (nvmet sends a Discovery Log Page Change event when a
# subsystem is linked to or unlinked from the port): one JSON line per log with -o json, a header
# line and the log in text. SIGTERM and SIGINT end it with status 0; after an outage it reconnects
# and prints the log if it changed meanwhile; a controller given up (-l) ends it with status 1 and
# one line saying so.
. "$(dirname "$0")/lib.sh"
require_nvmefs
addr=$NVMEFS_TEST_TRADDR
sub1=${subnqns[0]} sub2=${subnqns[1]}
out=/tmp/discover-persistent.out err=/tmp/discover-persistent.err
pid=
trap '[[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null || true' EXIT

# start OPTIONS...: nvmefs discover --persistent in the background, its output to $out and $err.
start() {
	"$NVMEFS" discover -t rdma -a "$addr" -s "$NVMEFS_TEST_TRSVCID" --persistent "$@" >"$out" 2>"$err" &
	pid=$!
}

# wait_for WHAT MAX_MS COMMAND...: waits until COMMAND succeeds; fails if discover exits first or
# MAX_MS pass. Sets waited_ms.
or_exited() { "$@" || gone "$pid"; }
wait_for() {
	local what=$1 max_ms=$2 start
	shift 2
	start=$(now_ms)
	wait_until "$max_ms" or_exited "$@" ||
		fail "no $what after $max_ms ms; output: $(cat "$out"); stderr: $(cat "$err")"
	"$@" || fail "discover --persistent exited while waiting for $what: $(cat "$err")"
	waited_ms=$(($(now_ms) - start))
}

# Complete (newline-terminated) lines of $out, and line N of it.
lines() { wc -l <"$out"; }
has_lines() { (($(lines) >= $1)); }
line() { sed -n "${1}p" "$out"; }
# line_lists N NQN: line N's log lists NQN.
line_lists() { line "$1" | jq -e --arg n "$2" 'any(.records[]; .subnqn == $n)' >/dev/null; }
nrecords() { line "$1" | jq '.records | length'; }

# stop SIGNAL MAX_MS: sends SIGNAL and returns discover's exit status (fails if it outlives MAX_MS).
stop() {
	local rc=0
	kill "-$1" "$pid"
	wait_gone "$pid" "$2" || fail "discover --persistent still runs $2 ms after SIG$1"
	wait "$pid" || rc=$?
	pid=
	return "$rc"
}

log "JSON lines: one at start, one when $sub2 is linked to the port, one when it is unlinked"
port_unlink "$sub2"
start -o json -v
wait_for "first JSON line" 15000 has_lines 1
grep -q "keep-alive 30 s" "$err" || fail "-k was not given, yet the keep-alive is not 30 s: $(cat "$err")"
line_lists 1 "$sub1" || fail "the first log does not list $sub1: $(line 1)"
! line_lists 1 "$sub2" || fail "the first log lists $sub2, which is not linked to the port: $(line 1)"
n1=$(nrecords 1)

port_link "$sub2"
wait_for "second JSON line after linking $sub2" 10000 has_lines 2
log "linked $sub2: a new line after $waited_ms ms"
line_lists 2 "$sub2" || fail "the log printed after linking $sub2 does not list it: $(line 2)"
(($(nrecords 2) == n1 + 1)) || fail "the log after linking $sub2 has $(nrecords 2) records, not $((n1 + 1)): $(line 2)"

port_unlink "$sub2"
wait_for "third JSON line after unlinking $sub2" 10000 has_lines 3
log "unlinked $sub2: a new line after $waited_ms ms"
! line_lists 3 "$sub2" || fail "the log printed after unlinking $sub2 still lists it: $(line 3)"
(($(nrecords 3) == n1)) || fail "the log after unlinking $sub2 has $(nrecords 3) records, not $n1: $(line 3)"
[[ $(line 3 | jq -c "del(.genctr)") == "$(line 1 | jq -c "del(.genctr)")" ]] ||
	fail "the log after unlinking $sub2 is not the first one again: $(line 1) then $(line 3)"
sleep 1
(($(lines) == 3)) || fail "expected 3 lines of JSON, got $(lines): $(cat "$out")"
# Each line a whole JSON document on its own.
jq -c . "$out" >/dev/null || fail "the output is not one JSON document per line: $(cat "$out")"
rc=0
stop TERM 10000 || rc=$?
((rc == 0)) || fail "discover --persistent exited $rc after SIGTERM; expected 0: $(cat "$err")"
# -v's lines, and no other: no failure, no state transition.
verbose_re='^nvmefs discover: (connecting to|connected as|discovery log: |discovery log read again|Terminated: )'
! grep -vE "$verbose_re" "$err" || fail "unexpected lines on stderr without an outage: $(cat "$err")"

# An idle admin queue notices the target's disconnect only at its next keep-alive (KATO/2), so the
# outages below use -k 4: failures show within 2 s instead of 15.
log "normal output; an outage ($sub1 unlinked: the port stops), $sub2 linked in its place, a reconnect"
start -k 4 -c 1 -l 60
wait_for "the first log" 15000 grep -q '^Discovery Log Number of Records' "$out"
port_unlink "$sub1"
wait_for "a failure reported on stderr" 20000 grep -q "^nvmefs discover: .* failed: " "$err"
log "$sub1 unlinked: the failure reported after $waited_ms ms"
port_link "$sub2"
wait_for "the log printed again after reconnecting" 20000 \
	grep -q '^Discovery log changed, found after reconnecting (' "$out"
log "reconnected and printed the changed log $waited_ms ms after $sub2 was linked"
grep -q "^nvmefs discover: .*reconnected" "$err" || fail "no reconnect reported on stderr: $(cat "$err")"
# The second block is the log as it is now: $sub2 in it, $sub1 not.
block2=$(sed -n '/^Discovery log changed/,$p' "$out")
grep -q "^subnqn:  $sub2\$" <<<"$block2" || fail "the log printed after reconnecting does not list $sub2: $block2"
! grep -q "^subnqn:  $sub1\$" <<<"$block2" || fail "the log printed after reconnecting still lists $sub1: $block2"
(($(grep -c '^Discovery Log Number of Records' "$out") == 2)) || fail "expected 2 logs printed: $(cat "$out")"
rc=0
stop INT 10000 || rc=$?
((rc == 0)) || fail "discover --persistent exited $rc after SIGINT; expected 0: $(cat "$err")"

log "a controller given up: the port stops for longer than -l 2"
start -k 4 -c 1 -l 2 -o json
wait_for "first JSON line" 15000 has_lines 1
t0=$(now_ms)
port_unlink "$sub2"
wait_gone "$pid" 30000 || fail "discover --persistent still runs 30 s after its port stopped with -l 2: $(cat "$err")"
rc=0
wait "$pid" || rc=$?
pid=
last=$(tail -n 1 "$err")
log "exited $rc after $(($(now_ms) - t0)) ms, $(wc -l <"$err") lines on stderr, the last: $last"
((rc == 1)) || fail "discover --persistent exited $rc when its controller was given up; expected 1: $(cat "$err")"
want="nvmefs discover: lost the discovery controller at $addr:$NVMEFS_TEST_TRSVCID, not reconnected within"
want+=" -l/--ctrl-loss-tmo 2 s: "
[[ $last == "$want"* ]] || fail "the last line on stderr does not say the controller was given up: $(cat "$err")"
echo "PASS: discover --persistent reprints the log on each change (JSON lines and text), reconnects," \
	"exits 0 on SIGTERM/SIGINT and 1 when given up"
