#!/usr/bin/env bash
# testbed: --tls NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:
# Issue 38: NVMe/TCP with TLS 1.3 and a pre-shared key, against the kernel target (nvmet-tcp with
# tlshd; the testbed's --tls requires TLS on its TCP port and puts the key's TLS PSKs into the
# .nvme keyring). The kernel initiator, the reference, connects over TLS through the same tlshd;
# nvmefs identify and a mount's data agree with it; a plain connect and a wrong key are each
# refused with one line; and TLS was really used: tlshd logged a handshake for each of nvmefs's
# connections, and the mount's stats name the suite. TCP only, whatever the run's transport.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_tls
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-tls
trap 'nvmefs_cleanup' EXIT
where=(-t tcp -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn")

log "a plain connect to the port that requires TLS is refused in one line"
expect_failure "plain connect" "reset queue 0's connection.*If the port requires TLS, give --tls-key" \
	8000 1 -- "$NVMEFS" identify "${where[@]}" --timeout 3000

log "a wrong key is refused in one line"
wrong=/tmp/wrong.key
(umask 077 && "$NVMEFS" gen-tls-key >"$wrong")
expect_failure "wrong key" "TLS handshake with .* failed .*check that --tls-key is the target's key" \
	8000 1 -- "$NVMEFS" identify "${where[@]}" --tls-key "$wrong" --timeout 3000

log "the kernel initiator connects over TLS (nvme-cli 2.3 has no --tls: the kernel's option)"
dev=$(kernel_connect_tls "$nqn") || fail "the kernel initiator could not connect to $nqn over TLS"
kctrl=/sys/block/${dev#/dev/}/device
[[ -e $kctrl/tls_key ]] && log "the kernel initiator's controller uses TLS key $(<"$kctrl/tls_key")"

log "nvmefs identify over TLS agrees with the kernel initiator's"
before=$(tls_handshakes)
out=$("$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile" -o json) || fail "nvmefs identify over TLS failed: $out"
after=$(tls_handshakes)
((after > before)) || fail "nvmefs identify over TLS succeeded but tlshd logged no handshake for it"
kid=$(nvme id-ctrl "$dev" -o json) || fail "nvme id-ctrl $dev failed"
for f in sn mn fr subnqn; do
	[[ $(jq -r ".$f" <<<"$out" | sed 's/ *$//') == $(jq -r ".$f" <<<"$kid" | sed 's/ *$//') ]] ||
		fail "identify over TLS: $f is '$(jq -r ".$f" <<<"$out")', the kernel initiator's is '$(jq -r ".$f" <<<"$kid")'"
done

log "identity version 0, whose handshake is quick enough that the ICReq reached tlshd before the target had the socket back"
out0=$("$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile" --identity 0 -o json) ||
	fail "nvmefs identify over TLS with identity version 0 failed: $out0"
[[ $(jq -r .sn <<<"$out0") == $(jq -r .sn <<<"$out") ]] || fail "identify with identity version 0 gives another serial number"

log "data the kernel initiator wrote over TLS reads the same through a mount over TLS"
head -c 1048576 /dev/urandom >/tmp/tls-data
dd if=/tmp/tls-data of="$dev" bs=1M count=1 oflag=direct status=none || fail "writing through $dev failed"
before=$(tls_handshakes)
# As /etc/fstab gives it: the key in a file only its owner can read.
nvmefs_mount "$nqn" "$mnt" -o "tls_key=$tls_keyfile"
tls_mount_agrees "$mnt" "$dev" /tmp/tls-data "$before" "over TLS"
nvmefs_unmount "$mnt"
echo "PASS: TLS 1.3 PSK: identify and a mount's data agree with the kernel initiator over TLS; plain and wrong-key connects refused in one line"
