#!/usr/bin/env bash
# testbed: --ns-size 32M
# The fio engine (fio-nvmefs.so, issue #37 item 2) runs fio's jobs straight on libnvmefs over the
# run's transport only: random 4 KiB writes at depth 32 (a job process, sleeping on completions)
# and sizes mixed from 4 KiB to 512 KiB at depth 1 (two job threads, polling), each verified by
# fio (crc32c, fatal) with not one error. The kernel initiator then verifies what the engine wrote
# at depth 1 (fio --verify_only on its block device), and the engine what the kernel wrote at
# depth 32. Jobs with no
# traddr, an unknown NQN, a port nothing listens on, an unknown transport, a missing namespace or
# a block size the namespace cannot take fail with one line of the engine's saying so. A job file
# sent by fio --client to fio --server (loopback) runs through the engine too, verified.
. "$(dirname "$0")/lib.sh"
engine=$NVMEFS_BUILDDIR/src/fio/.libs/fio-nvmefs.so
[[ -f $engine ]] || fail "$engine is not built: configure with --with-fio=DIR (contrib/fetch-fio-source DIR) and run make"
nqn=${subnqns[0]}
# fio writes state files in the working directory, the shared source tree: work in /tmp.
cd /tmp
trap 'kernel_disconnect_all; rm -f /tmp/fe-*' EXIT
target=(--ioengine="external:$engine" --transport="$trtype" --traddr="$NVMEFS_TEST_TRADDR"
	--trsvcid="$NVMEFS_TEST_TRSVCID" --nqn="$nqn" --nsid=1)
# The verifying jobs; fio's default randrepeat=1 makes a job's offsets, sizes and data the same in
# every run, so that --verify_only finds what another run of the same job wrote.
qd32=(--name=qd32 --rw=randwrite --bs=4k --iodepth=32 --size=2M --offset=0)
mixed=(--name=mixed --rw=randwrite --bssplit=4k/40:16k/20:64k/20:512k/20 --iodepth=1 --size=2M
	--offset=2M --numjobs=2 --offset_increment=2M --thread)
kernel_wrote=(--name=kwrite --rw=randwrite --bssplit=4k/50:128k/50 --iodepth=32 --size=2M
	--offset=6M)

# fio_job WHAT READ_MIB WRITE_MIB FIO_OPTIONS...: the job runs without error, its jobs together
# reading and writing the MiB given (verify's reads count as reads; WRITE_MIB -: not counted, as
# --verify_only counts the writes it does not do).
fio_job() {
	local what=$1 rmib=$2 wmib=$3 rc=0 start
	shift 3
	start=$(now_ms)
	fio "$@" --verify=crc32c --verify_fatal=1 --verify_state_save=0 --output-format=json \
		--output=/tmp/fe-job.out 2>/tmp/fe-job.err || rc=$?
	# fio writes its own and the engine's messages into --output too, before the JSON.
	sed -n '/^{/,$p' /tmp/fe-job.out >/tmp/fe-job.json
	((rc == 0)) || fail "fio $what exited $rc: $(cat /tmp/fe-job.err; sed '/^{/,$d' /tmp/fe-job.out) $(jq -c '[.jobs[] | {error, verify_errors}]' /tmp/fe-job.json 2>/dev/null)"
	jq -e --argjson r $((rmib << 20)) --argjson w "${wmib/#-/null}" 'all(.jobs[]; .error == 0) and
		([.jobs[].read.io_bytes] | add) == $r and
		($w == null or ([.jobs[].write.io_bytes] | add) == $w * 1048576)' \
		/tmp/fe-job.json >/dev/null ||
		fail "fio $what: not $rmib MiB read and $wmib MiB written without error: $(sed '/^{/,$d' /tmp/fe-job.out) $(jq -c '[.jobs[] | {error, r: .read.io_bytes, w: .write.io_bytes}]' /tmp/fe-job.json)"
	log "$what: $rmib MiB read, $wmib MiB written in $(($(now_ms) - start)) ms, $(jq -r '[.jobs[] | "\(.job_runtime) ms running, \(.read.iops | floor)+\(.write.iops | floor) IOPS, \((.read.clat_ns.mean + .write.clat_ns.mean) / 2000 | floor) us mean"] | join("; ")' /tmp/fe-job.json)"
}

fio_job "qd32 through the engine" 2 2 "${qd32[@]}" "${target[@]}" --filename=ns1 --completions=event
fio_job "mixed qd1 through the engine" 4 4 "${mixed[@]}" "${target[@]}" --filename=ns1 --completions=poll

