#!/usr/bin/env bash
# testbed: --subsystems 2 --allow-host 2=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa
# Every way of failing to reach a target is provoked for real and gives one line that says what
# failed, the exit status the command's man page gives (1 failure, 2 wrong usage), and an answer
# within a bounded time.
. "$(dirname "$0")/lib.sh"
require_nvmefs
addr=$NVMEFS_TEST_TRADDR
port=$NVMEFS_TEST_TRSVCID
to=(--timeout 2000)

expect_failure "wrong address (nothing there)" 'timed out after 2000 ms.*unreachable' 10000 1 -- \
	"$NVMEFS" discover -t rdma -a 198.18.0.77 -s "$port" "${to[@]}"
expect_failure "address without a route" 'resolving the address 203\.0\.113\.9:4420 failed: .*unreachable' 6000 1 -- \
	"$NVMEFS" discover -t rdma -a 203.0.113.9 -s "$port" "${to[@]}"
expect_failure "nothing listening on the port" 'nothing is listening at 198\.18\.0\.1:4499' 6000 1 -- \
	"$NVMEFS" discover -t rdma -a "$addr" -s 4499 "${to[@]}"
expect_failure "unknown subsystem NQN" "has no subsystem nqn\.2026-11\.io\.nvmefs\.testbed:missing.*nvmefs discover" 6000 1 -- \
	"$NVMEFS" identify -t rdma -a "$addr" -s "$port" -n nqn.2026-11.io.nvmefs.testbed:missing "${to[@]}"
expect_failure "host not allowed" "subsystem ${subnqns[1]} .* does not allow host $(cat /etc/nvme/hostnqn)" 6000 1 -- \
	"$NVMEFS" identify -t rdma -a "$addr" -s "$port" -n "${subnqns[1]}" "${to[@]}"
"$NVMEFS" identify -t rdma -a "$addr" -s "$port" -n "${subnqns[1]}" "${to[@]}" \
	-q nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa >/dev/null ||
	fail "the allowed host NQN given with -q was refused"

# Root may lock any amount of memory (CAP_IPC_LOCK): drop that capability to feel the limit.
expect_failure "memlock limit too low" 'RLIMIT_MEMLOCK\) is 64 KiB.*ulimit -l' 6000 1 -- \
	setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock bash -c \
	'ulimit -l 64 && exec "$0" "$@"' "$NVMEFS" discover -t rdma -a "$addr" -s "$port" "${to[@]}"

expect_failure "--timeout past an hour" "--timeout '4294967295' is not a number of milliseconds from 1 to 3600000" 2000 2 -- \
	"$NVMEFS" discover -t rdma -a "$addr" -s "$port" --timeout 4294967295
expect_failure "--io-timeout past an hour" "--io-timeout '3600001' is not a number of milliseconds from 1 to 3600000" 2000 2 -- \
	"$NVMEFS" perf -t rdma -a "$addr" -s "$port" -n "${subnqns[0]}" --io-timeout 3600001

# mount's numbers take the same range as options and as -o keys (one table in mount.c): both
# refuse one past each end, with a usage error, before connecting.
for spec in "-i nr_io_queues 1 64" "-Q queue_size 2 4096" "--depth depth 1 1024" \
	"--io-timeout io_timeout 1 3600000"; do
	read -r flag key min max <<<"$spec"
	for v in $((min - 1)) $((max + 1)); do
		expect_failure "mount $flag $v" "is not a number.* from $min to $max" 2000 2 -- \
			"$NVMEFS" mount -a "$addr" -n "${subnqns[0]}" "$flag" "$v" /tmp
		expect_failure "mount -o $key=$v" "-o $key=$v: give a number.* from $min to $max" 2000 2 -- \
			"$NVMEFS" mount -a "$addr" -n "${subnqns[0]}" -o "$key=$v" /tmp
	done
done

expect_failure "mount -o max_read" "max_read is set by nvmefs: give -o max_io" 2000 2 -- \
	"$NVMEFS" mount -a "$addr" -n "${subnqns[0]}" -o max_read=65536 /tmp

expect_failure "unknown transport" "transport 'fc' is not supported.*'rdma', 'tcp'" 2000 2 -- \
	"$NVMEFS" discover -t fc -a "$addr"

