#!/usr/bin/env bash
# testbed: --ns-size 64M
# 25 times (100 in make check-long) connect, create 2 I/O queues, write/read/compare 1 MiB,
# disconnect, in one process: the process's open descriptors do not grow (io-tool checks), and the
# target's RDMA resources (queue pairs, CQs, CM ids, MRs, PDs) return to the baseline, so an
# application that reconnects over and over neither runs out of descriptors nor exhausts the target.
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_io_tool
cycles=${NVMEFS_TEST_CYCLES:-$(scaled 25 100)}

resources() { rdma res show | sed 's/^[0-9]*: //'; }
# The first connections make ib_core fill its per-device CQ pool, which it keeps
# (users 0 in 'rdma res show cq'): warm it up before taking the baseline.
io_tool "${subnqns[0]}" cycles 2 >/dev/null || fail "warm-up cycles failed"
wait_until 10000 steady resources || fail "the RDMA resources do not settle after the warm-up: $(resources)"
baseline=$(resources)
log "baseline: $baseline"

start=$(now_ms)
out=$(io_tool "${subnqns[0]}" cycles "$cycles") || fail "io-tool cycles $cycles failed: $out"
elapsed=$(($(now_ms) - start))
log "$cycles cycles in $elapsed ms: $out"
[[ $out =~ ^fds\ before\ ([0-9]+)\ after-first-cycle\ ([0-9]+)\ after\ ([0-9]+)$ ]] ||
	fail "io-tool printed '$out', not the descriptor counts"
# librdmacm keeps the RDMA device it used open for the life of the process (/dev/infiniband/uverbs0
# and its async event descriptor): the baseline is the count after the first cycle.
((BASH_REMATCH[2] - BASH_REMATCH[1] <= 2)) ||
	fail "the first cycle left $((BASH_REMATCH[2] - BASH_REMATCH[1])) descriptors open, more than the 2 librdmacm keeps: $out"
((BASH_REMATCH[3] <= BASH_REMATCH[2])) || fail "open descriptors grew: $out"

# The target releases a queue asynchronously after the disconnect.
wait_until 10000 output_is "$baseline" resources ||
	fail "after $cycles connect cycles the RDMA resources are '$(resources)', not the baseline '$baseline'"
echo "PASS: $cycles connect/2 queues/1 MiB write+read/disconnect cycles; descriptors and RDMA resources back to baseline ($baseline)"
