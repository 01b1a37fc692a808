#!/usr/bin/env bash
# testbed: --ns-size 96M
# fio writes 16 MiB (64 MiB in make check-long) at random through a mounted namespace file (libaio,
# O_DIRECT, 16 in flight) and verifies every block it wrote (crc32c): with 4 KiB blocks, with 128 KiB blocks, and with sizes
# mixed at random from 512 bytes to 1 MiB at 512-byte offsets. Not one verify error, not one
# failed I/O in the mount's stats, and fio read back all it wrote.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap nvmefs_cleanup EXIT
mnt=/tmp/nvmefs-fio
# fio writes state files in the working directory, the shared source tree: work in /tmp.
cd /tmp
nvmefs_mount "${subnqns[0]}" "$mnt"
((NVMEFS_TEST_NS_SIZE >= 96 << 20)) || fail "the namespace has $NVMEFS_TEST_NS_SIZE bytes, this test needs 96 MiB"

mib=$(scaled 16 64)
# fio_verify NAME FIO_OPTIONS...: a random-write-then-verify job of $mib MiB on $mnt/n1.
fio_verify() {
	local name=$1 rc=0 start
	shift
	start=$(now_ms)
	fio --name="$name" --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=16 \
		--rw=randwrite --size=${mib}M --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--randrepeat=0 --verify_state_save=0 --output-format=json --output="/tmp/fio-$name.json" "$@" \
		2>"/tmp/fio-$name.err" || rc=$?
	((rc == 0)) || fail "fio $name exited $rc: $(cat "/tmp/fio-$name.err") $(jq -c '.jobs[0] | {error, verify_errors: .["verify_errors"]}' "/tmp/fio-$name.json" 2>/dev/null || tail -c 2000 "/tmp/fio-$name.json")"
	jq -e '.jobs[0].error == 0' "/tmp/fio-$name.json" >/dev/null ||
		fail "fio $name reports error $(jq '.jobs[0].error' "/tmp/fio-$name.json")"
	# Verification reads back everything written: as much read as written.
	jq -e --argjson n $((mib << 20)) '.jobs[0].write.io_bytes == $n and .jobs[0].read.io_bytes == $n' \
		"/tmp/fio-$name.json" >/dev/null ||
		fail "fio $name wrote $(jq '.jobs[0].write.io_bytes' "/tmp/fio-$name.json") and verified $(jq '.jobs[0].read.io_bytes' "/tmp/fio-$name.json") bytes, not $mib MiB each"
	log "$name: $mib MiB written and verified in $(($(now_ms) - start)) ms ($(jq -r '.jobs[0].write.iops | floor' "/tmp/fio-$name.json") write IOPS, $(jq -r '.jobs[0].read.iops | floor' "/tmp/fio-$name.json") read IOPS)"
}

fio_verify bs4k --bs=4k
fio_verify bs128k --bs=128k
# Sizes from 512 bytes to 1 MiB, many of them not multiples of 4 KiB, at any 512-byte offset.
fio_verify bsmix --bssplit=512/20:1536/15:3584/15:4k/10:7680/10:64k/10:256k/10:1m/10 --blockalign=512

errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests: $(cat "$mnt/stats")"
written=$(nvmefs_stats "$mnt" .total.write_bytes)
((written >= 3 * (mib << 20))) || fail "the mount's stats count $written bytes written, fio wrote $((3 * mib)) MiB through it"
nvmefs_unmount "$mnt"
check_run_transport
echo "PASS: fio randwrite+crc32c verify of $mib MiB through the mounted file, bs 4k, 128k and a 512-1M mix: no errors"