# Each command into each failure its man page's EXIT STATUS names (what needs no rare fault), and
# nvmefs(1)'s usage errors before any command. A usage error is bounded loosely: starting the
# program takes the emulated guest up to 2 s when other guests share the host.
usage_ms=5000
listening=(-t rdma -a "$addr" -s 4499 "${to[@]}")
denied=(-a "$addr" -s "$port" -n "${subnqns[1]}" "${to[@]}")
good=(-a "$addr" -s "$port" -n "${subnqns[0]}" "${to[@]}")
# to_full COMMAND...: COMMAND with its standard output on /dev/full (ENOSPC on the flush), and only
# the last line of its standard error (perf's progress lines come before).
to_full() {
	local rc=0
	"$@" >/dev/full 2>/tmp/to_full.err || rc=$?
	tail -n 1 /tmp/to_full.err >&2
	return "$rc"
}
expect_failure "no command" "a command is missing" "$usage_ms" 2 -- "$NVMEFS"
expect_failure "unknown command" "unknown command 'frobnicate'" "$usage_ms" 2 -- "$NVMEFS" frobnicate
expect_failure "option before the command" "unknown option '--frob'" "$usage_ms" 2 -- "$NVMEFS" --frob
expect_failure "help of two commands" "at most one command" "$usage_ms" 2 -- "$NVMEFS" help perf mount
for c in discover identify perf mount; do
	dir=()
	[[ $c != mount ]] || dir=(/tmp)
	expect_failure "$c: unknown option" "unknown option '--frob'" "$usage_ms" 2 -- "$NVMEFS" "$c" --frob
	# discover with no -a reads discovery.conf, as 'nvme discover' does: the guest sees the
	# host's /etc/nvme, so the test names a file that is not there.
	expect_failure "$c: no -a" "address is missing" "$usage_ms" 2 -- \
		env NVMEFS_DISCOVERY_CONF=/nonexistent/discovery.conf "$NVMEFS" "$c" "${dir[@]}"
	[[ $c == discover ]] ||
		expect_failure "$c: no -n" "subsystem NQN is missing" "$usage_ms" 2 -- "$NVMEFS" "$c" -a "$addr" "${dir[@]}"
done
expect_failure "discover: malformed --referral-depth" "--referral-depth 'x'" "$usage_ms" 2 -- \
	"$NVMEFS" discover -a "$addr" --referral-depth x
expect_failure "identify --nsid 0" "--nsid '0' is not a namespace ID" "$usage_ms" 2 -- \
	"$NVMEFS" identify "${good[@]}" --nsid 0
expect_failure "perf --iodepth not below -Q" "--iodepth" "$usage_ms" 2 -- "$NVMEFS" perf "${good[@]}" --qd 8 -Q 8
expect_failure "perf --offset not a multiple of the block size" "must be multiples of the namespace's 512-byte blocks" \
	6000 2 -- "$NVMEFS" perf "${good[@]}" --offset 100 --time 1
expect_failure "perf region past the end" "goes past the end of namespace 1" 6000 2 -- \
	"$NVMEFS" perf "${good[@]}" --offset "$NVMEFS_TEST_NS_SIZE" --time 1
expect_failure "perf region smaller than one --bs per thread" "smaller than one --bs per thread" 6000 2 -- \
	"$NVMEFS" perf "${good[@]}" --size 4k --threads 2 --cpus none --time 1
expect_failure "mount without a mount point" "mount point is missing" "$usage_ms" 2 -- \
	"$NVMEFS" mount "${good[@]}"

expect_failure "discover -p: nothing listening" 'nothing is listening at .*:4499' 6000 1 -- \
	"$NVMEFS" discover -p "${listening[@]}"
for c in identify perf; do
	expect_failure "$c: nothing listening" 'nothing is listening at .*:4499' 6000 1 -- \
		"$NVMEFS" "$c" -n "${subnqns[0]}" "${listening[@]}"
	expect_failure "$c: host not allowed" "does not allow host $(cat /etc/nvme/hostnqn)" 6000 1 -- \
		"$NVMEFS" "$c" "${denied[@]}"
done
# nvmet identifies a namespace it does not have as all zeros (not active), as the spec has it.
expect_failure "identify: no namespace 99" \
	"namespace 99 is not active on ${subnqns[0]}: list the active namespaces with 'nvmefs identify --list-ns'" \
	6000 1 -- "$NVMEFS" identify "${good[@]}" --nsid 99
expect_failure "perf: no namespace 99" "namespace 99 is not active on ${subnqns[0]}: see 'nvmefs identify'" 6000 1 -- \
	"$NVMEFS" perf "${good[@]}" --nsid 99 --time 1
expect_failure "mount: host not allowed" "does not allow host $(cat /etc/nvme/hostnqn)" 10000 1 -- \
	"$NVMEFS" mount "${denied[@]}" /tmp
expect_failure "mount: nothing listening" 'nothing is listening at .*:4499' 10000 1 -- \
	"$NVMEFS" mount -n "${subnqns[0]}" "${listening[@]}" /tmp
expect_failure "mount: no mount point" "/tmp/no-such-dir: No such file or directory" "$usage_ms" 1 -- \
	"$NVMEFS" mount "${good[@]}" /tmp/no-such-dir
expect_failure "discover: output not written" "writing the output failed: No space left" 6000 1 -- \
	to_full "$NVMEFS" discover -a "$addr" -s "$port" "${to[@]}"
expect_failure "identify: output not written" "writing the output failed: No space left" 6000 1 -- \
	to_full "$NVMEFS" identify "${good[@]}"
expect_failure "perf: output not written" "writing the output failed: No space left" 10000 1 -- \
	to_full "$NVMEFS" perf "${good[@]}" --time 1 -o json

# Last: it takes the target's RDMA device away.
testbed_retire
rdma link delete rxe0 || fail "cannot remove the rxe0 link"
expect_failure "no RDMA device" 'no RDMA device.*rdma_rxe' 6000 1 -- \
	"$NVMEFS" discover -t rdma -a "$addr" -s "$port" "${to[@]}"
echo "PASS: every connection failure is reported in one line, in bounded time"
