#!/usr/bin/env bash
# testbed: --subsystems 1 --ns-size 64M
# A namespace that goes away under a running workload ends it promptly and cleanly: nvmefs perf
# (2 queues, I/O timeout 5 s) exits non-zero within 15 s of the namespace being disabled on the
# target, by itself (not killed by a signal, no core dump, no hang), saying that I/Os failed
# with the target's status for a disabled namespace (Internal Path Error).
# Once the namespace is enabled again, a new run succeeds: nothing is left broken on the target.
. "$(dirname "$0")/lib.sh"
require_nvmefs
nqn=${subnqns[0]}
enable=$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/1/enable
[[ -w $enable ]] || fail "$enable is missing: cannot disable the namespace"
trap 'echo 1 >"$enable" 2>/dev/null || true; rm -f /tmp/nd-*' EXIT
perf() { "$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$@"; }
ulimit -c unlimited
cd /tmp
rm -f /tmp/core*

log "start perf (30 s, 2 queues, --io-timeout 5000) and disable the namespace after 2 s"
timeout -s KILL 40 "$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
	--time 30 --io-timeout 5000 --queues 2 --rw randrw --bs 4k >/tmp/nd-out 2>/tmp/nd-err &
pid=$!
wait_progress "$pid" /tmp/nd-err 2
echo 0 >"$enable" || fail "disabling the namespace failed"
disabled=$(now_ms)
rc=0
wait "$pid" || rc=$?
elapsed=$(($(now_ms) - disabled))
log "perf exited $rc, $elapsed ms after the namespace was disabled"
log "its stderr (last lines): $(tail -n 3 /tmp/nd-err | tr '\n' '|')"
((rc != 137)) || fail "perf hung: 'timeout 40' had to kill it ($elapsed ms after the namespace was disabled). stderr: $(cat /tmp/nd-err)"
((rc < 128)) || fail "perf died of signal $((rc - 128)): $(cat /tmp/nd-err)"
((rc != 0)) || fail "perf exited 0 although its namespace was disabled under it: $(cat /tmp/nd-err)"
((elapsed <= 15000)) || fail "perf took $elapsed ms to give up after the namespace was disabled (at most 15000)"
compgen -G '/tmp/core*' >/dev/null && fail "perf dumped core: $(ls /tmp/core*)"
# nvmet answers I/O to a namespace of the subsystem that is disabled with Internal Path Error
# (nvmet_req_find_ns()), for a multipath host to try another path; perf has none and fails it.
grep -Eq "^nvmefs perf: thread [0-9]+: [0-9]+ I/Os? failed, the first with: Internal Path Error: " /tmp/nd-err ||
	fail "perf did not say its I/Os failed with the target's Internal Path Error: $(cat /tmp/nd-err)"
grep -v '^\[' /tmp/nd-err | head -n 3 | while read -r line; do log "error: $line"; done

log "enable the namespace again: a new run succeeds"
echo 1 >"$enable" || fail "enabling the namespace again failed"
perf --time 2 --queues 2 --io-timeout 5000 -o json >/tmp/nd-out 2>/tmp/nd-err ||
	fail "perf after re-enabling the namespace failed: $(cat /tmp/nd-err)"
jq -e '.errors == 0 and .iops > 0' /tmp/nd-out >/dev/null || fail "perf after re-enabling: $(cat /tmp/nd-out)"
echo "PASS: a disabled namespace ends perf in $elapsed ms with exit $rc; re-enabled, it works again"
