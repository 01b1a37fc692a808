#!/usr/bin/env bash
# testbed: --ns-size 64M --allow-host nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a4 --dhchap-key DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa: --dhchap-dhgroup ffdhe2048 --tls NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:
# Issue 38 item 4: secure channel concatenation (--concat), DH-HMAC-CHAP on a plain admin
# connection generating the TLS PSK every queue then runs TLS 1.3 with, against the kernel
# target on a port of its own (addr_tsas tls1.3, addr_treq "not required": the first admin
# connection is plain). Where the kernel has it (its fabrics options list concat: the 7.x
# testbed kernel), the kernel initiator with concat is the reference: nvmefs identify agrees with
# it, a mount with -o concat reads what the kernel wrote and writes what it reads, over TLS
# (stats say the suite; tlshd did the handshakes), reconnects over TLS with a new key after the
# subsystem left the port and came back, and a wrong secret is refused in one line. Where the kernel has not (6.12), the target refuses SC_C, and so does nvmefs, in one line
# that says the target lacks it. TCP only, whatever the run's transport.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_tls
nqn=${subnqns[0]}
host=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a4
hostid=00000000-0000-4000-8000-0000000000a4
dhkey=DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa:
mnt=/tmp/nvmefs-concat
port=$NVMEFS_TEST_NVMET/ports/150
trsvcid=4460
# The mount's own check counts its connections to the testbed's ports: this one too.
NVMEFS_TEST_TRSVCIDS+=" $trsvcid"
trap 'nvmefs_cleanup; nvme disconnect -n "$nqn" >/dev/null 2>&1; rm -f "$port/subsystems/$nqn"; rmdir "$port" 2>/dev/null; rm -f /tmp/concat-*' EXIT
(umask 077 && printf '%s\n' "$dhkey" >/tmp/concat-dh)
where=(-t tcp -a "$NVMEFS_TEST_TRADDR" -s "$trsvcid" -n "$nqn" -q "$host" --timeout 5000)

concat=0
grep -q concat /dev/nvme-fabrics && concat=1
log "a port for concatenation ($(((concat)) && echo "TLS 1.3, a plain connection let in" || echo "plain: this kernel has no concatenation"), $(uname -r))"
mkdir "$port" || fail "creating nvmet port 150 failed"
echo tcp >"$port/addr_trtype"
echo ipv4 >"$port/addr_adrfam"
echo "$NVMEFS_TEST_TRADDR" >"$port/addr_traddr"
echo "$trsvcid" >"$port/addr_trsvcid"
if ((concat)); then
	echo tls1.3 >"$port/addr_tsas" || fail "addr_tsas tls1.3 refused"
	echo "not required" >"$port/addr_treq" || fail "addr_treq 'not required' refused"
fi
ln -s "$NVMEFS_TEST_NVMET/subsystems/$nqn" "$port/subsystems/$nqn" || fail "linking $nqn to port 150 failed"

if ((!concat)); then
	expect_failure "--concat against a target without it" "does not do secure channel concatenation.*leave --concat out" 20000 -- \
		"$NVMEFS" identify "${where[@]}" --concat --dhchap-secret-file /tmp/concat-dh
	check_run_transport
	echo "PASS: a target without secure concatenation ($(uname -r)) refuses --concat, and nvmefs says so in one line"
	exit 0
fi

log "the kernel initiator with concat"
(exec 3<>/dev/nvme-fabrics &&
	echo "transport=tcp,traddr=$NVMEFS_TEST_TRADDR,trsvcid=$trsvcid,nqn=$nqn,hostnqn=$host,hostid=$hostid,dhchap_secret=$dhkey,concat" >&3) ||
	fail "the kernel initiator could not connect with secure concatenation"
wait_until 10000 kernel_ns_dev "$nqn" 1 >/dev/null || fail "kernel initiator: no block device for $nqn with concat"
dev=$(kernel_ns_dev "$nqn" 1)
head -c 1048576 /dev/urandom >/tmp/concat-data
dd if=/tmp/concat-data of="$dev" bs=1M count=1 oflag=direct status=none || fail "writing through $dev failed"

log "nvmefs identify with --concat agrees with the kernel initiator's"
out=$("$NVMEFS" identify "${where[@]}" --concat --dhchap-secret-file /tmp/concat-dh -o json 2>&1) ||
	fail "nvmefs identify with --concat failed where the kernel initiator connected: $out"
kid=$(nvme id-ctrl "$dev" -o json) || fail "nvme id-ctrl $dev failed"
[[ $(jq -r .sn <<<"$out") == $(jq -r .sn <<<"$kid") ]] ||
	fail "identify with --concat: serial number '$(jq -r .sn <<<"$out")', the kernel initiator's '$(jq -r .sn <<<"$kid")'"

log "a mount with -o concat reads what the kernel wrote and writes what it reads, over TLS"
handshakes=$(tls_handshakes)
NVMEFS_TEST_TRSVCID=$trsvcid nvmefs_mount "$nqn" "$mnt" -q "$host" -c 1 -o "concat,dhchap_secret_file=/tmp/concat-dh"
tls_mount_agrees "$mnt" "$dev" /tmp/concat-data "$handshakes" "with --concat"
queues=$(nvmefs_stats "$mnt" .controller.io_queues)

log "a reconnect makes a new key: the subsystem unlinked from the port and linked again"
handshakes=$(tls_handshakes)
rm "$port/subsystems/$nqn" || fail "unlinking $nqn from port 150 failed"
wait_ctrl_state "$mnt" '^(resetting|connecting)$' 15000
ln -s "$NVMEFS_TEST_NVMET/subsystems/$nqn" "$port/subsystems/$nqn" || fail "linking $nqn to port 150 again failed"
wait_ctrl_state "$mnt" '^live$' 30000
cmp <(kernel_read "$dev" $((4 * 65536)) 65536) <(dd if="$mnt/n1" bs=64k skip=4 count=1 iflag=direct status=none) ||
	fail "after the reconnect the mount reads other data than the kernel initiator"
[[ $(nvmefs_stats "$mnt" .controller.tls) == TLS_AES_128_GCM_SHA256 ]] || fail "after the reconnect the mount runs without TLS"
((($(tls_handshakes) - handshakes) >= queues + 1)) ||
	fail "tlshd logged $(($(tls_handshakes) - handshakes)) handshakes for the reconnect, fewer than the admin queue and $queues I/O queues"
nvmefs_unmount "$mnt"

log "a wrong DH-HMAC-CHAP secret is refused in one line"
wrong=$(nvme gen-dhchap-key -m 1 -l 32 -n "$host") || fail "nvme gen-dhchap-key failed"
expect_failure "--concat, wrong secret" "DH-HMAC-CHAP response.*--dhchap-secret" 20000 -- \
	"$NVMEFS" identify "${where[@]}" --concat --dhchap-secret "$wrong"
kernel_disconnect "$nqn"
check_run_transport
echo "PASS: secure concatenation ($(uname -r)): identify and a mount over the TLS it keys agree with the kernel initiator's concat; a wrong secret refused in one line"
