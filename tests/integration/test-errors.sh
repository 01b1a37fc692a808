#!/usr/bin/env bash
# testbed: --subsystems 2 --allow-host 2=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa
# Every way of failing to reach a target is provoked for real and gives one line that says what
# failed, a non-zero exit, and an answer within a bounded time.
. "$(dirname "$0")/lib.sh"
require_nvmefs
addr=$NVMEFS_TEST_TRADDR
port=$NVMEFS_TEST_TRSVCID
to=(--timeout 2000)

expect_failure "wrong address (nothing there)" 'timed out after 2000 ms.*unreachable' 10000 -- \
	"$NVMEFS" discover -t rdma -a 198.18.0.77 -s "$port" "${to[@]}"
expect_failure "address without a route" 'resolving the address 203\.0\.113\.9:4420 failed: .*unreachable' 6000 -- \
	"$NVMEFS" discover -t rdma -a 203.0.113.9 -s "$port" "${to[@]}"
expect_failure "nothing listening on the port" 'nothing is listening at 198\.18\.0\.1:4499' 6000 -- \
	"$NVMEFS" discover -t rdma -a "$addr" -s 4499 "${to[@]}"
expect_failure "unknown subsystem NQN" "has no subsystem nqn\.2026-11\.io\.nvmefs\.testbed:missing.*nvmefs discover" 6000 -- \
	"$NVMEFS" identify -t rdma -a "$addr" -s "$port" -n nqn.2026-11.io.nvmefs.testbed:missing "${to[@]}"
expect_failure "host not allowed" "subsystem ${subnqns[1]} .* does not allow host $(cat /etc/nvme/hostnqn)" 6000 -- \
	"$NVMEFS" identify -t rdma -a "$addr" -s "$port" -n "${subnqns[1]}" "${to[@]}"
"$NVMEFS" identify -t rdma -a "$addr" -s "$port" -n "${subnqns[1]}" "${to[@]}" \
	-q nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa >/dev/null ||
	fail "the allowed host NQN given with -q was refused"

# Root may lock any amount of memory (CAP_IPC_LOCK): drop that capability to feel the limit.
expect_failure "memlock limit too low" 'RLIMIT_MEMLOCK\) is 64 KiB.*ulimit -l' 6000 -- \
	setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock bash -c \
	'ulimit -l 64 && exec "$0" "$@"' "$NVMEFS" discover -t rdma -a "$addr" -s "$port" "${to[@]}"

expect_failure "--timeout past an hour" "--timeout '4294967295' is not a number of milliseconds from 1 to 3600000" 2000 -- \
	"$NVMEFS" discover -t rdma -a "$addr" -s "$port" --timeout 4294967295
expect_failure "--io-timeout past an hour" "--io-timeout '3600001' is not a number of milliseconds from 1 to 3600000" 2000 -- \
	"$NVMEFS" perf -t rdma -a "$addr" -s "$port" -n "${subnqns[0]}" --io-timeout 3600001

# mount's numbers take the same range as options and as -o keys (one table in mount.c): both
# refuse one past each end, with a usage error, before connecting.
for spec in "-i nr_io_queues 1 64" "-Q queue_size 2 4096" "--depth depth 1 1024" \
	"--io-timeout io_timeout 1 3600000"; do
	read -r flag key min max <<<"$spec"
	for v in $((min - 1)) $((max + 1)); do
		expect_failure "mount $flag $v" "is not a number.* from $min to $max" 2000 -- \
			"$NVMEFS" mount -a "$addr" -n "${subnqns[0]}" "$flag" "$v" /tmp
		expect_failure "mount -o $key=$v" "-o $key=$v: give a number.* from $min to $max" 2000 -- \
			"$NVMEFS" mount -a "$addr" -n "${subnqns[0]}" -o "$key=$v" /tmp
	done
done

expect_failure "mount -o max_read" "max_read is set by nvmefs: give -o max_io" 2000 -- \
	"$NVMEFS" mount -a "$addr" -n "${subnqns[0]}" -o max_read=65536 /tmp

expect_failure "unknown transport" "transport 'tcp'.*rdma" 2000 -- \
	"$NVMEFS" discover -t tcp -a "$addr"

# Last: it takes the target's RDMA device away.
rdma link delete rxe0 || fail "cannot remove the rxe0 link"
expect_failure "no RDMA device" 'no RDMA device.*rdma_rxe' 6000 -- \
	"$NVMEFS" discover -t rdma -a "$addr" -s "$port" "${to[@]}"
echo "PASS: every connection failure is reported in one line, in bounded time"
