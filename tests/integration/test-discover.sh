#!/usr/bin/env bash
# testbed: --subsystems 3 --ports 2
# nvmefs discover agrees with nvme-cli's discover on the same target, record for record, in both
# output formats and on every port; referrals are followed only when asked, and each discovery
# controller once, even when referrals form a loop. Over the run's transport (NVMEFS_TEST_TRTYPE);
# over TCP, also with no service id, which both read at NVMe/TCP's discovery port (8009).
. "$(dirname "$0")/lib.sh"
require_nvmefs
addr=$NVMEFS_TEST_TRADDR
read -r -a ports <<<"$NVMEFS_TEST_TRSVCIDS"

# compare_with_nvme_cli PORT: both discover at PORT ('' for none: each picks its default).
compare_with_nvme_cli() {
	local port=$1 ours ref at=(-t "$trtype" -a "$addr")
	[[ -z $port ]] || at+=(-s "$port")
	ours=$("$NVMEFS" discover "${at[@]}" -o json) || fail "nvmefs discover ${at[*]} failed"
	ref=$(nvme discover "${at[@]}" -o json) || fail "nvme discover ${at[*]} failed"
	diff -u <(jq -S . <<<"$ref") <(jq -S . <<<"$ours") ||
		fail "JSON of nvmefs discover differs from nvme discover ${at[*]} (- nvme, + nvmefs)"
	diff -u <(nvme discover "${at[@]}") <("$NVMEFS" discover "${at[@]}") ||
		fail "normal output of nvmefs discover differs from nvme discover ${at[*]} (- nvme, + nvmefs)"
	jq -r '.records[].subnqn' <<<"$ours"
}

for port in "${ports[@]}"; do
	log "port $port: nvmefs and nvme-cli agree"
	listed=$(compare_with_nvme_cli "$port")
	for nqn in "${subnqns[@]}" nqn.2014-08.org.nvmexpress.discovery; do
		grep -qxF "$nqn" <<<"$listed" || fail "port $port: $nqn is not in the discovery log: $listed"
	done
done

if [[ $trtype == tcp ]]; then
	log "no service id: both read the log at NVMe/TCP's discovery port, $NVMEFS_TEST_TCP_DISC_TRSVCID"
	listed=$(compare_with_nvme_cli "")
	grep -qxF "${subnqns[0]}" <<<"$listed" || fail "the log at the default port does not list ${subnqns[0]}: $listed"
	json=$("$NVMEFS" discover -t tcp -a "$addr" -o json) || fail "nvmefs discover -t tcp with no -s failed"
	[[ $(jq -r '.records[0].trsvcid' <<<"$json") == "$NVMEFS_TEST_TCP_DISC_TRSVCID" ]] ||
		fail "nvmefs discover -t tcp with no -s did not read the log at port $NVMEFS_TEST_TCP_DISC_TRSVCID: $json"
fi

log "a port whose records say a secure channel is required: printed as nvme-cli prints them; --all-paths refuses it in one line (no key; over RDMA, no TLS at all)"
tls_port=$((ports[-1] + 30)) d=$NVMEFS_TEST_NVMET/ports/199
mkdir "$d" || fail "creating nvmet port 199 failed"
echo "$trtype" >"$d/addr_trtype"
echo ipv4 >"$d/addr_adrfam"
echo "$addr" >"$d/addr_traddr"
echo "$tls_port" >"$d/addr_trsvcid"
# nvmet takes TREQ only on a port no subsystem is linked to yet; without TLS keys it keeps serving
# plain connections there (nvme connect works), so only the records tell.
echo required >"$d/addr_treq" || fail "nvmet refused addr_treq=required on a $trtype port"
ln -s "$NVMEFS_TEST_NVMET/subsystems/${subnqns[0]}" "$d/subsystems/${subnqns[0]}"
compare_with_nvme_cli "$tls_port" >/dev/null
if [[ $trtype == tcp ]]; then
	refusal="requires a secure channel \\(TLS; the first at $addr:$tls_port\\): give its pre-shared key with --tls-key"
else
	refusal="requires a secure channel \\(the first at $addr:$tls_port\\), which nvmefs has only over NVMe/TCP \\(TLS\\)"
