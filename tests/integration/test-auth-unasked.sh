#!/usr/bin/env bash
# testbed: --ns-size 64M --ports 2
# A controller secret (--dhchap-ctrl-secret) is there to make the controller prove itself: a
# subsystem that lets any host in and never asks for DH-HMAC-CHAP (what anything answering on
# the target's address could be) is authenticated by nvmefs all the same, fails, and is refused:
# identify, perf and mount given both secrets fail with one line naming authentication, the
# mount mounting nothing, also with --all-paths (every path from the discovery log is refused
# like the first). With the host secret alone they connect, as before.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -rf /tmp/unasked-*' EXIT
nqn=${subnqns[0]}
host=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a3
[[ $(cat "$NVMEFS_TEST_NVMET/subsystems/$nqn/attr_allow_any_host") == 1 ]] ||
	fail "the testbed's $nqn does not allow any host"
key=$(nvme gen-dhchap-key -m 1 -l 32 -n "$host") || fail "nvme gen-dhchap-key failed"
ctrl_key=$(nvme gen-dhchap-key -m 1 -l 32 -n "$nqn") || fail "nvme gen-dhchap-key for the controller failed"
where=(-t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -q "$host")
both=(--dhchap-secret "$key" --dhchap-ctrl-secret "$ctrl_key")
refused="did not ask this host to authenticate.*--dhchap-ctrl-secret.*not trusted.*dhchap_ctrl_key for host $host"
perf_args=(--queues 1 --rw randread --bs 4k --size 8M --time 1)
mnt=/tmp/unasked-mnt
mkdir -p "$mnt"

log "both secrets: refused"
expect_failure "identify" "$refused" 20000 -- "$NVMEFS" identify "${where[@]}" "${both[@]}"
expect_failure "perf" "$refused" 20000 -- "$NVMEFS" perf "${where[@]}" "${both[@]}" "${perf_args[@]}"
expect_failure "mount" "$refused" 20000 -- \
	timeout 60 "$NVMEFS" mount "${where[@]}" "${both[@]}" --pidfile "$mnt.pid" "$mnt"
! mountpoint -q "$mnt" || fail "the refused mount left $mnt mounted"
[[ ! -s $mnt.pid ]] || fail "the refused mount left a daemon behind: PID $(cat "$mnt.pid")"

# Each path of the log is tried and refused, the second port's through port 1's referral.
read -r -a ports <<<"$NVMEFS_TEST_TRSVCIDS"
port_refer "$(nvmet_port_id 1)" "${ports[1]}"
rc=0
out=$(timeout 60 "$NVMEFS" mount "${where[@]}" "${both[@]}" --all-paths --pidfile "$mnt.pid" "$mnt" 2>&1) ||
	rc=$?
((rc != 0)) || fail "mount --all-paths with both secrets succeeded on a subsystem that never authenticates"
(($(grep -c "left out: .*$refused" <<<"$out") == 2)) ||
	fail "mount --all-paths: not both paths were refused for authentication: $out"
! mountpoint -q "$mnt" || fail "the refused mount --all-paths left $mnt mounted"
log "mount --all-paths: exit $rc: $out"

log "the host secret alone: connects, as before"
out=$("$NVMEFS" identify "${where[@]}" --dhchap-secret "$key" -o json 2>&1) ||
	fail "identify with the host secret alone failed: $out"
jq -e '.sn == "nvmefs00000000000001"' <<<"$out" >/dev/null || fail "identify printed no serial number: $out"
out=$("$NVMEFS" perf "${where[@]}" --dhchap-secret "$key" "${perf_args[@]}" -o json 2>/tmp/unasked-err) ||
	fail "perf with the host secret alone failed: $(cat /tmp/unasked-err) $out"
jq -e '.errors == 0 and .iops > 0' <<<"$out" >/dev/null || fail "perf with the host secret alone did no I/O: $out"
nvmefs_mount "$nqn" "$mnt" -q "$host" --dhchap-secret "$key"
dd if="$mnt/n1" of=/dev/null bs=64k count=16 iflag=direct status=none || fail "reading through the mount failed"
nvmefs_unmount "$mnt"
check_run_transport
echo "PASS: a controller secret makes nvmefs authenticate a controller that does not ask; nvmet refuses, and so does nvmefs"
