#!/usr/bin/env bash
# testbed: --ns-size 64M
# FUSE over io_uring at depth: 4k random reads 32 in flight through a mount that takes the ring
# (make check runs it as a .ring test, NVMEFS_TEST_RING=1), with the daemon's system calls counted
# (strace -c). The replies of a worker's pass go to the kernel in one io_uring_enter, so there are
# at most half as many io_uring_enter calls as reads (one a reply before: as many as reads).
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap nvmefs_cleanup EXIT
[[ ${NVMEFS_TEST_RING:-} == 1 ]] || skip "counts FUSE over io_uring's commits: run as a .ring test (NVMEFS_TEST_RING=1)"
command -v strace >/dev/null || fail "strace is missing: the testbed's 'prepare' installs it"
mnt=/tmp/nvmefs-ring-batch
cd /tmp
nvmefs_mount "${subnqns[0]}" "$mnt"
pid=$(nvmefs_pid "$mnt")
reads=4096
strace -f -c -e trace=io_uring_enter -o /tmp/ring-batch.strace -p "$pid" 2>/tmp/ring-batch.err &
tracer=$!
# strace says when it has attached to the daemon's threads.
for _ in $(seq 100); do grep -q "attached" /tmp/ring-batch.err && break; sleep 0.1; done
fio --name=qd32 --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=32 --rw=randread \
	--bs=4k --size=16M --number_ios=$reads --norandommap --randrepeat=0 --output-format=json \
	--output=/tmp/ring-batch.json 2>/tmp/ring-batch.fio.err ||
	fail "fio exited $?: $(cat /tmp/ring-batch.fio.err)"
kill -INT "$tracer"
wait "$tracer" || true
done_reads=$(jq '.jobs[0].read.total_ios' /tmp/ring-batch.json)
((done_reads >= reads)) || fail "fio read $done_reads blocks, not $reads"
enters=$(awk '$NF == "io_uring_enter" { print $4 }' /tmp/ring-batch.strace)
[[ $enters =~ ^[0-9]+$ ]] || fail "strace counted no io_uring_enter of the daemon: $(cat /tmp/ring-batch.strace /tmp/ring-batch.err)"
log "$done_reads reads at QD32 over FUSE over io_uring: the daemon made $enters io_uring_enter calls"
((enters * 2 <= done_reads)) ||
	fail "$enters io_uring_enter calls for $done_reads reads at QD32: more than one for two replies, so the worker does not send a pass's commits together"
nvmefs_unmount "$mnt"