fi
expect_failure "--all-paths where every record requires a secure channel" \
	"--all-paths: every path to ${subnqns[0]} $refusal" \
	30000 -- "$NVMEFS" perf -t "$trtype" -a "$addr" -s "$tls_port" -n "${subnqns[0]}" --all-paths --time 1
rm "$d/subsystems/${subnqns[0]}" && rmdir "$d" || fail "removing nvmet port 199 failed"

log "no target: the lines of discovery.conf, as nvme discover reads them, each log in turn"
conf=$(mktemp)
printf '# both ports\n\n-t %s -a %s -s %s\n--transport=%s --traddr=%s --trsvcid=%s\n' \
	"$trtype" "$addr" "${ports[0]}" "$trtype" "$addr" "${ports[1]}" >"$conf"
json=$(NVMEFS_DISCOVERY_CONF=$conf "$NVMEFS" discover -o json) || fail "nvmefs discover reading $conf failed"
[[ $(jq -s -c 'map(.records[] | select(.subtype == "current discovery subsystem") | .trsvcid)' <<<"$json") == "[\"${ports[0]}\",\"${ports[1]}\"]" ]] ||
	fail "discovery.conf's two lines did not give port ${ports[0]}'s log, then port ${ports[1]}'s: $json"
mkdir -p /etc/nvme && cp "$conf" /etc/nvme/discovery.conf
diff -u <("$NVMEFS" discover -t "$trtype" -a "$addr" -s "${ports[0]}"; "$NVMEFS" discover -t "$trtype" -a "$addr" -s "${ports[1]}") \
	<("$NVMEFS" discover) || fail "nvmefs discover with /etc/nvme/discovery.conf differs from a discover per line"
rm -f /etc/nvme/discovery.conf "$conf"

if [[ $trtype == tcp ]]; then
	log "-T and -f reach every queue's socket (ss: tos, and the interface after the address); --disable-sqflow is taken by nvmet"
	# The interface that holds the target's address: bound to lo, where 'ip route get' sends a
	# local address, a connection finds no listener, for nvme-tcp too.
	dev=$(ip -o addr show to "$addr" | awk '{ print $2; exit }')
	[[ -n $dev ]] || fail "no interface holds $addr"
	"$NVMEFS" perf -t tcp -a "$addr" -s "${ports[0]}" -n "${subnqns[0]}" -T 0x28 -f "$dev" --disable-sqflow \
		--time 6 >/tmp/tos.out 2>&1 &
	perf_pid=$!
	socks=
	for _ in $(seq 300); do
		socks=$(ss -tnO --tos state established dst "$addr:${ports[0]}" 2>&1 | tail -n +2)
		(($(grep -c . <<<"$socks") >= 2)) && break
		kill -0 "$perf_pid" 2>/dev/null || break
		sleep 0.1
	done
	(($(grep -c . <<<"$socks") >= 2)) ||
		fail "perf's queues did not show in ss (dev $dev): $socks; perf: $(cat /tmp/tos.out)"
	while read -r line; do
		[[ $line == *"%$dev:"* && $line == *"tos:0x28"* ]] ||
			fail "a queue's socket is not bound to $dev with TOS 0x28: $line"
	done <<<"$socks"
	wait "$perf_pid" || fail "perf with -T, -f and --disable-sqflow failed: $(cat /tmp/tos.out)"
	log "$(wc -l <<<"$socks") sockets, each with tos:0x28 on $dev"
else
	log "-T sets the RDMA CM's type of service and --disable-sqflow is taken by nvmet; -f is refused over RDMA, as by nvme-rdma"
	"$NVMEFS" perf -t rdma -a "$addr" -s "${ports[0]}" -n "${subnqns[0]}" -T 0x28 --disable-sqflow --time 1 \
		>/tmp/tos.out 2>&1 || fail "perf over RDMA with -T and --disable-sqflow failed: $(cat /tmp/tos.out)"
	expect_failure "-f over RDMA" "a host interface \\(-f/--host-iface, host_iface\\): transport 'rdma' does not take this option, only 'tcp'" 5000 2 -- \
		"$NVMEFS" perf -t rdma -a "$addr" -s "${ports[0]}" -n "${subnqns[0]}" -f lo --time 1
