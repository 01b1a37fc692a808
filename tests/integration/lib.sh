# Helpers for tests/integration/test-*.sh, sourced inside the testbed VM.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
log() { echo "# $*"; }

[[ ${NVMEFS_TESTBED:-} == 1 ]] || skip "this test runs inside contrib/nvmefs-testbed (make check does that)"

# Every subsystem NQN the testbed configured, as an array.
read -r -a subnqns <<<"$NVMEFS_TEST_SUBNQNS"

# Connects the kernel initiator to SUBNQN and prints the block device of namespace NSID (default 1).
kernel_connect() {
	local nqn=$1 nsid=${2:-1} sys i
	nvme connect -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" >/dev/null ||
		fail "kernel initiator: nvme connect to $nqn failed"
	# The namespace's block device appears asynchronously after connect returns.
	for ((i = 0; i < 100; i++)); do
		for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
			[[ -e $sys/subsysnqn && $(<"$sys/subsysnqn") == "$nqn" ]] || continue
			local dev
			for dev in "$sys"/nvme*n*; do
				[[ -e $dev/nsid && $(<"$dev/nsid") == "$nsid" && -b /dev/${dev##*/} ]] || continue
				echo "/dev/${dev##*/}"
				return 0
			done
		done
		sleep 0.1
	done
	fail "kernel initiator: no block device for namespace $nsid of $nqn after connect"
}

# The block device of namespace NSID of an already connected SUBNQN.
kernel_connect_ns() {
	local nqn=$1 nsid=$2 sys dev
	for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
		[[ -e $sys/subsysnqn && $(<"$sys/subsysnqn") == "$nqn" ]] || continue
		for dev in "$sys"/nvme*n*; do
			[[ -e $dev/nsid && $(<"$dev/nsid") == "$nsid" ]] && { echo "/dev/${dev##*/}"; return 0; }
		done
	done
	fail "kernel initiator: $nqn has no namespace $nsid"
}

kernel_disconnect() {
	nvme disconnect -n "$1" >/dev/null || fail "kernel initiator: nvme disconnect from $1 failed"
}

kernel_disconnect_all() { nvme disconnect-all >/dev/null 2>&1 || true; }

# The nvmefs command of the build tree under test.
NVMEFS=${top_builddir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/src/cli/nvmefs
require_nvmefs() { [[ -x $NVMEFS ]] || fail "$NVMEFS is not built: run make first"; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_progress PID ERRFILE SEC: waits until the nvmefs perf running as PID, its standard error
# going to ERRFILE, has printed its progress line for second SEC; fails if it has not within 30 s
# or exits first.
wait_progress() {
	local pid=$1 err=$2 sec=$3 t
	for ((t = 0; t < 300; t++)); do
		grep -q "^\[ *${sec}s\]" "$err" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "perf printed no progress line for second $sec: $(cat "$err")"
}

# expect_failure NAME REGEX MAX_MS -- COMMAND...: COMMAND must fail within MAX_MS with exactly one
# line of output (the error) matching REGEX.
expect_failure() {
	local name=$1 re=$2 max_ms=$3 out rc=0 start elapsed
	shift 4
	start=$(now_ms)
	out=$("$@" 2>&1) || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc != 0)) || fail "$name: '$*' succeeded; it should have failed. Output: $out"
	[[ $(wc -l <<<"$out") == 1 ]] || fail "$name: expected one line of error, got: $out"
	[[ $out =~ $re ]] || fail "$name: the message does not match /$re/: $out"
	((elapsed <= max_ms)) || fail "$name: failing took $elapsed ms, more than $max_ms ms"
	log "$name: exit $rc after $elapsed ms: $out"
}

# The I/O helper program of the build tree (tests/integration/io-tool.c, built by make check).
IO_TOOL=${top_builddir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/io-tool
require_io_tool() {
	[[ -x $IO_TOOL ]] || fail "$IO_TOOL is not built: run 'make check' (or make tests/integration/io-tool) first"
}
# io_tool SUBNQN [OPTIONS] COMMAND ARGS...: io-tool against the testbed's target.
io_tool() {
	local nqn=$1
	shift
	"$IO_TOOL" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$@"
}

# ---------------------------------------------------------------------------------------------
# nvmefs mount (tests/integration/test-mount-*.sh)
# ---------------------------------------------------------------------------------------------

# Mount points nvmefs_mount made, for nvmefs_cleanup.
nvmefs_mounts=()

# wait_gone PID MAX_MS: waits until process PID has exited; returns 1 if it still runs after MAX_MS.
wait_gone() {
	local pid=$1 max_ms=$2 start
	start=$(now_ms)
	while kill -0 "$pid" 2>/dev/null; do
		(($(now_ms) - start < max_ms)) || return 1
		sleep 0.1
	done
}

# wait_unmounted DIR MAX_MS: waits until DIR is no longer a mount point; returns 1 if it still is.
wait_unmounted() {
	local dir=$1 max_ms=$2 start
	start=$(now_ms)
	while mountpoint -q "$dir"; do
		(($(now_ms) - start < max_ms)) || return 1
		sleep 0.1
	done
}

# nvmefs_mount SUBNQN DIR [OPTIONS...]: mounts SUBNQN of the testbed's target on DIR (created if
# missing) with nvmefs mount in daemon mode, pidfile DIR.pid; the test fails unless the command
# succeeds and DIR is then an nvmefs mount.
nvmefs_mount() {
	local nqn=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	nvmefs_mounts+=("$dir")
	# Output to a file, not a pipe: a daemon that kept the pipe open would hang $(...).
	timeout 60 "$NVMEFS" mount -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
		--pidfile "$dir.pid" "$@" "$dir" >"$dir.out" 2>&1 ||
		fail "nvmefs mount $* $dir failed (exit $?): $(cat "$dir.out")"
	[[ $(findmnt -n -o FSTYPE --mountpoint "$dir") == fuse.nvmefs ]] ||
		fail "nvmefs mount $* $dir returned 0 but $dir is not an nvmefs mount: $(findmnt "$dir" || true)"
	[[ -s $dir.pid ]] || fail "nvmefs mount returned but its pidfile $dir.pid is missing or empty"
}

# The PID in DIR.pid.
nvmefs_pid() { cat "$1.pid"; }

# nvmefs_unmount DIR: fusermount3 -u DIR; the daemon must exit within 30 s.
nvmefs_unmount() {
	local dir=$1 pid
	pid=$(nvmefs_pid "$dir") || fail "no pidfile $dir.pid for the mount on $dir"
	fusermount3 -u "$dir" || fail "fusermount3 -u $dir failed"
	wait_gone "$pid" 30000 || fail "the nvmefs daemon (PID $pid) still runs 30 s after fusermount3 -u $dir"
	[[ ! -e $dir.pid ]] || fail "the daemon exited after fusermount3 -u $dir but left its pidfile $dir.pid"
}

# For 'trap nvmefs_cleanup EXIT': takes down every mount nvmefs_mount made (lazily, so that a hung
# daemon cannot stop the test from ending), kills their daemons by PID, and disconnects the kernel
# initiator.
nvmefs_cleanup() {
	local dir pid
	for dir in "${nvmefs_mounts[@]}"; do
		pid=$(cat "$dir.pid" 2>/dev/null) || pid=
		mountpoint -q "$dir" 2>/dev/null && { fusermount3 -u -z "$dir" 2>/dev/null || umount -l "$dir" 2>/dev/null || true; }
		if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
			wait_gone "$pid" 5000 || kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	kernel_disconnect_all
}

# nvmefs_stats DIR JQ_FILTER: a value from DIR/stats.
nvmefs_stats() { jq -r "$2" "$1/stats" || fail "reading $1/stats failed or it is not JSON: $(cat "$1/stats" 2>&1)"; }

# kernel_read DEV OFFSET LENGTH: LENGTH bytes of block device DEV at byte OFFSET, read with O_DIRECT
# (whole 4 KiB blocks around the range, so the page cache plays no part).
kernel_read() {
	local dev=$1 off=$2 len=$3 first last
	first=$((off / 4096)) last=$(((off + len + 4095) / 4096))
	dd if="$dev" of=/tmp/kernel_read.$$ bs=4096 skip="$first" count=$((last - first)) iflag=direct \
		status=none || fail "reading $len bytes at $off from $dev failed"
	dd if=/tmp/kernel_read.$$ bs=64K skip=$((off - first * 4096)) count="$len" \
		iflag=skip_bytes,count_bytes status=none
	rm -f /tmp/kernel_read.$$
}
