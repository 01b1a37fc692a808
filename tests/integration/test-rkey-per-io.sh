#!/usr/bin/env bash
# testbed: --ns-size 96M
# Per-I/O remote keys against the kernel target: with --rkey-per-io=on every transfer goes through a
# memory window bound for it alone and invalidated by nvmet's Send with Invalidate; perf --verify
# (4 KiB and 128 KiB, reads and writes mixed, caller-registered buffers) and fio verify through a
# mount with rkey_per_io=on find no mismatch and no error. The default (auto) picks per-I/O keys on
# soft-RoCE, 'off' keeps standing keys and works too, and a bad value is refused in one line.
# The library's own counts (perf -v's 'remote keys' line, the mount's stats remote_keys) show the
# keys really bound and invalidated: with per-I/O keys, every key bound was invalidated (nothing is
# in flight when they are read: perf reads them after its last I/O, the mount once fio is done and
# nothing else keyed runs), by the target (nvmet honours the SGL's invalidate flag), and at least
# one key per I/O that travels by RDMA (every read, every write above the in-capsule size); with
# standing keys none.
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
	perf_ios=$(sed -n 's/.* \([0-9][0-9]*\) I\/Os, [0-9]* errors$/\1/p' <<<"$out")
	[[ $perf_ios ]] || fail "perf $name: no I/O count in: $out"
	keys_line=$(grep -o 'remote keys: .*' <<<"$out") || fail "perf $name: -v has no remote keys line: $out"
	read -r keys_mode keys_bound keys_target keys_local < <(sed -n \
		's/^remote keys: \(per I\/O\|standing\), \([0-9]*\) bound, \([0-9]*\) invalidated by the target, \([0-9]*\) by us$/\1 \2 \3 \4/p' \
		<<<"$keys_line" | sed 's/^per I\/O/per-io/') || true
	[[ $keys_local ]] || fail "perf $name: the remote keys line is not as expected: $keys_line"
	log "$name: $(grep -o 'IOPS [0-9][0-9]*' <<<"$out" | head -n 1), $perf_ios I/Os, $(grep -o 'verify: .*' <<<"$out"); $keys_line"
}

# keys_per_io NAME BOUND TARGET LOCAL MIN: per-I/O keys, at least MIN bound, each invalidated, by the
# target at least once.
keys_per_io() {
	local name=$1 bound=$2 target=$3 local_inv=$4 min=$5
	((bound > 0 && target > 0)) ||
		fail "$name: no key bound or none invalidated by the target: $bound bound, $target by the target"
	((target + local_inv == bound)) ||
		fail "$name: $bound keys bound but $target invalidated by the target and $local_inv by us, with nothing in flight"
	((bound >= min)) || fail "$name: $bound keys bound for at least $min I/Os that travel by RDMA"
}

# keys_standing NAME BOUND TARGET LOCAL: standing keys, none bound or invalidated.
keys_standing() {
	((${2} == 0 && ${3} == 0 && ${4} == 0)) ||
		fail "$1: standing keys, yet $2 bound, $3 invalidated by the target, $4 by us"
}

# 4 KiB writes ride in the capsule: the keys are the reads', half the mix (a third, for luck).
perf_verify on-4k --rkey-per-io=on --bs=4k --qd=32
grep -q 'remote keys per I/O' <<<"$perf_out" || fail "-v does not say per-I/O keys: $perf_out"
[[ $keys_mode == per-io ]] || fail "on-4k: the report says $keys_mode keys: $keys_line"
keys_per_io on-4k "$keys_bound" "$keys_target" "$keys_local" $((perf_ios / 3))
perf_verify on-128k --rkey-per-io=on --bs=128k --qd=8
keys_per_io on-128k "$keys_bound" "$keys_target" "$keys_local" "$perf_ios"
perf_verify default-4k --bs=4k --qd=16
grep -q 'remote keys per I/O' <<<"$perf_out" ||
	fail "the default did not choose per-I/O keys on soft-RoCE, which has memory windows: $perf_out"
keys_per_io default-4k "$keys_bound" "$keys_target" "$keys_local" $((perf_ios / 3))
perf_verify off-4k --rkey-per-io=off --bs=4k --qd=16
grep -q 'remote keys standing' <<<"$perf_out" || fail "-v does not say standing keys: $perf_out"
[[ $keys_mode == standing ]] || fail "off-4k: the report says $keys_mode keys: $keys_line"
keys_standing off-4k "$keys_bound" "$keys_target" "$keys_local"
perf_verify off-128k --rkey-per-io=off --bs=128k --qd=8
keys_standing off-128k "$keys_bound" "$keys_target" "$keys_local"
out=$("$NVMEFS" identify -a "$NVMEFS_TEST_TRADDR" -n "$nqn" --rkey-per-io=on 2>&1) ||
	fail "identify with per-I/O keys failed: $out"
expect_failure bad-value "^nvmefs perf: --rkey-per-io 'sometimes' is not 'auto', 'on' or 'off'" 2000 -- \
	"$NVMEFS" perf -a "$NVMEFS_TEST_TRADDR" -n "$nqn" --rkey-per-io=sometimes

# mount_keys MODE: the mount's key counts and reads (per_io bound target local_inv reads).
mount_keys() {
	read -r per_io bound target local_inv reads < <(nvmefs_stats "$mnt" \
		'[.remote_keys.per_io, .remote_keys.bound, .remote_keys.invalidated_by_target,
		  .remote_keys.invalidated_locally, .total.reads] | @tsv') || true
	[[ $reads ]] || fail "the mount's stats have no remote_keys: $(cat "$mnt/stats")"
	log "mount, rkey_per_io=$1: $reads reads; remote keys: per_io $per_io, $bound bound, $target invalidated by the target, $local_inv by us"
}

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
# Every read travels by RDMA: at least one key each.
mount_keys on
[[ $per_io == true ]] || fail "the mount's stats say per_io $per_io with rkey_per_io=on"
keys_per_io mount-on "$bound" "$target" "$local_inv" "$reads"
nvmefs_unmount "$mnt"

nvmefs_mount "$nqn" "$mnt" -o rkey_per_io=off
dd if=/dev/urandom of=/tmp/rkey-off.in bs=128k count=8 status=none
dd if=/tmp/rkey-off.in of="$mnt/n1" bs=128k oflag=direct status=none || fail "writing through the mount with rkey_per_io=off failed"
cmp <(dd if="$mnt/n1" bs=128k count=8 iflag=direct status=none) /tmp/rkey-off.in ||
	fail "reading back through the mount with rkey_per_io=off differs"
mount_keys off
[[ $per_io == false ]] || fail "the mount's stats say per_io $per_io with rkey_per_io=off"
((reads > 0)) || fail "the mount with rkey_per_io=off counted no reads"
keys_standing mount-off "$bound" "$target" "$local_inv"
nvmefs_unmount "$mnt"
echo "PASS: per-I/O remote keys: perf --verify (4k, 128k), identify and fio verify through a mount, no errors, every key bound invalidated by the target and at least one per RDMA transfer; auto picks them; off works and binds none; a bad value is refused"
