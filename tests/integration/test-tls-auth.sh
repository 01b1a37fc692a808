#!/usr/bin/env bash
# testbed: --ns-size 64M --allow-host nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a3 --dhchap-key DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa: --tls NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:
# Issue 38: DH-HMAC-CHAP and TLS on one connect, against the kernel target (a host that
# subsystem requires DH-HMAC-CHAP of, on a port that requires TLS). The kernel initiator, the
# reference, connects with both; so does nvmefs, identify and a mount, and the data each writes
# reads the same through the other. Whether nvmet asks for DH-HMAC-CHAP on a queue that is
# already TLS depends on the kernel: 6.12 does; the secure concatenation series (6.14 on, the 7.x
# testbed kernel) skips it on TLS queues (nvmet_has_auth). What the kernel initiator without the
# secret gets says which this target is, and nvmefs must do the same: refused in one line naming
# --dhchap-secret where the kernel is refused, connected where the kernel connects. Where the
# target asks, a wrong secret is refused too. TCP only, whatever the run's transport.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_tls
nqn=${subnqns[0]}
host=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a3
hostid=00000000-0000-4000-8000-0000000000a3
dhkey=DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa:
mnt=/tmp/nvmefs-tls-auth
trap 'nvmefs_cleanup; rm -f /tmp/tls-auth-*' EXIT
(umask 077 && printf '%s\n' "$dhkey" >/tmp/tls-auth-dh)
where=(-t tcp -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -q "$host" --timeout 5000)

if kernel_connect_tls "$nqn" "$host" "$hostid" >/dev/null; then
	asks=0
	log "the kernel initiator over TLS without the DH-HMAC-CHAP secret got in: this nvmet skips DH-HMAC-CHAP on TLS queues ($(uname -r))"
	kernel_disconnect "$nqn"
	"$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile" -o json >/tmp/tls-auth-out 2>&1 ||
		fail "nvmefs identify over TLS without the secret failed where the kernel initiator got in: $(cat /tmp/tls-auth-out)"
else
	asks=1
	log "the kernel initiator over TLS without the DH-HMAC-CHAP secret is refused: this nvmet authenticates TLS queues ($(uname -r))"
	expect_failure "TLS, no DH-HMAC-CHAP secret" "requires in-band authentication.*--dhchap-secret" 20000 -- \
		"$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile"
	wrong=$(nvme gen-dhchap-key -m 1 -l 32 -n "$host") || fail "nvme gen-dhchap-key failed"
	expect_failure "TLS, wrong DH-HMAC-CHAP secret" "this host's DH-HMAC-CHAP response.*--dhchap-secret" 20000 -- \
		"$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile" --dhchap-secret "$wrong"
fi

log "the kernel initiator with both"
dev=$(kernel_connect_tls "$nqn" "$host" "$hostid" ",dhchap_secret=$dhkey") ||
	fail "the kernel initiator could not connect with DH-HMAC-CHAP and TLS"
head -c 1048576 /dev/urandom >/tmp/tls-auth-data
dd if=/tmp/tls-auth-data of="$dev" bs=1M count=1 oflag=direct status=none || fail "writing through $dev failed"

log "nvmefs identify with both agrees with the kernel initiator's"
out=$("$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile" --dhchap-secret-file /tmp/tls-auth-dh -o json 2>&1) ||
	fail "nvmefs identify with DH-HMAC-CHAP and TLS failed where the kernel initiator connected: $out"
kid=$(nvme id-ctrl "$dev" -o json) || fail "nvme id-ctrl $dev failed"
[[ $(jq -r .sn <<<"$out") == $(jq -r .sn <<<"$kid") ]] ||
	fail "identify with DH-HMAC-CHAP and TLS: serial number '$(jq -r .sn <<<"$out")', the kernel initiator's '$(jq -r .sn <<<"$kid")'"

log "a mount with both, from an fstab-style option list, reads what the kernel wrote and writes what it reads"
before=$(tls_handshakes)
nvmefs_mount "$nqn" "$mnt" -q "$host" -o "tls_key=$tls_keyfile,dhchap_secret_file=/tmp/tls-auth-dh"
tls_mount_agrees "$mnt" "$dev" /tmp/tls-auth-data "$before" "with DH-HMAC-CHAP and TLS"
fio --name=tls-auth --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=8 --rw=randwrite --bs=4k \
	--size=16M --offset=8M --verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 --verify_state_save=0 \
	>/tmp/tls-auth-fio 2>&1 || fail "fio verify through the mount with DH-HMAC-CHAP and TLS failed: $(tail -5 /tmp/tls-auth-fio)"
nvmefs_unmount "$mnt"
check_run_transport
echo "PASS: DH-HMAC-CHAP and TLS on one connect ($( ((asks)) && echo "the target authenticates TLS queues" || echo "the target skips DH-HMAC-CHAP on TLS queues")): identify and a mount agree with the kernel initiator"
