#!/usr/bin/env bash
# testbed: --ports 2 --namespaces 2 --ns-size 64M
# Multipath with nvmefs perf over the testbed's two ports (one subsystem, ANA group 1 on each):
#  - round-robin puts I/O on both paths;
#  - port 1 unlinked for good under load: I/O goes on through port 2, no I/O or verify error, the
#    longest I/O (perf's maximum latency) under 2 s;
#  - port 1's ANA group inaccessible under load, then optimized again: the change is followed
#    (logged from the ANA log, which the ANA Change event makes us read), I/O moves to port 2 and
#    comes back, no error;
#  - both ports unlinked for 8 s, then back: I/O is held, not failed, and both paths reconnect;
#  - a --path to a port without the subsystem is left out with a message, the run goes on;
#  - a path on which a namespace is another disk (namespace 2 replaced after the first path
#    identified it) is refused, and I/O goes on through the first path.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
multipath_setup "$nqn"
trap 'load_cleanup; multipath_restore; ns_replace_undo 2>/dev/null' EXIT

# mp_perf NAME SECONDS [OPTIONS...]: perf_load_start over both paths.
mp_perf() {
	local name=$1 secs=$2
	shift 2
	perf_load_start "$name" "$secs" --path "$path2" -c 1 "$@"
}
# path_ios NAME PATH: I/Os that went through path PATH (1-based) in perf NAME's report.
path_ios() { jq -r ".paths[$(($2 - 1))].ios" "/tmp/perf-$1.json"; }
max_lat_ms() { jq -r '.lat_us.max / 1000 | floor' "/tmp/perf-$1.json"; }

log "usage errors: a --path that is not TRADDR[:TRSVCID], an unknown --iopolicy"
for bad in "--path [fe80::1" "--path 198.18.0.1:99999" "--path :4421" "--iopolicy service-time"; do
	rc=0
	# shellcheck disable=SC2086 # the option and its value are two words on purpose
	"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -n "$nqn" $bad --time 1 >/dev/null 2>/tmp/usage.err || rc=$?
	((rc == 2)) || fail "perf $bad exited $rc, not 2 (usage): $(cat /tmp/usage.err)"
	[[ $(wc -l </tmp/usage.err) == 1 ]] || fail "perf $bad: not one line: $(cat /tmp/usage.err)"
done

log "round-robin over both paths"
mp_perf rr 3 --iopolicy round-robin
perf_load_check rr 60 0
jq -e '.iopolicy == "round-robin" and (.paths | length) == 2' /tmp/perf-rr.json >/dev/null ||
	fail "perf's report does not list 2 paths under round-robin: $(cat /tmp/perf-rr.json)"
for p in 1 2; do
	(($(path_ios rr $p) > 0)) || fail "round-robin sent nothing through path $p: $(jq -c .paths /tmp/perf-rr.json)"
done
log "round-robin: $(path_ios rr 1) I/Os through port ${ports[0]}, $(path_ios rr 2) through port ${ports[1]}"

log "port ${ports[0]} removed for good under load (numa: all I/O on path 1 until then)"
mp_perf remove 12
wait_progress "${load_pids[remove]}" /tmp/perf-remove.err 3
port_unlink "$nqn" 1
perf_load_check remove 120 0
(($(path_ios remove 2) > 0)) || fail "no I/O went through port ${ports[1]} after port ${ports[0]} went: $(jq -c .paths /tmp/perf-remove.json)"
stall=$(max_lat_ms remove)
((stall < 2000)) || fail "the longest I/O took $stall ms across the failover, not under 2000: $(cat /tmp/perf-remove.json)"
log "failover: longest I/O $stall ms; paths: $(jq -c '[.paths[] | {state, ios, failovers}]' /tmp/perf-remove.json)"
port_link "$nqn" 1

log "ANA: port ${ports[0]}'s group inaccessible under load, then optimized again"
mp_perf ana 12
wait_progress "${load_pids[ana]}" /tmp/perf-ana.err 3
echo inaccessible >"$ana"
# Until perf has followed the change, then the state held for a second of I/O through path 2.
wait_until 8000 grep -q "ANA group 1) is now inaccessible" /tmp/perf-ana.err ||
	fail "perf did not follow port ${ports[0]}'s group to inaccessible within 8 s: $(cat /tmp/perf-ana.err)"
sleep 1
echo optimized >"$ana"
perf_load_check ana 120 0
grep -q "ANA group 1) is now inaccessible" /tmp/perf-ana.err ||
	fail "perf did not follow port ${ports[0]}'s group to inaccessible: $(cat /tmp/perf-ana.err)"
grep -q "ANA group 1) is now optimized" /tmp/perf-ana.err ||
	fail "perf did not follow port ${ports[0]}'s group back to optimized: $(cat /tmp/perf-ana.err)"
