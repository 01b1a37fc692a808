#!/usr/bin/env bash
# testbed: --ns-size 64M --tls NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:
# Issue 38: an 8 s port drop (the subsystem unlinked from the port that requires TLS) under fio
# verify, through a mount over TLS and on the kernel initiator's block device over TLS (the
# reference), one after the other in one boot, with the same reconnect delay (1 s) and loss timeout
# (60 s). Both run the same fio job (random 4 KiB writes at depth 8, each block read back and
# checked with crc32c) to its end with no error; each initiator's stall is fio's longest I/O.
# nvmefs's stall beyond its outage must not be longer than the kernel's (with the tolerance of
# test-outage-vs-kernel.sh), and every reconnect is a fresh TLS handshake: tlshd logs one more
# for each of nvmefs's queues after the port is back (no session is resumed: the target issues
# no tickets, and nvmefs asks for none). TCP only, whatever the run's transport.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_tls
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-tls-outage
link=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true' EXIT
cd /tmp
outage_s=8 fio_s=20 recover_s=20
# As in test-outage-vs-kernel.sh: what is compared is each initiator's stall beyond its own outage,
# with 250 ms for the emulated guest's scheduling; a comparison that fails is run once more and the
# better run of each counts.
tolerance_ms=250
declare -A stall=() outage=() redone=()

live() {
	case $1 in
	nvmefs) ctrl_state_is "$mnt" '^live$' ;;
	kernel) [[ $(kernel_ctrl_state "$nqn") == live ]] ;;
	esac
}

# run WHO: the fio job through WHO (nvmefs's mount, the kernel's block device) across the port
# drop; records its stall and outage, and the handshakes tlshd logged from the fault until WHO was
# live again in redone[WHO].
run() {
	local who=$1 file start before
	log "$who over TLS: the port dropped for $outage_s s"
	if [[ $who == nvmefs ]]; then
		nvmefs_mount "$nqn" "$mnt" -o "tls_key=$tls_keyfile" -c 1 -l 60
		[[ $(nvmefs_stats "$mnt" .controller.tls) == TLS_AES_128_GCM_SHA256 ]] ||
			fail "the mount's stats say TLS '$(nvmefs_stats "$mnt" .controller.tls)', not TLS_AES_128_GCM_SHA256"
		file=$mnt/n1
	else
		file=$(kernel_connect_tls "$nqn" "" "" ,reconnect_delay=1,ctrl_loss_tmo=60) ||
			fail "the kernel initiator could not connect to $nqn over TLS"
	fi
	fio_load_start "$who" "$file" "$fio_s"
	sleep 4
	load_running "$who" || fail "fio ended before the outage: $(cat "/tmp/fio-$who.err")"
	before=$(tls_handshakes)
	start=$(now_ms)
	port_unlink "$nqn"
	sleep_until "$start" $((outage_s * 1000))
	port_link "$nqn"
	outage[$who]=$(($(now_ms) - start))
	wait_until $((recover_s * 1000)) live "$who" || fail "$who has not recovered $recover_s s after the port came back"
	log "$who is live again $(($(now_ms) - start)) ms after the port dropped"
	redone[$who]=$(($(tls_handshakes) - before))
	fio_load_check "$who" 120
	stall[$who]=$(fio_stall_ms "/tmp/fio-$who.json")
	if [[ $who == nvmefs ]]; then
		local queues reconnects
		queues=$(nvmefs_stats "$mnt" .controller.io_queues)
		reconnects=$(nvmefs_ctrl_stat "$mnt" reconnects)
		((reconnects >= 1)) || fail "the mount's stats count $reconnects reconnects: $(jq -c '.controller' "$mnt/stats")"
		((redone[nvmefs] >= queues + 1)) ||
			fail "tlshd logged ${redone[nvmefs]} handshakes across nvmefs's reconnect, fewer than its admin queue and $queues I/O queues: a queue came back without a fresh handshake"
		[[ $(nvmefs_stats "$mnt" .total.errors) == 0 ]] ||
			fail "the mount's stats count failed requests: $(jq -c 'del(.queues)' "$mnt/stats")"
		nvmefs_unmount "$mnt"
	else
		((redone[kernel] >= 2)) || fail "tlshd logged ${redone[kernel]} handshakes across the kernel's reconnect"
		kernel_disconnect "$nqn"
	fi
}

excess() { echo $((stall[$1] - outage[$1])); }
run nvmefs
run kernel
n_ex=$(excess nvmefs) k_ex=$(excess kernel)
if ((n_ex > k_ex + tolerance_ms)); then
	log "over TLS nvmefs stalled $n_ex ms beyond its outage, the kernel $k_ex ms: both once more"
	run nvmefs
	run kernel
	e=$(excess nvmefs)
	((e >= n_ex)) || n_ex=$e
	e=$(excess kernel)
	((e >= k_ex)) || k_ex=$e
fi
printf '# %-34s %-22s %s\n' "over TLS, ${outage_s} s port drop" nvmefs "kernel (nvme-tcp)"
printf '# %-34s %-22s %s\n' "stall (longest I/O)" "${stall[nvmefs]} ms" "${stall[kernel]} ms"
printf '# %-34s %-22s %s\n' "outage (fault to restored)" "${outage[nvmefs]} ms" "${outage[kernel]} ms"
printf '# %-34s %-22s %s\n' "stall beyond the outage (best)" "$n_ex ms" "$k_ex ms"
printf '# %-34s %-22s %s\n' "handshakes across the reconnect" "${redone[nvmefs]}" "${redone[kernel]}"
((n_ex <= k_ex + tolerance_ms)) ||
	fail "over TLS nvmefs stalled $n_ex ms beyond its outage, longer than the kernel's $k_ex ms (+${tolerance_ms} ms tolerance)"
outage_ms=${outage[nvmefs]}
check_stall "nvmefs over TLS across the port drop" "${stall[nvmefs]}"
check_run_transport
echo "PASS: over TLS, an 8 s port drop under fio verify: no error; nvmefs stalled $n_ex ms beyond its outage, the kernel $k_ex ms; ${redone[nvmefs]} fresh handshakes for nvmefs's reconnect"
