#!/usr/bin/env bash
# testbed: --ports 2 --ns-size 64M
# Multipath over mixed transports (issue #27): path 1 over RDMA to port 1, path 2 over NVMe/TCP to
# port 2 (--path tcp:ADDR:PORT), one subsystem, one device; whatever NVMEFS_TEST_TRTYPE says, the
# mix is the point:
#  - perf --verify over both paths, round-robin: both carry I/O, no error or mismatch; its report,
#    the mount's info and stats name each path's transport;
#  - a mount over both (the daemon holds RDMA queue pairs and TCP connections), fio verify:
#    ANA: port 1's group (RDMA) inaccessible moves the I/O to path 2 (TCP), optimized brings it
#    back; then port 2's group (TCP) inaccessible leaves it all on path 1;
#  - round-robin, each path dropped in turn (its port unlinked for 8 s) under fio verify: 0 errors,
#    the I/O carries on over the other transport, the path reconnects and is live again.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
read -r -a ports <<<"$NVMEFS_TEST_TRSVCIDS"
((${#ports[@]} >= 2)) || fail "the testbed gave ${#ports[@]} ports, not 2"
read -r -a tcp_ids <<<"${NVMEFS_TEST_TCP_PORTIDS:-}"
((${#tcp_ids[@]} >= 2)) || fail "the testbed has no second TCP port (NVMEFS_TEST_TCP_PORTIDS='${NVMEFS_TEST_TCP_PORTIDS:-}')"
# nvmet ports: RDMA port 1 is nvmet port 1, TCP port 2 the second TCP one.
rdma_port=1 tcp_port=${tcp_ids[1]}
ana_of() { echo "$NVMEFS_TEST_NVMET/ports/$1/ana_groups/1/ana_state"; }
for p in "$rdma_port" "$tcp_port"; do
	[[ -e $(ana_of "$p") ]] || fail "$(ana_of "$p") is missing: the target has no ANA groups to change"
done
restore() {
	local p
	for p in "$rdma_port" "$tcp_port"; do
		[[ -L $NVMEFS_TEST_NVMET/ports/$p/subsystems/$nqn ]] || port_link "$nqn" "$p" 2>/dev/null || true
		echo optimized >"$(ana_of "$p")" 2>/dev/null || true
	done
}
trap 'load_cleanup; nvmefs_cleanup; restore' EXIT
mnt=/tmp/nvmefs-mixed
cd /tmp
mixed=(-t rdma -a "$NVMEFS_TEST_TRADDR" -s "${ports[0]}" -n "$nqn" --path "tcp:$NVMEFS_TEST_TRADDR:${ports[1]}")

log "perf --verify over RDMA and TCP, round-robin"
out=$("$NVMEFS" perf "${mixed[@]}" --iopolicy round-robin --verify --queues 2 --rw randrw --bs 4k \
	--size 16M --time 3 -o json 2>/tmp/mixed-perf.err) || fail "perf over mixed paths failed: $(cat /tmp/mixed-perf.err) $out"
jq -e '.errors == 0 and .verify.mismatches == 0 and [.paths[].trtype] == ["rdma", "tcp"] and ([.paths[].ios > 0] | all)' \
	<<<"$out" >/dev/null || fail "perf over mixed paths: errors, mismatches, or a path without I/O: $out"
log "perf: $(jq -c '{iops: (.iops | floor), paths: [.paths[] | .ios]}' <<<"$out")"

# path_stat K FIELD: FIELD of path K (1-based) in the mount's stats.
path_stat() { nvmefs_stats "$mnt" ".paths[$(($1 - 1))].$2"; }
path_ios_above() { (($(path_stat "$1" ios) > $2)); }
path_ana_is() { [[ $(path_stat "$1" 'ana[0].state') == "$2" ]]; }
path_is_live() { [[ $(path_stat "$1" state) == live ]]; }
# path_back K: path K is live again after a reconnect.
path_back() { path_is_live "$1" && (($(path_stat "$1" reconnects) >= 1)); }
paths_now() { jq -c '[.paths[] | {state, ios, failovers, ana}]' "$mnt/stats"; }
step=50

log "a mount over path 1 (RDMA, port ${ports[0]}) and path 2 (TCP, port ${ports[1]})"
nvmefs_mount "$nqn" "$mnt" -t rdma -s "${ports[0]}" --path "tcp:$NVMEFS_TEST_TRADDR:${ports[1]}" -i 2
# nvmefs_mount gives -t "$trtype" and -s first: the options after them are the last word.
for f in info stats; do
	jq -e '[.paths[].trtype] == ["rdma", "tcp"]' "$mnt/$f" >/dev/null ||
		fail "$f does not list path 1 over RDMA and path 2 over TCP: $(jq -c .paths "$mnt/$f")"
done
pid=$(nvmefs_pid "$mnt")
tcp_conns=$(ss -Htnp state established "( dport = :${ports[1]} )" | grep -c "pid=$pid," || true)
((tcp_conns >= 3)) || fail "the daemon holds $tcp_conns TCP connections to port ${ports[1]}, not an admin and 2 I/O queues: $(ss -tnp)"
rdma_qps=$(rdma_res_count qp "$pid")
((rdma_qps >= 3)) || fail "the daemon holds $rdma_qps RDMA queue pairs, not an admin and 2 I/O queues"
log "the daemon: $rdma_qps RDMA queue pairs, $tcp_conns TCP connections"

log "ANA: port 1's group (RDMA) inaccessible under fio, then optimized; then port 2's (TCP)"
# The load outlasts the six ANA steps below: on a host running two guests they took 70 s (a
# 60-second load ended before the last one could see I/O move), on one with a load of 15, 120 s.
# Once they are through, it stops.
fio_load_start ana "$mnt/n1" 180
a0=$(path_stat 1 ios)
wait_until 10000 path_ios_above 1 $((a0 + step)) || fail "path 1 (RDMA) carries no I/O under numa: $(paths_now)"
b1=$(path_stat 2 ios)
echo inaccessible >"$(ana_of "$rdma_port")"
wait_until 10000 path_ana_is 1 inaccessible || fail "path 1 is not inaccessible in stats 10 s after its group was: $(paths_now)"
wait_until 10000 path_ios_above 2 $((b1 + step)) || fail "the I/O did not move to path 2 (TCP): $(paths_now)"
a2=$(path_stat 1 ios) b2=$(path_stat 2 ios)
wait_until 10000 path_ios_above 2 $((b2 + step)) || fail "path 2 (TCP) stopped carrying I/O: $(paths_now)"
a3=$(path_stat 1 ios)
((a3 == a2)) || fail "while port 1's group was inaccessible, path 1 (RDMA) went $a2 -> $a3 I/Os"
log "ANA: path 1 inaccessible: path 2 (TCP) $b1 -> $(path_stat 2 ios) I/Os, path 1 stays at $a3"
echo optimized >"$(ana_of "$rdma_port")"
wait_until 10000 path_ana_is 1 optimized || fail "path 1 is not optimized in stats 10 s after its group was: $(paths_now)"
wait_until 15000 path_ios_above 1 $((a3 + step)) || fail "path 1 (RDMA) got no I/O back after its group was optimized: $(paths_now)"
echo inaccessible >"$(ana_of "$tcp_port")"
wait_until 10000 path_ana_is 2 inaccessible || fail "path 2 is not inaccessible in stats 10 s after its group was: $(paths_now)"
b4=$(path_stat 2 ios) a4=$(path_stat 1 ios)
wait_until 10000 path_ios_above 1 $((a4 + step)) || fail "path 1 (RDMA) stopped carrying I/O: $(paths_now)"
(($(path_stat 2 ios) == b4)) || fail "path 2 (TCP), inaccessible, went $b4 -> $(path_stat 2 ios) I/Os"
echo optimized >"$(ana_of "$tcp_port")"
wait_until 10000 path_ana_is 2 optimized || fail "path 2 is not optimized in stats 10 s after its group was: $(paths_now)"
load_stop_after ana 2000
fio_load_check ana 120
log "ANA followed both ways over both transports: $(paths_now)"

# drop K NVMET_PORT NAME: path K's port unlinked for 8 s under fio verify: no error, the other
# path carries the I/O meanwhile, path K live again after (and fio on for 2 s more, then stopped).
drop() {
	local k=$1 port=$2 name=$3 other=$((3 - $1)) before start
	log "path $k ($name) dropped for 8 s under fio verify"
	fio_load_start "drop-$name" "$mnt/n1" 90
	sleep 3
	load_running "drop-$name" || fail "fio ended early: $(cat "/tmp/fio-drop-$name.err")"
	before=$(path_stat "$other" ios)
	start=$(now_ms)
	port_unlink "$nqn" "$port"
	wait_until 15000 path_ios_above "$other" $((before + step)) ||
		fail "no I/O went through path $other after path $k ($name) went: $(paths_now)"
	sleep_until "$start" 8000
	port_link "$nqn" "$port"
	wait_until 20000 path_back "$k" || fail "path $k ($name) did not come back within 20 s: $(paths_now)"
	load_stop_after "drop-$name" 2000
	fio_load_check "drop-$name" 120
	[[ $(nvmefs_stats "$mnt" .total.errors) == 0 ]] || fail "the mount counts failed requests: $(jq -c .total "$mnt/stats")"
	(($(path_stat "$k" reconnects) >= 1)) || fail "path $k ($name) counts no reconnect: $(jq -c .paths "$mnt/stats")"
	log "path $k ($name) back: $(paths_now)"
}
# Round-robin, so that each path has I/O in flight when its port goes.
nvmefs_unmount "$mnt"
nvmefs_mount "$nqn" "$mnt" -t rdma -s "${ports[0]}" --path "tcp:$NVMEFS_TEST_TRADDR:${ports[1]}" -i 2 \
	--iopolicy round-robin
drop 1 "$rdma_port" rdma
drop 2 "$tcp_port" tcp
nvmefs_unmount "$mnt"
echo "PASS: multipath over RDMA and TCP: perf --verify over both, ANA moved the I/O between transports both ways, each path dropped under fio verify with 0 errors"