fi

other=tcp
[[ $trtype == rdma ]] || other=rdma
# This part goes over both transports on purpose: what came before went over the run's alone, and
# what comes after is counted from its end.
check_run_transport
log "--all-paths across transports: port 1's log refers to the $other port at ${ports[0]}, whose log lists the subsystem there too; a path over each"
d=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/referrals/to-$other
mkdir "$d" || fail "making the referral $d failed"
echo "$other" >"$d/addr_trtype"
echo ipv4 >"$d/addr_adrfam"
echo "$addr" >"$d/addr_traddr"
echo "${ports[0]}" >"$d/addr_trsvcid"
echo 1 >"$d/enable"
out=$("$NVMEFS" perf -v -t "$trtype" -a "$addr" -s "${ports[0]}" -n "${subnqns[0]}" --all-paths --iopolicy round-robin --time 1 -o json \
	2>/tmp/mixed.err) || fail "perf --all-paths with a referral to the $other port failed: $(cat /tmp/mixed.err)"
for t in "$trtype" "$other"; do
	grep -q "connecting path [12] to ${subnqns[0]} at $addr:${ports[0]} over $t\$" /tmp/mixed.err ||
		fail "--all-paths connected no path over $t: $(grep 'connecting path' /tmp/mixed.err)"
done
jq -e '(.paths | length) == 2 and all(.paths[]; .state == "live" and .ios > 0)' <<<"$out" >/dev/null ||
	fail "--all-paths across transports: not two live paths that both did I/O: $(jq -c .paths <<<"$out")"
log "$(jq -c '[.paths[] | {trsvcid, ios}]' <<<"$out")"
rmdir "$d" || fail "removing the referral $d failed"
rdma_packets_at_start=$(rdma_packets) tcp_opens_at_start=$(tcp_active_opens)

log "referrals: port 1 refers to port 2 and port 2 back to port 1"
refer() { port_refer "$(nvmet_port_id "$1")" "$2"; } # PORT TARGET_TRSVCID
refer 1 "${ports[1]}"
refer 2 "${ports[0]}"
compare_with_nvme_cli "${ports[0]}" >/dev/null

count_logs() { "$NVMEFS" discover -t "$trtype" -a "$addr" -s "${ports[0]}" "$@" | grep -c '^Discovery Log Number of Records'; }
n=$(count_logs) || fail "nvmefs discover with a referral in the log failed"
((n == 1)) || fail "without --referral-depth, $n logs were read; expected 1"
n=$(count_logs --referral-depth 5) || fail "nvmefs discover --referral-depth 5 failed"
((n == 2)) || fail "with a referral loop between two ports, $n logs were read; expected each port's once (2)"
json=$("$NVMEFS" discover -t "$trtype" -a "$addr" -s "${ports[0]}" --referral-depth 1 -o json) ||
	fail "nvmefs discover --referral-depth 1 -o json failed"
# One JSON document per log read, in the order read.
[[ $(jq -s 'map(.records[] | select(.subtype == "current discovery subsystem") | .trsvcid)' <<<"$json" | jq -c .) == "[\"${ports[0]}\",\"${ports[1]}\"]" ]] ||
	fail "--referral-depth 1 -o json did not give port ${ports[0]}'s log, then port ${ports[1]}'s: $json"

log "an unreachable referral is reported and skipped, and the walk goes on"
dead=$((ports[1] + 100))
refer 2 "$dead"
err=$(mktemp)
rc=0
n=$(count_logs --referral-depth 5 2>"$err") || rc=$?
((rc == 1)) || fail "a walk with an unreachable referral exited $rc; expected 1: $(cat "$err")"
((n == 2)) || fail "with an unreachable referral beside a loop, $n logs were printed; expected 2"
grep -q "skipped the referral to $addr:$dead (depth 2)" "$err" ||
	fail "no one-line report of the unreachable referral to port $dead: $(cat "$err")"
(($(wc -l <"$err") == 1)) || fail "expected one line on stderr, got: $(cat "$err")"
rm -f "$err"
check_run_transport
echo "PASS: discover matches nvme-cli over $trtype on ${#ports[@]} ports; referrals followed once each, unreachable ones skipped"