# fio's own way across machines: a job file sent by `fio --client` to `fio --server`, which loads
# the engine and runs the job (here both in the guest, over loopback).
cat >/tmp/fe-remote.fio <<JOB
[remote]
ioengine=external:$engine
transport=$trtype
traddr=$NVMEFS_TEST_TRADDR
trsvcid=$NVMEFS_TEST_TRSVCID
nqn=$nqn
nsid=1
filename=ns1
rw=randwrite
bs=4k
iodepth=8
size=2M
offset=8M
verify=crc32c
verify_fatal=1
verify_state_save=0
JOB
trap 'kill "$(cat /tmp/fe-server.pid 2>/dev/null)" 2>/dev/null; kernel_disconnect_all; rm -f /tmp/fe-*' EXIT
fio --server=ip:127.0.0.1,8765 --daemonize=/tmp/fe-server.pid >/dev/null 2>&1 ||
	fail "fio --server did not start"
wait_until 10000 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8765' 2>/dev/null ||
	fail "fio --server does not listen on 127.0.0.1:8765 after 10 s"
start=$(now_ms)
fio --client=ip:127.0.0.1,8765 --output-format=json --output=/tmp/fe-remote.out /tmp/fe-remote.fio \
	2>/tmp/fe-remote.err || fail "fio --client exited $?: $(cat /tmp/fe-remote.err /tmp/fe-remote.out)"
sed -n '/^{/,$p' /tmp/fe-remote.out >/tmp/fe-remote.json
jq -e '[.client_stats[] | select(.jobname == "remote")] as $j | ($j | length) == 1 and
	$j[0].error == 0 and $j[0].read.io_bytes == 2097152 and $j[0].write.io_bytes == 2097152' \
	/tmp/fe-remote.json >/dev/null ||
	fail "fio --client through fio --server: not 2 MiB written and verified without error: $(cat /tmp/fe-remote.out)"
log "fio --client through fio --server: 2 MiB written and verified in $(($(now_ms) - start)) ms"
# Before the kernel initiator connects, so that only the engine's traffic counts.
check_run_transport

dev=$(kernel_connect "$nqn")
kernel=(--ioengine=libaio --direct=1 --filename="$dev")
fio_job "the engine's mixed qd1 verified by the kernel" 4 - "${mixed[@]}" "${kernel[@]}" --verify_only
fio_job "qd32 written by the kernel" 2 2 "${kernel_wrote[@]}" "${kernel[@]}"
fio_job "the kernel's writes verified by the engine" 2 - "${kernel_wrote[@]}" "${target[@]}" \
	--filename=ns1 --verify_only

# bad_job WHAT PATTERN FIO_OPTIONS...: starts a job that must fail with one line of the engine's
# matching PATTERN; bad_jobs_check checks them all. They run at once: most of their time is fio's
# start and connecting.
bad=() bad_pids=()
bad_job() {
	local n=${#bad[@]}
	bad+=("$1" "$2")
	shift 2
	fio --name=bad --filename=ns1 --rw=read --size=1M "$@" >"/tmp/fe-bad$n.out" 2>&1 &
	bad_pids[n]=$!
}
bad_jobs_check() {
	local n out
	for ((n = 0; n < ${#bad[@]}; n += 2)); do
		out=/tmp/fe-bad$n.out
		! wait "${bad_pids[n]}" || fail "fio ran a job with ${bad[n]}: $(cat "$out")"
		[[ $(grep -c '^nvmefs:' "$out") == 1 ]] && grep -q "^nvmefs: job bad: ${bad[n + 1]}" "$out" ||
			fail "fio with ${bad[n]} did not say so in one line of the engine's matching '${bad[n + 1]}': $(cat "$out")"
		log "${bad[n]}: $(grep '^nvmefs:' "$out")"
	done
}
bad_job "no traddr" "traddr=, nqn= and nsid= are required" --ioengine="external:$engine" --nqn="$nqn" --nsid=1
bad_job "an unknown NQN" "connecting to $NVMEFS_TEST_TRADDR: .* has no subsystem" "${target[@]}" --nqn=nqn.2014-08.org.example:none
bad_job "a port nothing listens on" "connecting to $NVMEFS_TEST_TRADDR: " "${target[@]}" --trsvcid=4999
bad_job "transport fc" "connecting to $NVMEFS_TEST_TRADDR: transport 'fc' is not supported" "${target[@]}" --transport=fc
bad_job "namespace 9" "namespace 9 is not active" "${target[@]}" --nsid=9
bad_job "bs=1000" "read sizes 1000 to 1000 .*not whole" "${target[@]}" --bs=1000
bad_jobs_check
echo "PASS: fio verify through the engine at depth 32 (event) and 1 (poll, 2 threads, mixed sizes), over $trtype only; the kernel initiator verifies what the engine wrote and the engine what the kernel wrote; a job from fio --client run by fio --server; bad jobs told in one line"
