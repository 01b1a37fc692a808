#!/usr/bin/env bash
# testbed: --ns-size 96M
# Per-I/O remote keys against the kernel target: with --rkey-per-io=on every transfer goes through a
# memory window bound for it alone and invalidated by nvmet's Send with Invalidate; perf --verify
# (4 KiB and 128 KiB, reads and writes mixed, caller-registered buffers) and fio verify through a
# mount with rkey_per_io=on find no mismatch and no error. The default (auto) picks per-I/O keys on
# soft-RoCE, 'off' keeps standing keys and works too, and a bad value is refused in one line.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap nvmefs_cleanup EXIT
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-rkey
cd /tmp

# perf_verify NAME OPTIONS...: a verified random mix; its -v line says which keys were used.
perf_verify() {
	local name=$1 out
	shift
	out=$("$NVMEFS" perf -v -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
		--rw=randrw --time=2 --verify "$@" 2>&1) || fail "perf $name failed: $out"
	grep -q ' 0 errors' <<<"$out" || fail "perf $name counted errors: $out"
	grep -q 'verify: [1-9][0-9]* blocks read and checked, 0 mismatches' <<<"$out" ||
		fail "perf $name did not verify cleanly: $out"
	perf_out=$out
	log "$name: $(grep -o 'IOPS [0-9][0-9]*' <<<"$out" | head -n 1), $(grep -o 'verify: .*' <<<"$out")"
}

perf_verify on-4k --rkey-per-io=on --bs=4k --qd=32
grep -q 'remote keys per I/O' <<<"$perf_out" || fail "-v does not say per-I/O keys: $perf_out"
perf_verify on-128k --rkey-per-io=on --bs=128k --qd=8
perf_verify default-4k --bs=4k --qd=16
grep -q 'remote keys per I/O' <<<"$perf_out" ||
	fail "the default did not choose per-I/O keys on soft-RoCE, which has memory windows: $perf_out"
perf_verify off-4k --rkey-per-io=off --bs=4k --qd=16
grep -q 'remote keys standing' <<<"$perf_out" || fail "-v does not say standing keys: $perf_out"
out=$("$NVMEFS" identify -a "$NVMEFS_TEST_TRADDR" -n "$nqn" --rkey-per-io=on 2>&1) ||
	fail "identify with per-I/O keys failed: $out"
expect_failure bad-value "^nvmefs perf: --rkey-per-io 'sometimes' is not 'auto', 'on' or 'off'" 2000 -- \
	"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -n "$nqn" --rkey-per-io=sometimes

nvmefs_mount "$nqn" "$mnt" -o rkey_per_io=on
fio --name=rkey --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
	--size=64M --bssplit=4k/40:64k/30:1m/30 --verify=crc32c --verify_fatal=1 --do_verify=1 \
	--randrepeat=0 --verify_state_save=0 --output-format=json --output=/tmp/fio-rkey.json \
	2>/tmp/fio-rkey.err || fail "fio through the mount failed: $(cat /tmp/fio-rkey.err)"
jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes == 67108864 and
	.jobs[0].read.io_bytes == 67108864' /tmp/fio-rkey.json >/dev/null ||
	fail "fio did not write and verify 64 MiB cleanly: $(jq -c '.jobs[0] | {error, w: .write.io_bytes, r: .read.io_bytes}' /tmp/fio-rkey.json)"
errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests"
nvmefs_unmount "$mnt"
echo "PASS: per-I/O remote keys: perf --verify (4k, 128k), identify and fio verify through a mount, no errors; auto picks them; off works; a bad value is refused"
