#!/usr/bin/env bash
# testbed: --tls NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:
# Issue 38 item 4: a SHA-384 key (HH 02, libnvme's test/psk.c's), whose TLS PSK and identity
# (NVMe1R02) nvmefs derives as libnvme's known answers say (tests/unit/check_tls_key.c). The
# transport binding asks for TLS_AES_256_GCM_SHA384 with it, which nvmefs offers alone. tlshd
# before ktls-utils 1.3 built with GnuTLS 3.8.11 (the testbed's, Debian 13's 1.0 with GnuTLS
# 3.8.9) allocates its PSK credentials without a hash, so GnuTLS takes every PSK with SHA-256: the
# kernel initiator, through the same tlshd, gets in with a SHA-256 suite, and nvmefs cannot. Then
# nvmefs must fail in one line that says so and what to do; a target that follows the binding
# must give it TLS_AES_256_GCM_SHA384. TCP only, whatever the run's transport.
export NVMEFS_TEST_TRTYPE=tcp
. "$(dirname "$0")/lib.sh"
require_nvmefs
require_tls
[[ $NVMEFS_TEST_TLS_KEY == NVMeTLSkey-1:02:* ]] || fail "the testbed's TLS key is not a SHA-384 one: $NVMEFS_TEST_TLS_KEY"
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-tls384
trap 'nvmefs_cleanup' EXIT
where=(-t tcp -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn")

log "the kernel initiator over TLS with the SHA-384 key (the reference)"
dev=$(kernel_connect_tls "$nqn") || fail "the kernel initiator could not connect to $nqn over TLS with the SHA-384 key"
kctrl=/sys/block/${dev#/dev/}/device
[[ -e $kctrl/tls_key ]] && log "the kernel initiator's controller uses TLS key $(<"$kctrl/tls_key")"

if out=$("$NVMEFS" identify "${where[@]}" --tls-key "$tls_keyfile" --timeout 5000 -o json 2>&1); then
	log "nvmefs identify over TLS with the SHA-384 key got in: the target takes SHA-384 PSKs"
	nvmefs_mount "$nqn" "$mnt" -o "tls_key=$tls_keyfile"
	suite=$(nvmefs_stats "$mnt" .controller.tls)
	[[ $suite == TLS_AES_256_GCM_SHA384 ]] || fail "with a SHA-384 key the mount's stats say TLS '$suite', not TLS_AES_256_GCM_SHA384"
	cmp <(head -c 65536 "$mnt/n1") <(kernel_read "$dev" 0 65536) || fail "the mount reads other data than the kernel initiator"
	nvmefs_unmount "$mnt"
	echo "PASS: a SHA-384 key negotiates TLS_AES_256_GCM_SHA384 with this target"
	exit 0
fi
line=$(grep -v '^$' <<<"$out")
(($(wc -l <<<"$line") == 1)) || fail "nvmefs's failure with the SHA-384 key is not one line: $out"
[[ $line =~ SHA-384.*ktls-utils\ 1\.3.*gen-tls-key\ -m\ 1 ]] ||
	fail "nvmefs's failure with the SHA-384 key does not say that the target's tlshd takes SHA-256 only and what to do: $line"
log "nvmefs with the SHA-384 key, against the testbed's tlshd: $line"
echo "PASS: a SHA-384 key against a tlshd that takes every PSK as SHA-256: refused in one line that says so and what to do"
