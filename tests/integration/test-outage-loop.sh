#!/usr/bin/env bash
# testbed: --ns-size 64M
# 20 short outages in a row (the subsystem unlinked from the port, and linked again as soon as the
# controller has noticed) under a light verifying load through the mount: each time the controller
# reconnects, the load sees no error and no mismatch, and afterwards the daemon holds what it held
# before the loop: the same RDMA resources (queue pairs, CQs, MRs, CM ids, PDs), the same open
# descriptors, the same heap in use (to a few KiB) and about the same resident memory; and the
# target's RDMA resources are back to theirs.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-loop
link=$NVMEFS_TEST_NVMET/ports/1/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true' EXIT
cd /tmp
outages=${NVMEFS_TEST_OUTAGES:-20}

# short_outage: unlinks the port, links it again 0.3 s after the controller noticed, and waits
# for it to be live.
short_outage() {
	port_unlink "$nqn"
	wait_ctrl_state "$mnt" '^(resetting|connecting)$' 15000
	sleep 0.3
	port_link "$nqn"
	wait_ctrl_state "$mnt" '^live$' 15000
}

# What the daemon holds: RDMA resources by kind, open descriptors, heap in use (the mount's stats)
# and resident KiB.
held() {
	local kind
	for kind in qp cq mr cm_id pd; do echo -n "$kind $(rdma_res_count "$kind" "$pid") "; done
	echo -n "fds $(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l) "
	echo -n "heap_kib $(($(nvmefs_stats "$mnt" .memory.heap_bytes) / 1024)) "
	echo "rss_kib $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")"
}
resources() { rdma res show | sed 's/^[0-9]*: //'; }

nvmefs_mount "$nqn" "$mnt" -c 1
pid=$(nvmefs_pid "$mnt")
verify_loop_start light "$mnt/n1"
# The first outages warm up what then stays for the life of the process: resident memory grows
# by about 1 MiB over the first three (malloc arenas of the controller thread, pages touched for
# the first time), and much less after. The baseline is taken after them.
for ((i = 1; i <= 3; i++)); do
	short_outage
	log "warm-up outage $i: $(held)"
done
sleep 1
read -r -a before <<<"$(held)"
target_before=$(resources)
log "baseline after 3 outages: ${before[*]}"

mid=("${before[@]}")
start=$(now_ms)
for ((i = 1; i <= outages; i++)); do
	short_outage
	(($(now_ms) - start < 150000)) || fail "$i outages took more than 150 s"
	((i % 5)) || log "$i outages in $(($(now_ms) - start)) ms: $(held)"
	((i != outages / 2)) || read -r -a mid <<<"$(held)"
done
sleep 1
verify_loop_stop light
read -r -a after <<<"$(held)"
log "after $outages outages: ${after[*]}"
reconnects=$(nvmefs_ctrl_stat "$mnt" reconnects)
((reconnects == outages + 3)) || fail "the mount's stats count $reconnects reconnects after $((outages + 3)) outages: $(jq -c '.controller' "$mnt/stats")"
errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests: $(jq -c 'del(.queues)' "$mnt/stats")"

# The RDMA resources and the descriptors must match exactly: each reconnect closes what the
# failed connection held before it opens anew. The heap in use is the leak check: what a
# reconnect allocates it frees. It still creeps up a little and levels off, as the threads'
# malloc caches (which count as in use) fill (seen: +13, +5, +1, +0 KiB per 5 outages), so it
# gets 64 KiB overall and 16 KiB over the second half of the loop, which a leak of 2 KiB per
# reconnect exceeds (tried: it fails).
# Resident memory is not: it moves with where malloc places each reconnect's allocations (seen:
# +260 KiB over 10 outages, and once a single step of +1.8 MiB that stayed, with the heap in use
# flat), so it gets only a coarse bound, for memory taken outside malloc.
for ((k = 0; k < ${#before[@]}; k += 2)); do
	name=${before[k]} b=${before[k + 1]} m=${mid[k + 1]} a=${after[k + 1]}
	case $name in
	heap_kib)
		((a <= b + 64 && a <= m + 16)) ||
			fail "the daemon's heap in use grew from $b KiB to $a KiB over $outages outages (at half-way $m KiB): a leak"
		;;
	rss_kib)
		((a <= b + 4096)) || fail "the daemon's resident memory grew from $b KiB to $a KiB over $outages outages, with its heap in use from ${before[k - 1]} KiB to ${after[k - 1]} KiB"
		;;
	*) ((a == b)) || fail "the daemon held $b $name before $outages outages, $a after: ${after[*]}" ;;
	esac
done
# The target releases a queue asynchronously after a disconnect.
wait_until 10000 output_is "$target_before" resources ||
	fail "after $outages outages the RDMA resources (both sides) are '$(resources)', not '$target_before'"
nvmefs_unmount "$mnt"
echo "PASS: $outages short outages under a verifying load: reconnected each time, no error, and the daemon's RDMA resources, descriptors and memory back to the baseline (${after[*]})"
