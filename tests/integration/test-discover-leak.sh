#!/usr/bin/env bash
# testbed: --subsystems 2
# Discovers in a row (40; 200 in make check-long) leave nothing behind on the target: its RDMA
# resources (queue pairs, CQs, CM ids, MRs, PDs) return to the baseline, so an initiator that
# connects and goes away over and over does not exhaust the target.
. "$(dirname "$0")/lib.sh"
require_nvmefs
runs=${NVMEFS_TEST_RUNS:-$(scaled 40 200)}

resources() { rdma res show | sed 's/^[0-9]*: //'; }
discover() { "$NVMEFS" discover -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -o json; }
# The first connection makes ib_core fill its per-device CQ pool, which it keeps
# (users 0 in 'rdma res show cq'): warm it up before taking the baseline.
for ((i = 0; i < 3; i++)); do discover >/dev/null || fail "warm-up discover failed"; done
wait_until 10000 steady resources || fail "the RDMA resources do not settle after the warm-up: $(resources)"
baseline=$(resources)
log "baseline: $baseline"
for ((i = 1; i <= runs; i++)); do
	discover >/tmp/disc.json || fail "discover run $i of $runs failed"
	((i % 50)) || log "$i runs"
done
jq -e '.records | length == 3' /tmp/disc.json >/dev/null || fail "the last discovery log is wrong: $(cat /tmp/disc.json)"
# The target releases a queue asynchronously after the disconnect.
wait_until 10000 output_is "$baseline" resources || fail "after $runs discovers the RDMA resources are '$(resources)', not the baseline '$baseline'"
echo "PASS: $runs discovers, RDMA resources back to baseline ($baseline)"
