#!/usr/bin/env bash
# testbed: --subsystems 2 --namespaces 2 --ns-size 64M --lba-size 4096
# nvmefs identify reads what nvme-cli reads through the kernel initiator from the same subsystem:
# every Identify Controller field but the controller id (ours is another controller), and every
# Identify Namespace field and namespace descriptor, in both output formats.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap kernel_disconnect_all EXIT
addr=$NVMEFS_TEST_TRADDR
nqn=${subnqns[1]}
ident() { "$NVMEFS" identify -t "$trtype" -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$@"; }

dev=$(kernel_connect "$nqn")

log "Identify Controller of $nqn"
ours=$(ident -o json) || fail "nvmefs identify -o json failed"
ref=$(nvme id-ctrl "$dev" -o json) || fail "nvme id-ctrl failed"
diff -u <(jq -S 'del(.cntlid)' <<<"$ref") <(jq -S 'del(.cntlid)' <<<"$ours") ||
	fail "Identify Controller JSON differs (- nvme id-ctrl, + nvmefs identify)"
[[ $(jq -r .mn <<<"$ours") == nvmefs-testbed* ]] || fail "model is not the testbed's: $(jq .mn <<<"$ours")"
diff -u <(nvme id-ctrl "$dev" | grep -v '^cntlid') <(ident | grep -v '^cntlid') ||
	fail "Identify Controller text differs (- nvme id-ctrl, + nvmefs identify)"

for nsid in $(seq 1 "$NVMEFS_TEST_NAMESPACES"); do
	log "Identify Namespace $nsid"
	nsdev=$(kernel_connect_ns "$nqn" "$nsid")
	ours=$(ident --nsid "$nsid" -o json) || fail "nvmefs identify --nsid $nsid -o json failed"
	ref=$(nvme id-ns "$nsdev" -o json) || fail "nvme id-ns $nsdev failed"
	diff -u <(jq -S . <<<"$ref") <(jq -S 'del(.["ns-descs"])' <<<"$ours") ||
		fail "Identify Namespace $nsid JSON differs (- nvme id-ns, + nvmefs identify)"
	ref=$(nvme ns-descs "$nsdev" -o json) || fail "nvme ns-descs $nsdev failed"
	diff -u <(jq -S '.["ns-descs"]' <<<"$ref") <(jq -S '.["ns-descs"]' <<<"$ours") ||
		fail "namespace $nsid descriptors differ (- nvme ns-descs, + nvmefs identify)"
	size=$(jq '.nsze * pow(2; .lbafs[.flbas % 16].ds)' <<<"$ours")
	[[ $size == "$NVMEFS_TEST_NS_SIZE" ]] || fail "namespace $nsid: nsze x LBA size = $size, the testbed made $NVMEFS_TEST_NS_SIZE"
	diff -u <(nvme id-ns "$nsdev") <(ident --nsid "$nsid" | sed '/^NVME Namespace Identification Descriptors/,$d') ||
		fail "Identify Namespace $nsid text differs (- nvme id-ns, + nvmefs identify)"
done
check_run_transport
echo "PASS ($trtype): identify agrees with nvme id-ctrl, id-ns and ns-descs for $NVMEFS_TEST_NAMESPACES namespaces"
