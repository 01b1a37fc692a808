#!/usr/bin/env bash
# testbed: --ns-size 64M
# The subsystem unlinked from the target's port for 8 s under load (nvmet deletes the controller
# and the port stops listening), then linked again: the controller goes resetting, then connecting,
# and reconnects once the port is back. Across it, fio writing and verifying (crc32c) through the
# mounted file, and then nvmefs perf --verify, run to their end with no I/O error and no verify
# error: the I/O held during the outage is resubmitted. The mount's stats count the reconnect.
. "$(dirname "$0")/lib.sh"
require_nvmefs
syslog_start
nqn=${subnqns[0]}
link=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/subsystems/$nqn
[[ -L $link ]] || fail "$link is missing: cannot reconfigure the target"
trap 'load_cleanup; nvmefs_cleanup; [[ -L $link ]] || port_link "$nqn" 2>/dev/null || true' EXIT
cd /tmp
outage_under_load "$nqn" /tmp/nvmefs-outage 8 "port_unlink $nqn" "port_link $nqn"
check_run_transport
echo "PASS ($trtype): 8 s port outage under fio verify through the mount and under perf --verify: reconnected, no I/O or verify error"