(($(path_ios ana 2) > 0)) || fail "no I/O went through port ${ports[1]} while port ${ports[0]} was inaccessible: $(jq -c .paths /tmp/perf-ana.json)"
jq -e '.paths[0].ana_state == "optimized"' /tmp/perf-ana.json >/dev/null ||
	fail "path 1 is not optimized again at the end: $(jq -c .paths /tmp/perf-ana.json)"
log "ANA: $(grep -c 'is now' /tmp/perf-ana.err) transitions followed; paths: $(jq -c '[.paths[] | {ios, failovers}]' /tmp/perf-ana.json)"

log "both ports down for 8 s"
mp_perf both 25
wait_progress "${load_pids[both]}" /tmp/perf-both.err 3
start=$(now_ms)
port_unlink "$nqn" 1
port_unlink "$nqn" 2
sleep_until "$start" 8000
port_link "$nqn" 1
port_link "$nqn" 2
load_running both || fail "perf ended during the outage of both paths: $(cat /tmp/perf-both.err)"
perf_load_check both 120 0
jq -e '[.paths[] | .reconnects >= 1 and .state == "live"] | all' /tmp/perf-both.json >/dev/null ||
	fail "not every path reconnected: $(jq -c .paths /tmp/perf-both.json)"
log "both down: $(jq -c '[.paths[] | {state, reconnects, ios}]' /tmp/perf-both.json)"

log "--all-paths: port ${ports[0]}'s discovery log refers to port ${ports[1]}'s"
ref=$NVMEFS_TEST_NVMET/ports/1/referrals/to-2
mkdir "$ref"
echo rdma >"$ref/addr_trtype"
echo ipv4 >"$ref/addr_adrfam"
echo "$NVMEFS_TEST_TRADDR" >"$ref/addr_traddr"
echo "${ports[1]}" >"$ref/addr_trsvcid"
echo 1 >"$ref/enable"
"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "${ports[0]}" -n "$nqn" --all-paths --iopolicy round-robin \
	--time 1 --qd 4 -o json >/tmp/perf-all.json 2>/tmp/perf-all.err || fail "perf --all-paths failed: $(cat /tmp/perf-all.err)"
jq -e '[.paths[].trsvcid] == ["'"${ports[0]}"'", "'"${ports[1]}"'"] and ([.paths[].ios] | all(. > 0))' /tmp/perf-all.json >/dev/null ||
	fail "--all-paths did not find and use both ports: $(jq -c .paths /tmp/perf-all.json)"
rmdir "$ref"
log "--all-paths: $(jq -c '[.paths[] | {trsvcid, ios}]' /tmp/perf-all.json)"

log "a path to a port without the subsystem is left out"
port_unlink "$nqn" 2
"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "${ports[0]}" -n "$nqn" --path "$path2" --time 1 --qd 4 -o json \
	>/tmp/perf-missing.json 2>/tmp/perf-missing.err || fail "perf failed with one good path: $(cat /tmp/perf-missing.err)"
grep -q "path $path2 left out" /tmp/perf-missing.err || fail "no message about the path left out: $(cat /tmp/perf-missing.err)"
jq -e '(.paths | length) == 1 and .errors == 0' /tmp/perf-missing.json >/dev/null ||
	fail "the run did not go on over the one path: $(cat /tmp/perf-missing.json)"
log "$(grep 'left out' /tmp/perf-missing.err)"
port_link "$nqn" 2

log "a path on which namespace 2 is another disk is refused"
require_io_tool
# A fresh pair each run: a GO left by an earlier run in the same boot let the second path join
# before the namespace was replaced.
rm -f /tmp/join.ready /tmp/join.go
io_tool "$nqn" join "${ports[1]}" /tmp/join.ready /tmp/join.go >/tmp/join.out 2>/tmp/join.err &
join_pid=$!
wait_until 30000 test -e /tmp/join.ready || fail "io-tool join did not connect the first path: $(cat /tmp/join.err)"
size=$(blockdev --getsize64 "$(cat "$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/2/device_path")")
new_dev=$(nullb_create nullb_other "$size" 512)
ns_replace "$nqn" 2 "$new_dev" >/dev/null
touch /tmp/join.go
wait "$join_pid" || fail "io-tool join failed: $(cat /tmp/join.out /tmp/join.err)"
grep -q "^refused: namespace 2 through [^ ]*:${ports[1]} has another NGUID than through [^ ]*:${ports[0]}" /tmp/join.out ||
	fail "the path with another namespace 2 was not refused for it: $(cat /tmp/join.out /tmp/join.err)"
grep -q "^io ok over 1 path" /tmp/join.out || fail "I/O did not go on through the first path: $(cat /tmp/join.out)"
log "$(head -n 1 /tmp/join.out)"
echo "PASS: multipath perf: round-robin on both paths, failover under 2 s, ANA followed both ways, both paths down and back, a bad path left out, a path with another namespace refused"
