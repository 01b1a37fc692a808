# Helpers for tests/integration/test-*.sh, sourced inside the testbed VM.
set -euo pipefail

fail() {
	echo "FAIL: $*" >&2
	if [[ -s ${syslog_file:-} ]]; then
		echo "# the last lines of syslog ($syslog_file):" >&2
		tail -n 40 "$syslog_file" | sed 's/^/#   /' >&2
	fi
	exit 1
}
skip() { echo "SKIP: $*"; exit 77; }
# log TEXT: a line of the test's log, stamped with the seconds since the test began (guest time),
# so that a log shows where a test spends its time (issue 36 item 6). $EPOCHREALTIME, not date:
# a program started costs a quarter of a second or more in the emulated guest.
log_t0=${EPOCHREALTIME/./}
log() {
	local us=$((${EPOCHREALTIME/./} - log_t0))
	printf '# [%d.%ds] %s\n' $((us / 1000000)) $((us / 100000 % 10)) "$*"
}

# scaled SHORT LONG: how many times (or how much) a test repeats what it checks. make check takes
# SHORT, which still shows every defect the test is for once; make check-long
# (NVMEFS_TEST_LONG=1) takes LONG, for defects that show only now and then (a leak in one run of
# fifty, a race). The whole suite must fit CI's time, so repetition belongs in the long runs.
scaled() { if [[ ${NVMEFS_TEST_LONG:-} == 1 ]]; then echo "$2"; else echo "$1"; fi; }

[[ ${NVMEFS_TESTBED:-} == 1 ]] || skip "this test runs inside contrib/nvmefs-testbed (make check does that)"

# Every subsystem NQN the testbed configured, as an array.
read -r -a subnqns <<<"$NVMEFS_TEST_SUBNQNS"

# The transport a test runs over: NVMEFS_TEST_TRTYPE (make check's .tcp run sets tcp), else rdma.
# The testbed serves both on the same address and service ids; every nvmefs and nvme-cli command
# of a test that runs over either gives -t "$trtype".
trtype=${NVMEFS_TEST_TRTYPE:-rdma}
[[ $trtype == rdma || $trtype == tcp ]] || fail "NVMEFS_TEST_TRTYPE is '$trtype': give rdma or tcp"
[[ $trtype == rdma ]] || log "transport: $trtype (NVMEFS_TEST_TRTYPE)"

# A run over TCP proves it: the .tcp runs would otherwise pass over RDMA as well, since the testbed
# serves both on the same address and service ids. rdma_packets: what soft-RoCE has sent since its
# device was made; tcp_active_opens: the TCP connections this guest has opened.
rdma_packets() { rdma statistic show link 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "sent_pkts") n += $(i + 1) } END { print n + 0 }'; }
tcp_active_opens() { awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ActiveOpens") c = i; h = 1 } else print $c }' /proc/net/snmp; }
rdma_packets_at_start=$(rdma_packets)
tcp_opens_at_start=$(tcp_active_opens)

# tcp_conns PID: the established TCP connections process PID holds to a service id of the target.
tcp_conns() {
	local p filter=
	for p in $NVMEFS_TEST_TRSVCIDS 8009; do filter+="${filter:+ or }dport = :$p"; done
	ss -Htnp state established "( $filter )" | grep -c "pid=$1," || true
}

# check_own_transport WHAT PID: process PID (a mount's daemon, a running perf) holds its queues over
# the run's transport: over TCP, connections to the target and no RDMA queue pair; over RDMA, queue
# pairs and no TCP connection to the target.
check_own_transport() {
	local what=$1 pid=$2 conns qps
	conns=$(tcp_conns "$pid") qps=$(rdma_res_count qp "$pid")
	if [[ $trtype == tcp ]]; then
		((conns >= 1 && qps == 0)) || fail "$what runs with $conns TCP connections and $qps RDMA queue pairs, not over TCP alone"
	else
		((qps >= 1 && conns == 0)) || fail "$what runs with $qps RDMA queue pairs and $conns TCP connections, not over RDMA alone"
	fi
}

# check_run_transport: since the test began, the run's transport carried its traffic and the other
# did not: over TCP, connections were opened and soft-RoCE sent nothing (a re-created device starts
# its count again, so the count may only have fallen); over RDMA, soft-RoCE sent packets.
check_run_transport() {
	local sent opens
	sent=$(rdma_packets) opens=$(tcp_active_opens)
	if [[ $trtype == tcp ]]; then
		((sent <= rdma_packets_at_start)) ||
			fail "a run over TCP sent $((sent - rdma_packets_at_start)) packets over soft-RoCE: something ran over RDMA"
		((opens > tcp_opens_at_start)) || fail "a run over TCP opened no TCP connection"
		log "transport: TCP only ($((opens - tcp_opens_at_start)) connections opened, no RDMA packet)"
	else
		((sent > rdma_packets_at_start)) || fail "a run over RDMA sent no packet over soft-RoCE"
	fi
}

# nvmet_port_id N: the nvmet port id of the testbed's port N (1-based) over the run's transport:
# nvmet ports are per transport, and the testbed's TCP port N is another nvmet port than its RDMA
# port N (NVMEFS_TEST_TCP_PORTIDS).
nvmet_port_id() {
	local ids
	if [[ $trtype == rdma ]]; then
		echo "$1"
		return
	fi
	read -r -a ids <<<"${NVMEFS_TEST_TCP_PORTIDS:-}"
	((${#ids[@]} >= $1)) || fail "the testbed has no TCP port $1 (NVMEFS_TEST_TCP_PORTIDS='${NVMEFS_TEST_TCP_PORTIDS:-}')"
	echo "${ids[$1 - 1]}"
}

# kernel_connect SUBNQN [NSID [NVME-CONNECT OPTIONS...]]: connects the kernel initiator to SUBNQN
# (with the extra options given, e.g. -c 1 -l 30) and prints the block device of namespace NSID
# (default 1).
kernel_connect() {
	local nqn=$1 nsid=${2:-1}
	shift $(($# < 2 ? $# : 2))
	nvme connect -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$@" >/dev/null ||
		fail "kernel initiator: nvme connect $* to $nqn failed"
	# The namespace's block device appears asynchronously after connect returns.
	wait_until 10000 kernel_ns_dev "$nqn" "$nsid" ||
		fail "kernel initiator: no block device for namespace $nsid of $nqn after connect"
}

# kernel_ns_dev SUBNQN NSID: prints the block device of namespace NSID of the connected SUBNQN;
# returns 1 if there is none (yet).
kernel_ns_dev() {
	local nqn=$1 nsid=$2 sys dev
	for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
		[[ -e $sys/subsysnqn && $(<"$sys/subsysnqn") == "$nqn" ]] || continue
		for dev in "$sys"/nvme*n*; do
			[[ -e $dev/nsid && $(<"$dev/nsid") == "$nsid" && -b /dev/${dev##*/} ]] || continue
			echo "/dev/${dev##*/}"
			return 0
		done
	done
	return 1
}

# The block device of namespace NSID of an already connected SUBNQN.
kernel_connect_ns() { kernel_ns_dev "$1" "$2" || fail "kernel initiator: $1 has no namespace $2"; }

# TLS, where the test's "# testbed: --tls KEY" line asks for it: the key is NVMEFS_TEST_TLS_KEY,
# and tlshd, which does the target's handshakes and the kernel initiator's, logs to
# NVMEFS_TEST_TLSHD_LOG. require_tls also puts the key in the file tls_keyfile, which only its
# owner may read, as nvmefs takes it (and /etc/fstab gives it).
tls_keyfile=/tmp/tls.key
require_tls() {
	[[ -n ${NVMEFS_TEST_TLS_KEY:-} && -s ${NVMEFS_TEST_TLSHD_LOG:-} ]] ||
		fail "the testbed serves no TLS: this test's '# testbed: --tls' line was not honoured"
	(umask 077 && printf '%s\n' "$NVMEFS_TEST_TLS_KEY" >"$tls_keyfile") || fail "writing $tls_keyfile failed"
}
# The handshakes tlshd has logged as done, both ends' (the target's and the kernel initiator's).
tls_handshakes() { grep -c 'was successful' "$NVMEFS_TEST_TLSHD_LOG" || true; }
# tls_mount_agrees DIR DEV DATA BEFORE WHAT: the mount on DIR, made once tlshd had logged BEFORE
# handshakes, reads the 1 MiB the kernel initiator wrote through DEV (the file DATA), and the kernel
# reads the 64 KiB the mount writes at 256 KiB (kept in DATA.2); the mount's stats say
# TLS_AES_128_GCM_SHA256, and tlshd did a handshake for its admin queue and each I/O queue. WHAT
# ("over TLS", ...) names the mount in failures.
tls_mount_agrees() {
	local dir=$1 dev=$2 data=$3 before=$4 what=$5 suite queues after
	cmp <(head -c 1048576 "$dir/n1") "$data" || fail "the mount $what reads other data than the kernel initiator wrote"
	dd if=/dev/urandom of="$data.2" bs=64k count=1 status=none
	dd if="$data.2" of="$dir/n1" bs=64k seek=4 conv=notrunc oflag=direct status=none ||
		fail "writing through the mount $what failed"
	cmp <(kernel_read "$dev" $((4 * 65536)) 65536) "$data.2" ||
		fail "the kernel initiator reads other data than the mount $what wrote"
	suite=$(nvmefs_stats "$dir" .controller.tls)
	[[ $suite == TLS_AES_128_GCM_SHA256 ]] || fail "the mount's stats say TLS '$suite', not TLS_AES_128_GCM_SHA256"
	queues=$(nvmefs_stats "$dir" .controller.io_queues)
	after=$(tls_handshakes)
	((after - before >= queues + 1)) ||
		fail "tlshd logged $((after - before)) handshakes for the mount, fewer than its admin queue and $queues I/O queues"
	log "the mount $what runs $suite on its admin queue and $queues I/O queues ($((after - before)) handshakes)"
}
# kernel_connect_tls SUBNQN [HOSTNQN HOSTID [OPTIONS]]: the kernel initiator to SUBNQN over TLS as
# HOSTNQN (default: this host's), with the kernel's extra OPTIONS (",dhchap_secret=...") given
# straight to /dev/nvme-fabrics, as nvme-cli 2.3 has no --tls (and the kernel wants hostid= with
# hostnqn=); prints the block device of its namespace 1. Returns 1 if the kernel refuses.
kernel_connect_tls() {
	local host=${2:-$(</etc/nvme/hostnqn)} hostid=${3:-$(</etc/nvme/hostid)}
	(exec 3<>/dev/nvme-fabrics &&
		echo "transport=tcp,traddr=$NVMEFS_TEST_TRADDR,trsvcid=$NVMEFS_TEST_TRSVCID,nqn=$1,hostnqn=$host,hostid=$hostid,tls${4:-}" >&3) 2>/dev/null ||
		return 1
	wait_until 10000 kernel_ns_dev "$1" 1 >/dev/null || fail "kernel initiator: no block device for $1 over TLS"
	kernel_ns_dev "$1" 1
}

# The kernel initiator's controller (nvme0, ...) connected to SUBNQN over the run's transport.
kernel_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c/subsysnqn && $(<"$c/subsysnqn") == "$1" && $(<"$c/transport") == "$trtype" ]] &&
			{ echo "${c##*/}"; return 0; }
	done
	return 1
}

# The state of the kernel initiator's controller for SUBNQN (live, resetting, connecting,
# deleting, ...), or "gone".
kernel_ctrl_state() {
	local c
	c=$(kernel_ctrl "$1") && cat "/sys/class/nvme/$c/state" 2>/dev/null || echo gone
}

kernel_disconnect() {
	nvme disconnect -n "$1" >/dev/null || fail "kernel initiator: nvme disconnect from $1 failed"
}

# Disconnects every kernel controller; gives up waiting after 30 s, since a controller stuck
# reconnecting (after link_down, say) blocks nvme disconnect for minutes.
kernel_disconnect_all() {
	nvme disconnect-all >/dev/null 2>&1 &
	local pid=$!
	wait_gone "$pid" 30000 || log "nvme disconnect-all still runs after 30 s (a controller stuck reconnecting?); not waiting for it"
}

# The nvmefs command of the build tree under test. src/cli/nvmefs is libtool's wrapper script
# around src/cli/.libs/nvmefs (the command links the build's libnvmefs.so.0), and its shell
# start-up takes a second or more in the emulated guest, which would count in every timing a test
# takes: the tests run the program itself. In the guest the build's libnvmefs.so.0 goes to
# /usr/lib (a throwaway overlay there), the loader's last resort, so the program finds it run
# by any user and under mount(8), which drops the environment, while every other program a test
# runs looks up its libraries as usual (LD_LIBRARY_PATH would send each one to the build tree
# over 9p first).
NVMEFS_BUILDDIR=${top_builddir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
NVMEFS=$NVMEFS_BUILDDIR/src/cli/nvmefs
if [[ -x $NVMEFS_BUILDDIR/src/cli/.libs/nvmefs ]]; then
	NVMEFS=$NVMEFS_BUILDDIR/src/cli/.libs/nvmefs
	if [[ -n ${NVMEFS_TEST_TRADDR:-} && -w /usr/lib ]]; then
		cp -P "$NVMEFS_BUILDDIR"/src/lib/.libs/libnvmefs.so* /usr/lib/
	else
		export LD_LIBRARY_PATH=$NVMEFS_BUILDDIR/src/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	fi
fi
require_nvmefs() { [[ -x $NVMEFS ]] || fail "$NVMEFS is not built: run make first"; }

# nvmefs_copy DIR: the build's nvmefs as DIR/nvmefs, for a user who cannot read the build tree (it
# is shared over 9p); it finds libnvmefs.so.0 where lib.sh put it, in /usr/lib.
nvmefs_copy() {
	local dir=$1
	mkdir -p "$dir" && cp "$NVMEFS" "$dir/nvmefs" || fail "cannot copy the build's nvmefs to $dir"
	chmod 0755 "$dir" "$dir/nvmefs"
}

# test_user_add USER: adds USER (useradd -m) unless it exists, for a test that runs in a kept VM:
# the account files (and shadow's backups of them) are copied first, and test_user_remove, in the
# test's EXIT trap, puts them back byte for byte and removes the home, so the next test meets the
# guest's users as booted (userdel would leave the backups changed). What cannot be put back
# retires the VM.
test_user=''
test_user_files=(passwd passwd- group group- shadow shadow- gshadow gshadow- subuid subuid- subgid subgid-)
test_user_add() {
	local f
	id "$1" >/dev/null 2>&1 && return 0
	mkdir -p /tmp/test-user-etc || return 1
	for f in "${test_user_files[@]}"; do
		[[ ! -e /etc/$f ]] || cp -p "/etc/$f" /tmp/test-user-etc/ || return 1
	done
	test_user=$1
	useradd -m "$1"
}
test_user_remove() {
	local f
	[[ -n $test_user ]] || return 0
	rm -rf "/home/${test_user:?}" "/var/mail/${test_user:?}" || testbed_retire
	for f in "${test_user_files[@]}"; do
		if [[ -e /tmp/test-user-etc/$f ]]; then
			cp -p "/tmp/test-user-etc/$f" "/etc/$f" || testbed_retire
		else
			rm -f "/etc/$f" || testbed_retire
		fi
	done
	! id "$test_user" >/dev/null 2>&1 || testbed_retire
	test_user=''
}

# user_procs_kill UID: kills every process of user UID (a container's, rootless podman's pause
# process), if UID is not empty.
user_procs_kill() {
	local s
	[[ -n $1 ]] || return 0
	for s in /proc/[0-9]*/status; do
		[[ $(awk '/^Uid:/ {print $2}' "$s" 2>/dev/null) == "$1" ]] || continue
		s=${s#/proc/}
		kill -KILL "${s%/status}" 2>/dev/null || true
	done
}

# dev_open NODE...: opens device nodes to every user (chmod 0666) for a test in a kept VM, noting
# their modes first; dev_restore, in the test's EXIT trap, gives them back.
dev_modes=()
dev_open() {
	local f
	for f in "$@"; do dev_modes+=("$(stat -c %a "$f")" "$f") || return 1; done
	chmod 0666 "$@"
}
dev_restore() {
	local i
	for ((i = 0; i < ${#dev_modes[@]}; i += 2)); do
		chmod "${dev_modes[i]}" "${dev_modes[i + 1]}" 2>/dev/null || testbed_retire
	done
	dev_modes=()
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_until MAX_MS COMMAND...: runs COMMAND every 0.1 s until it succeeds; returns 1 if it has not
# within MAX_MS. How a test waits for the target, the guest or a daemon to reach a state: for the
# condition itself, bounded, never a fixed sleep that is too short on a loaded emulated guest.
wait_until() {
	local max_ms=$1 start
	shift
	start=$(now_ms)
	until "$@"; do
		(($(now_ms) - start < max_ms)) || return 1
		sleep 0.1
	done
}

# Conditions for wait_until. output_is TEXT COMMAND...: COMMAND prints TEXT. steady COMMAND...:
# COMMAND prints the same twice, 0.5 s apart (the target releases queues asynchronously after a
# disconnect, so resource counts are taken once they stay put).
output_is() { local want=$1; shift; [[ $("$@") == "$want" ]]; }
steady() { local first; first=$("$@"); sleep 0.5; [[ $("$@") == "$first" ]]; }

# syslog_start: runs a syslog daemon (busybox syslogd) writing to $syslog_file, so that the
# messages of nvmefs mount's daemon (its controller's state transitions) are kept; fail prints
# their last lines.
syslog_file=
syslog_start() {
	[[ -e /dev/log ]] && return 0
	command -v busybox >/dev/null || return 0
	syslog_file=/tmp/syslog
	busybox syslogd -n -O "$syslog_file" &
	wait_until 5000 test -S /dev/log || log "busybox syslogd did not create /dev/log: the daemon's messages are lost"
}

# wait_progress PID ERRFILE SEC: waits until the nvmefs perf running as PID, its standard error
# going to ERRFILE, has printed its progress line for second SEC; fails if it has not within 30 s
# or exits first.
wait_progress() {
	local pid=$1 err=$2 sec=$3
	progress_or_gone() { grep -q "^\[ *${sec}s\]" "$err" || ! kill -0 "$pid" 2>/dev/null; }
	wait_until 30000 progress_or_gone && grep -q "^\[ *${sec}s\]" "$err" ||
		fail "perf printed no progress line for second $sec: $(cat "$err")"
}

# expect_failure NAME REGEX MAX_MS [STATUS] -- COMMAND...: COMMAND must fail within MAX_MS (with exit
# status STATUS, if given) with exactly one line of output (the error) matching REGEX.
expect_failure() {
	local name=$1 re=$2 max_ms=$3 status= out rc=0 start elapsed
	[[ $4 == -- ]] || { status=$4; shift; }
	shift 4
	start=$(now_ms)
	out=$("$@" 2>&1) || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc != 0)) || fail "$name: '$*' succeeded; it should have failed. Output: $out"
	[[ -z $status || $rc == "$status" ]] ||
		fail "$name: '$*' exited with status $rc, not $status as its man page's EXIT STATUS says. Output: $out"
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
	"$IO_TOOL" -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "$@"
}

# ---------------------------------------------------------------------------------------------
# nvmefs mount (tests/integration/test-mount-*.sh)
# ---------------------------------------------------------------------------------------------

# Mount points nvmefs_mount made, for nvmefs_cleanup.
nvmefs_mounts=()

# gone PID: process PID has exited.
gone() { ! kill -0 "$1" 2>/dev/null; }

# wait_gone PID MAX_MS: waits until process PID has exited; returns 1 if it still runs after MAX_MS.
wait_gone() { wait_until "$2" gone "$1"; }

# wait_unmounted DIR MAX_MS: waits until DIR is no longer a mount point; returns 1 if it still is.
not_mounted() { ! mountpoint -q "$1"; }
wait_unmounted() { wait_until "$2" not_mounted "$1"; }

# nvmefs_mount SUBNQN DIR [OPTIONS...]: mounts SUBNQN of the testbed's target on DIR (created if
# missing) with nvmefs mount in daemon mode, pidfile DIR.pid; the test fails unless the command
# succeeds and DIR is then an nvmefs mount. With NVMEFS_TEST_RING=1 (the .ring tests) the mount
# asks for FUSE over io_uring (-o io_uring=on; /dev/fuse is the default) and the test fails unless
# its stats say it has it.
nvmefs_mount() {
	local nqn=$1 dir=$2 ring=()
	shift 2
	[[ ${NVMEFS_TEST_RING:-} != 1 ]] || ring=(-o io_uring=on)
	mkdir -p "$dir"
	nvmefs_mounts+=("$dir")
	# Output to a file, not a pipe: a daemon that kept the pipe open would hang $(...).
	timeout 60 "$NVMEFS" mount -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" \
		--pidfile "$dir.pid" "${ring[@]}" "$@" "$dir" >"$dir.out" 2>&1 ||
		fail "nvmefs mount ${ring[*]} $* $dir failed (exit $?): $(cat "$dir.out")"
	[[ $(findmnt -n -o FSTYPE --mountpoint "$dir") == fuse.nvmefs ]] ||
		fail "nvmefs mount $* $dir returned 0 but $dir is not an nvmefs mount: $(findmnt "$dir" || true)"
	[[ -s $dir.pid ]] || fail "nvmefs mount returned but its pidfile $dir.pid is missing or empty"
	# A test that names its own transport or paths checks them itself.
	[[ " $* " =~ \ (-t|--transport|--path)[\ =] ]] || check_own_transport "the mount of $nqn on $dir" "$(cat "$dir.pid")"
	if ((${#ring[@]})); then
		[[ $(nvmefs_stats "$dir" .io_uring) == true ]] ||
			fail "NVMEFS_TEST_RING=1: the mount on $dir with -o io_uring=on does not take FUSE over io_uring: its stats say io_uring $(nvmefs_stats "$dir" .io_uring)"
		log "the mount on $dir takes FUSE over io_uring (NVMEFS_TEST_RING=1)"
	fi
}

# The PID in DIR.pid.
nvmefs_pid() { cat "$1.pid"; }

# cpu_ticks PID: the user and system clock ticks (getconf CLK_TCK a second) PID has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

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

# ---------------------------------------------------------------------------------------------
# Fault injection on the target and the link (tests/integration/test-outage-*.sh)
# ---------------------------------------------------------------------------------------------

# port_unlink SUBNQN [PORT]: removes SUBNQN from nvmet port PORT (default: the first port over the
# run's transport, nvmet_port_id 1). nvmet deletes the subsystem's controllers on that port at once
# (their queues are disconnected), and a port left with no subsystem stops listening: reconnects
# are refused until port_link.
port_unlink() {
	local nqn=$1 port=${2:-$(nvmet_port_id 1)}
	rm "$NVMEFS_TEST_NVMET/ports/$port/subsystems/$nqn" || fail "unlinking $nqn from nvmet port $port failed"
}

# port_link SUBNQN [PORT]: links SUBNQN to nvmet port PORT (default: nvmet_port_id 1) again.
port_link() {
	local nqn=$1 port=${2:-$(nvmet_port_id 1)}
	ln -s "$NVMEFS_TEST_NVMET/subsystems/$nqn" "$NVMEFS_TEST_NVMET/ports/$port/subsystems/$nqn" ||
		fail "linking $nqn to nvmet port $port failed"
}

# port_refer PORT TRSVCID: nvmet port PORT's discovery log refers to the port at TRSVCID on the
# testbed's address, over the run's transport.
port_refer() {
	local d=$NVMEFS_TEST_NVMET/ports/$1/referrals/to-$2
	mkdir "$d" || fail "making the referral $d failed"
	echo "$trtype" >"$d/addr_trtype"
	echo ipv4 >"$d/addr_adrfam"
	echo "$NVMEFS_TEST_TRADDR" >"$d/addr_traddr"
	echo "$2" >"$d/addr_trsvcid"
	echo 1 >"$d/enable"
}

# multipath_setup SUBNQN: for the multipath tests (testbed --ports 2): sets ports (every port's
# service id), ana (port 1's ANA group 1 state file, over the run's transport) and path2 (the
# second port as ADDR:PORT).
multipath_setup() {
	mp_nqn=$1
	read -r -a ports <<<"$NVMEFS_TEST_TRSVCIDS"
	((${#ports[@]} >= 2)) || fail "the testbed gave ${#ports[@]} ports, not 2"
	ana=$NVMEFS_TEST_NVMET/ports/$(nvmet_port_id 1)/ana_groups/1/ana_state
	[[ -e $ana ]] || fail "$ana is missing: the target has no ANA groups to change"
	path2="$NVMEFS_TEST_TRADDR:${ports[1]}"
}

# For 'trap ... EXIT' after multipath_setup: both ports linked to the subsystem again, and port 1's
# ANA group optimized.
multipath_restore() {
	local p
	for p in "$(nvmet_port_id 1)" "$(nvmet_port_id 2)"; do
		[[ -L $NVMEFS_TEST_NVMET/ports/$p/subsystems/$mp_nqn ]] || port_link "$mp_nqn" "$p" 2>/dev/null || true
	done
	echo optimized >"$ana" 2>/dev/null || true
}

# The netdev that soft-RoCE (rdma_rxe) is bound to, which carries both initiators' and the target's
# RDMA traffic.
rxe_netdev() {
	local dev
	dev=$(rdma link show | sed -n 's/.* netdev \([^ ]*\).*/\1/p' | head -n 1)
	[[ -n $dev ]] || fail "no rdma link is bound to a netdev: $(rdma link show 2>&1)"
	echo "$dev"
}

# The state of the soft-RoCE port: ACTIVE or DOWN.
rxe_port_state() { rdma link show | sed -n 's/.* state \([A-Z_]*\) .*/\1/p' | head -n 1; }

# link_down: takes the RoCE netdev down; its rxe port goes DOWN. link_up brings it back up and
# waits (at most 10 s) for the rxe port to be ACTIVE again. Over TCP the netdev going down is not
# enough: the initiators and the target share the guest, and TCP between local addresses goes
# through lo whatever the state of the netdev the address is on (nvme-tcp and its I/O carry on).
# So the run over TCP also drops every TCP segment to the target's address, on input (the sender
# sees no error, as with a cable pulled: segments are lost and connects time out); link_up takes
# the rule away.
tcp_drop_rule=(INPUT -d "$NVMEFS_TEST_TRADDR" -p tcp -j DROP)
# A guest whose link went down or whose soft-RoCE device was made again keeps rdma_cm and rxe state
# that the testbed's clean-up between tests does not undo (connects over RDMA then time out in the
# next test): the VM this test runs in takes no other test after it.
testbed_retire() { [[ -z ${NVMEFS_TESTBED_RETIRE:-} ]] || : >"$NVMEFS_TESTBED_RETIRE"; }
link_down() {
	local dev
	dev=$(rxe_netdev)
	testbed_retire
	ip link set "$dev" down || fail "ip link set $dev down failed"
	[[ $trtype == tcp ]] || return 0
	iptables -I "${tcp_drop_rule[@]}" || fail "iptables -I ${tcp_drop_rule[*]} failed"
}
link_up() {
	local dev
	dev=$(rxe_netdev)
	if [[ $trtype == tcp ]]; then
		while iptables -C "${tcp_drop_rule[@]}" 2>/dev/null; do
			iptables -D "${tcp_drop_rule[@]}" || fail "iptables -D ${tcp_drop_rule[*]} failed"
		done
	fi
	ip link set "$dev" up || fail "ip link set $dev up failed"
	rxe_active() { [[ $(rxe_port_state) == ACTIVE ]]; }
	wait_until 10000 rxe_active ||
		fail "$dev is up again but its rxe port is still $(rxe_port_state) after 10 s: $(rdma link show)"
}

# tcp_drop CHAIN MATCH...: drops the TCP segments MATCH (iptables words, e.g. --dport 4420) selects
# in CHAIN (INPUT, OUTPUT), first of its rules; tcp_drop_lift (for 'trap ... EXIT' too) takes
# every rule tcp_drop made away again.
tcp_drops=()
tcp_drop() {
	local chain=$1
	shift
	command -v iptables >/dev/null || fail "iptables is missing: the testbed's 'prepare' installs it"
	iptables -I "$chain" -p tcp "$@" -j DROP || fail "iptables -I $chain -p tcp $* -j DROP failed"
	tcp_drops+=("$chain -p tcp $*")
}
tcp_drop_lift() {
	local r
	for r in "${tcp_drops[@]}"; do
		# shellcheck disable=SC2086 # a rule is its words
		iptables -D $r -j DROP 2>/dev/null || true
	done
	tcp_drops=()
}

# The queues open between the guest's initiators and the target over the run's transport: RC queue
# pairs over RDMA; over TCP, established connections to or from a service id of the target (both
# ends, the target's included, are in the guest). For "nothing left behind" checks.
transport_queues() {
	local p filter=
	if [[ $trtype == rdma ]]; then
		rdma res show qp | grep -c " type RC " || true
		return
	fi
	for p in $NVMEFS_TEST_TRSVCIDS; do
		filter+="${filter:+ or }dport = :$p or sport = :$p"
	done
	ss -Htn state established "( $filter )" | wc -l
}

# Where target_teardown keeps what it removed, per subsystem.
target_saved_dir() { echo "/tmp/nvmet-saved/${1//[^A-Za-z0-9._-]/_}"; }

# The writable attributes worth keeping: those the testbed or a test may have set.
nvmet_subsys_attrs=(attr_allow_any_host attr_model attr_serial attr_firmware attr_ieee_oui attr_version
	attr_cntlid_min attr_cntlid_max attr_qid_max)
nvmet_ns_attrs=(device_path device_nguid device_uuid ana_grpid buffered_io)
nvmet_port_attrs=(addr_trtype addr_adrfam addr_traddr addr_trsvcid addr_treq param_inline_data_size
	param_max_queue_size)

# target_teardown SUBNQN: takes SUBNQN off the target as a target restart does: unlinks it from
# every port (nvmet deletes its controllers), removes each port left without a subsystem, then its
# namespaces and the subsystem itself. What it removed (attributes, backing devices, NGUIDs and
# UUIDs, allowed hosts, port addresses) is saved for target_rebuild.
target_teardown() {
	local nqn=$1 n=$NVMEFS_TEST_NVMET saved a p ns host
	local sub=$n/subsystems/$nqn
	[[ -d $sub ]] || fail "target_teardown: no subsystem $nqn in $n"
	saved=$(target_saved_dir "$nqn")
	rm -rf "$saved"
	mkdir -p "$saved/subsys" "$saved/ns" "$saved/ports"
	for a in "${nvmet_subsys_attrs[@]}"; do
		[[ -r $sub/$a ]] && cat "$sub/$a" >"$saved/subsys/$a"
	done
	ls "$sub/allowed_hosts" >"$saved/hosts"
	for ns in "$sub"/namespaces/*; do
		[[ -d $ns ]] || continue
		mkdir "$saved/ns/${ns##*/}"
		for a in "${nvmet_ns_attrs[@]}" enable; do
			[[ -r $ns/$a ]] && cat "$ns/$a" >"$saved/ns/${ns##*/}/$a"
		done
	done
	for p in "$n"/ports/*; do
		[[ -L $p/subsystems/$nqn ]] || continue
		mkdir "$saved/ports/${p##*/}"
		for a in "${nvmet_port_attrs[@]}"; do
			[[ -r $p/$a ]] && cat "$p/$a" >"$saved/ports/${p##*/}/$a"
		done
		rm "$p/subsystems/$nqn" || fail "target_teardown: unlinking $nqn from port ${p##*/} failed"
		if [[ -z $(ls "$p/subsystems") && -z $(ls "$p/referrals") ]]; then
			rmdir "$p" || fail "target_teardown: removing nvmet port ${p##*/} failed"
			: >"$saved/ports/${p##*/}/removed"
		fi
	done
	for host in $(<"$saved/hosts"); do rm "$sub/allowed_hosts/$host"; done
	for ns in "$sub"/namespaces/*; do
		[[ -d $ns ]] || continue
		echo 0 >"$ns/enable"
		rmdir "$ns" || fail "target_teardown: removing namespace ${ns##*/} of $nqn failed"
	done
	rmdir "$sub" || fail "target_teardown: removing subsystem $nqn failed"
}

# nvmet_restore DIR SAVED ATTRS...: writes each saved attribute that differs from DIR's.
nvmet_restore() {
	local dir=$1 saved=$2 a
	shift 2
	for a in "$@"; do
		[[ -e $saved/$a ]] || continue
		[[ $(<"$dir/$a") == "$(<"$saved/$a")" ]] && continue
		cat "$saved/$a" >"$dir/$a" || fail "restoring $dir/$a to '$(<"$saved/$a")' failed"
	done
}

# target_rebuild SUBNQN: puts back what target_teardown SUBNQN removed: the subsystem with the same
# attributes, each namespace with the same backing device, NGUID and UUID (so an initiator sees the
# same namespace again), the allowed hosts, the ports, and the links to them.
target_rebuild() {
	local nqn=$1 n=$NVMEFS_TEST_NVMET saved d ns p host
	local sub=$n/subsystems/$nqn
	saved=$(target_saved_dir "$nqn")
	[[ -d $saved ]] || fail "target_rebuild: target_teardown $nqn saved nothing"
	mkdir "$sub" || fail "target_rebuild: creating subsystem $nqn failed"
	nvmet_restore "$sub" "$saved/subsys" "${nvmet_subsys_attrs[@]}"
	for host in $(<"$saved/hosts"); do
		mkdir -p "$n/hosts/$host"
		ln -s "$n/hosts/$host" "$sub/allowed_hosts/$host"
	done
	for d in "$saved"/ns/*; do
		[[ -d $d ]] || continue
		ns=$sub/namespaces/${d##*/}
		mkdir "$ns" || fail "target_rebuild: creating namespace ${d##*/} of $nqn failed"
		nvmet_restore "$ns" "$d" "${nvmet_ns_attrs[@]}"
		[[ $(<"$d/enable") == 1 ]] && { echo 1 >"$ns/enable" || fail "target_rebuild: enabling $ns failed"; }
	done
	for d in "$saved"/ports/*; do
		[[ -d $d ]] || continue
		p=$n/ports/${d##*/}
		if [[ -e $d/removed ]]; then
			mkdir "$p" || fail "target_rebuild: creating nvmet port ${d##*/} failed"
			nvmet_restore "$p" "$d" "${nvmet_port_attrs[@]}"
		fi
		ln -s "$sub" "$p/subsystems/$nqn" || fail "target_rebuild: linking $nqn to port ${d##*/} failed"
	done
	rm -rf "$saved"
}

# The null_blk devices nullb_create made, and the namespaces ns_replace changed (configfs directory,
# then its device path, NGUID and UUID as they were), for ns_replace_undo: in files, as both are
# called in command substitutions, whose variables die with them.
undo_nullbs=/tmp/nvmefs-undo-nullbs
undo_ns=/tmp/nvmefs-undo-ns

# nullb_create NAME BYTES BLOCK_SIZE: a new memory-backed null_blk device /dev/NAME (as the
# testbed's own backing); prints its path.
nullb_create() {
	local name=$1 bytes=$2 bs=$3 d=/sys/kernel/config/nullb/$1
	((bytes % (1 << 20) == 0)) || fail "nullb_create: null_blk sizes are whole MiB, not $bytes bytes"
	modprobe null_blk nr_devices=0 2>/dev/null || true
	mkdir "$d" || fail "nullb_create: creating null_blk $name failed"
	echo "$name" >>"$undo_nullbs"
	echo $((bytes >> 20)) >"$d/size"
	echo "$bs" >"$d/blocksize"
	echo 1 >"$d/memory_backed"
	echo 1 >"$d/power"
	wait_until 5000 test -b "/dev/$name" || fail "nullb_create: /dev/$name did not appear"
	echo "/dev/$name"
}

# ns_save NS_DIR: remembers the nvmet namespace NS_DIR's backing and identity (once), for
# ns_replace_undo; ns_replace calls it, a test that changes the identity itself calls it first.
ns_save() {
	local ns=$1
	grep -qF "$ns|" "$undo_ns" 2>/dev/null && return 0
	echo "$ns|$(<"$ns/device_path")|$(<"$ns/device_nguid")|$(<"$ns/device_uuid")" >>"$undo_ns"
}

# ns_replace_undo: puts every namespace ns_save remembered back on its own backing and identity,
# and removes the null_blk devices nullb_create made, so that the next test (or the next run in
# the same boot) finds the target as it was. For a test's EXIT trap.
ns_replace_undo() {
	local ns dev nguid uuid name d
	if [[ -f $undo_ns ]]; then
		while IFS='|' read -r ns dev nguid uuid; do
			echo 0 >"$ns/enable"
			echo "$dev" >"$ns/device_path"
			echo "$nguid" >"$ns/device_nguid"
			echo "$uuid" >"$ns/device_uuid"
			echo 1 >"$ns/enable"
		done <"$undo_ns"
		rm -f "$undo_ns"
	fi
	if [[ -f $undo_nullbs ]]; then
		while read -r name; do
			d=/sys/kernel/config/nullb/$name
			[[ -d $d ]] || continue
			echo 0 >"$d/power"
			rmdir "$d"
		done <"$undo_nullbs"
		rm -f "$undo_nullbs"
	fi
}

# random_nguid: 16 random bytes as nvmet's device_nguid takes them (a UUID's shape).
random_nguid() { cat /proc/sys/kernel/random/uuid; }

# ns_replace SUBNQN NSID DEVICE: swaps namespace NSID of SUBNQN to the backing DEVICE under a new
# NGUID and UUID, as if another namespace had been attached under the same NSID. Prints the new
# NGUID.
ns_replace() {
	local nqn=$1 nsid=$2 dev=$3 nguid
	local ns=$NVMEFS_TEST_NVMET/subsystems/$nqn/namespaces/$nsid
	[[ -d $ns ]] || fail "ns_replace: $nqn has no namespace $nsid"
	ns_save "$ns"
	nguid=$(random_nguid)
	echo 0 >"$ns/enable" || fail "ns_replace: disabling $ns failed"
	echo "$dev" >"$ns/device_path" || fail "ns_replace: setting $ns to $dev failed"
	echo "$nguid" >"$ns/device_nguid" || fail "ns_replace: setting the NGUID of $ns failed"
	random_nguid >"$ns/device_uuid" || fail "ns_replace: setting the UUID of $ns failed"
	echo 1 >"$ns/enable" || fail "ns_replace: enabling $ns on $dev failed"
	echo "$nguid"
}

# ---------------------------------------------------------------------------------------------
# Load and controller state across outages (tests/integration/test-outage-*.sh)
# ---------------------------------------------------------------------------------------------

# nvmefs_ctrl_stat DIR FIELD: a field of the "controller" object of the mount's stats (state,
# reconnects, attempts, last_error, time_in_state_ms).
nvmefs_ctrl_stat() { nvmefs_stats "$1" ".controller.$2"; }

# wait_ctrl_state DIR REGEX MAX_MS: waits until the state of the controller behind the mount on DIR
# matches REGEX (e.g. '^live$', or '^(resetting|connecting)$'); fails after MAX_MS, with the
# controller's stats.
ctrl_state_is() { [[ $(jq -r '.controller.state' "$1/stats" 2>/dev/null) =~ $2 ]]; }
wait_ctrl_state() {
	local dir=$1 re=$2 max_ms=$3
	wait_until "$max_ms" ctrl_state_is "$dir" "$re" ||
		fail "the controller of $dir is not /$re/ after $max_ms ms: $(jq -c '.controller' "$dir/stats" 2>&1)"
}

# The background jobs fio_load_start and perf_load_start started, by NAME.
declare -A load_pids=()

# fio_load_start NAME FILE SECONDS [FIO OPTIONS...]: starts, in the background, a time-based fio job
# on FILE: random 4 KiB writes, 8 in flight (libaio, O_DIRECT) over its first 32 MiB, every block
# read back and checked (crc32c, --verify_fatal) soon after it is written (verify_backlog), for
# SECONDS. Once load_wait has seen it end, its JSON is in /tmp/fio-NAME.json, its messages in
# /tmp/fio-NAME.err. The job runs as a thread of the one fio process, so that killing that process
# stops it (and fio then writes its error messages before the JSON in its output file).
fio_load_start() {
	local name=$1 file=$2 secs=$3
	shift 3
	fio --name="$name" --filename="$file" --thread --ioengine=libaio --direct=1 --iodepth=8 --rw=randwrite \
		--bs=4k --size=32M --time_based --runtime="$secs" --verify=crc32c --verify_fatal=1 \
		--verify_backlog=64 --do_verify=1 --randrepeat=0 --verify_state_save=0 \
		--output-format=json --output="/tmp/fio-$name.out" "$@" >/dev/null 2>"/tmp/fio-$name.err" &
	load_pids[$name]=$!
}

# load_wait NAME MAX_S: waits for the background job NAME to end, at most MAX_S seconds (then
# kills it and fails); returns its exit status.
load_wait() {
	local name=$1 max_s=$2 pid=${load_pids[$1]} rc=0
	if ! wait_gone "$pid" $((max_s * 1000)); then
		kill -KILL "$pid" 2>/dev/null || true
		fail "$name still runs after $max_s s (I/O hung?): $(tail -c 1000 "/tmp/$name.out" "/tmp/fio-$name.err" "/tmp/perf-$name.err" 2>/dev/null)"
	fi
	wait "$pid" || rc=$?
	unset "load_pids[$name]"
	if [[ -e /tmp/fio-$name.out ]]; then
		sed -n '/^{/,$p' "/tmp/fio-$name.out" >"/tmp/fio-$name.json"
		sed '/^{/,$d' "/tmp/fio-$name.out" >>"/tmp/fio-$name.err"
		# fio that load_stop ended says so and exits 128: that is the load's end, not a failure.
		if [[ -n ${load_stopped[$name]:-} ]] && ((rc == 128)) &&
			grep -qx 'fio: terminating on signal 2' "/tmp/fio-$name.err"; then
			rc=0
		fi
	fi
	unset "load_stopped[$name]"
	return "$rc"
}

# load_running NAME: the background job NAME still runs.
load_running() { kill -0 "${load_pids[$1]}" 2>/dev/null; }

# load_stop NAME: ends the background job NAME before its SECONDS are up. A load's SECONDS bound
# the slowest guest's run of the steps it carries; a test that has seen those steps through (the
# controller live again, the I/O moved back) stops the load rather than wait out the rest, which
# is most of a load's time in a guest that is not the slowest (issue 36 item 6). fio and nvmefs
# perf stop on SIGINT: they wait for the I/O in flight and report what ran, and the checks of
# fio_load_check and perf_load_check hold as at the load's own end.
declare -A load_stopped=()
load_stop() {
	load_running "$1" || return 0
	load_stopped[$1]=1
	kill -INT "${load_pids[$1]}" 2>/dev/null || true
}

# load_stop_after NAME MS: the load carries on MS milliseconds more (I/O after the test's last
# step, verified as it goes), then load_stop.
load_stop_after() {
	sleep "$(($2 / 1000)).$(printf %03d $(($2 % 1000)))"
	load_stop "$1"
}

# perf_flowing NAME N: perf NAME has printed more than N progress lines, and the last one counts
# I/Os: after an outage, its controller is back.
perf_lines() { grep -c '^\[ *[0-9]*s\]' "/tmp/perf-$1.err" || true; }
perf_flowing() {
	(($(perf_lines "$1") > $2)) && [[ $(grep '^\[ *[0-9]*s\]' "/tmp/perf-$1.err" | tail -n 1) =~ \]\ +[1-9][0-9]*\ IOPS ]]
}

# wait_writes DIR N NAME: waits (at most 30 s) until the mount on DIR counts more than N writes,
# failing if the background job NAME that makes them ends first.
writes_over() {
	(($(nvmefs_stats "$1" '.total.writes') > $2)) && return 0
	load_running "$3" || fail "$3 ended before writing: $(cat "/tmp/fio-$3.err" 2>/dev/null)"
	return 1
}
wait_writes() {
	wait_until 30000 writes_over "$1" "$2" "$3" ||
		fail "$3 wrote $2 times or less in 30 s: $(jq -c '.total' "$1/stats")"
}

# fio_stall_ms JSON: fio's longest I/O, reads and writes, in ms: its total latency (lat), from
# submission to completion. Not clat alone: libaio's io_submit() of an O_DIRECT request to a FUSE
# file can block until the request is answered, and that time counts in slat, not clat (an 8 s
# outage once showed as a 5.2 s clat through the mount).
fio_stall_ms() {
	jq -r '[.jobs[0].read.lat_ns.max, .jobs[0].write.lat_ns.max] | max / 1000000 | floor' "$1"
}

# fio_load_check NAME MAX_S: waits for fio_load_start NAME (at most MAX_S seconds) and fails unless
# it exited 0 with no error and no verify failure, having written and checked blocks; logs its
# stall (longest I/O).
fio_load_check() {
	local name=$1 rc=0 j=/tmp/fio-$1.json
	load_wait "$name" "$2" || rc=$?
	((rc == 0)) || fail "fio $name exited $rc: $(tail -c 1500 "/tmp/fio-$name.err") $(jq -c '.jobs[0] | {error, read: .read.io_bytes, write: .write.io_bytes}' "$j" 2>/dev/null)"
	jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes > 0 and .jobs[0].read.io_bytes > 0' "$j" >/dev/null ||
		fail "fio $name: an error, or nothing written or verified: $(jq -c '.jobs[0] | {error, read: .read.io_bytes, write: .write.io_bytes}' "$j")"
	log "fio $name: $(jq -r '.jobs[0] | "\(.write.io_bytes / 1048576 | floor) MiB written, \(.read.io_bytes / 1048576 | floor) MiB verified"' "$j"), stall (longest I/O) $(fio_stall_ms "$j") ms"
}

# perf_load_start NAME SECONDS [PERF OPTIONS...]: starts, in the background, nvmefs perf --verify on
# namespace 1 of the first subsystem, 4 KiB random reads and writes on 2 queues over 16 MiB, for
# SECONDS; JSON to /tmp/perf-NAME.json, progress and messages to /tmp/perf-NAME.err.
perf_load_start() {
	local name=$1 secs=$2
	shift 2
	"$NVMEFS" perf -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "${subnqns[0]}" -o json --verify \
		--queues 2 --qd 8 --rw randrw --bs 4k --size 16M --time "$secs" "$@" \
		>"/tmp/perf-$name.json" 2>"/tmp/perf-$name.err" &
	load_pids[$name]=$!
	wait_until 15000 perf_connected "$!" || fail "perf $name holds no queue 15 s after it started: $(cat "/tmp/perf-$name.err")"
	check_own_transport "perf $name" "$!"
}
perf_connected() { (($(tcp_conns "$1") + $(rdma_res_count qp "$1") > 0)); }

# The reconnects and longest outage in perf's JSON report.
perf_reconnects() { jq -r '.controller.reconnects' "$1"; }
perf_longest_outage_ms() { jq -r '.controller.longest_outage_ms' "$1"; }

# perf_load_check NAME MAX_S MIN_RECONNECTS: waits for perf_load_start NAME (at most MAX_S
# seconds) and fails unless it exited 0 with no error, checked blocks and found no mismatch, and
# its report counts at least MIN_RECONNECTS reconnects.
perf_load_check() {
	local name=$1 min=$3 rc=0 j=/tmp/perf-$1.json r
	load_wait "$name" "$2" || rc=$?
	((rc == 0)) || fail "perf $name exited $rc: $(tail -c 1500 "/tmp/perf-$name.err") $(cat "$j")"
	jq -e '.errors == 0 and .iops > 0 and .verify.mismatches == 0 and .verify.blocks_read > 0' "$j" >/dev/null ||
		fail "perf $name: errors, no I/O, or mismatches: $(cat "$j")"
	r=$(perf_reconnects "$j")
	[[ $r =~ ^[0-9]+$ ]] || fail "perf $name: its report shows no reconnect count: $(cat "$j")"
	((r >= min)) || fail "perf $name: its report shows $r reconnects, not at least $min: $(cat "$j")"
	((r == 0 || $(perf_longest_outage_ms "$j") > 0)) || fail "perf $name: $r reconnects but no longest outage: $(cat "$j")"
	log "perf $name: $(jq -r '"\(.iops | floor) IOPS, \(.verify.blocks_read) blocks checked, \(.verify.mismatches) mismatches, \(.errors) errors"' "$j"), $r reconnects, longest outage $(perf_longest_outage_ms "$j") ms"
}

# For 'trap ... EXIT': kills the background jobs still running (disowned first: one whose I/O is
# stuck in the kernel cannot be waited for, and the shell need not report their end).
load_cleanup() {
	local name pid
	for name in "${!load_pids[@]}"; do
		pid=${load_pids[$name]}
		disown "$pid" 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# rdma_res_count KIND PID: how many RDMA resources of KIND (qp, cq, mr, cm_id, pd) process PID
# holds. 'rdma res show' names the thread that created each one (a queue pair made by a reconnect
# shows the controller thread's ID), so every thread of the process counts.
rdma_res_count() {
	local tids t
	for t in "/proc/$2/task"/*; do tids+="${tids:+|}${t##*/}"; done
	rdma res show "$1" | grep -cE " pid ($tids) " || true
}

# sleep_until START_MS MS: sleeps until MS milliseconds after START_MS (a now_ms), if not past.
sleep_until() {
	local left=$(($1 + $2 - $(now_ms)))
	((left <= 0)) || sleep "$((left / 1000)).$(printf %03d $((left % 1000)))"
}

# outage SECONDS DIR FAULT RESTORE: runs the command FAULT (e.g. "port_unlink $nqn"), and RESTORE
# SECONDS later. With a mount DIR (else give ''), checks that its controller leaves 'live' (within
# 15 s: the keep-alive timeout and more) and is live again within 20 s of RESTORE (outage_live_ms
# if set, for a test whose connection costs more, as authentication does). Sets outage_ms:
# from FAULT to the end of RESTORE (when the target can be reached again; restoring a link can
# take seconds), less the time a re-created device's delete took (see rxe_recreate): that is the
# initiators letting go of it, which counts against them, not as part of the outage.
outage_ms=
outage() {
	local secs=$1 dir=$2 fault=$3 restore=$4 start t
	start=$(now_ms)
	$fault
	if [[ -n $dir ]]; then
		wait_ctrl_state "$dir" '^(resetting|connecting)$' 15000
		log "$fault: the controller is $(nvmefs_ctrl_stat "$dir" state) after $(($(now_ms) - start)) ms"
	fi
	sleep_until "$start" $((secs * 1000))
	rxe_delete_ms=0
	$restore
	outage_ms=$(($(now_ms) - start - rxe_delete_ms))
	log "$restore done $((outage_ms + rxe_delete_ms)) ms after $fault; the outage: $outage_ms ms"
	[[ -n $dir ]] || return 0
	t=$(now_ms)
	wait_ctrl_state "$dir" '^live$' "${outage_live_ms:-20000}"
	log "the controller is live again $(($(now_ms) - t)) ms later: $(jq -c '.controller' "$dir/stats")"
}

# Riding out an outage may cost this much more than the outage (issue 24): a target back within a
# minute is found within about a second, and reconnecting takes the rest.
STALL_MARGIN_MS=2000

# check_stall WHAT STALL_MS: the longest I/O across the last outage (see outage) must not have
# been longer than outage_ms + STALL_MARGIN_MS.
check_stall() {
	[[ $2 =~ ^[0-9]+$ ]] || fail "$1: no stall measured ('$2')"
	log "$1: stall $2 ms over an outage of $outage_ms ms"
	(($2 <= outage_ms + STALL_MARGIN_MS)) ||
		fail "$1: I/O stalled $2 ms over an outage of $outage_ms ms, more than $STALL_MARGIN_MS ms longer"
}

# outage_under_load SUBNQN DIR SECONDS FAULT RESTORE: one outage of SECONDS (see outage) under fio
# verifying through SUBNQN mounted on DIR, then another under nvmefs perf --verify. Both must run
# to their end with no I/O error and no verify error, and count the reconnect; the mount's stats
# count no failed request. The longest I/O under fio, and the outage perf measured, are at most
# STALL_MARGIN_MS longer than the outage.
outage_under_load() {
	local nqn=$1 mnt=$2 secs=$3 fault=$4 restore=$5 reconnects errors
	# The default reconnect delay (10 s), as a user has it: the schedule must find a target that
	# is back in about a second, not at its next doubled pause.
	log "fio through the mount across a $secs s outage ($fault)"
	nvmefs_mount "$nqn" "$mnt"
	[[ $(nvmefs_ctrl_stat "$mnt" state) == live ]] ||
		fail "a fresh mount's controller is not live: $(jq -c '.controller' "$mnt/stats")"
	fio_load_start mount "$mnt/n1" 60
	sleep 4
	load_running mount || fail "fio ended before the outage: $(cat /tmp/fio-mount.err)"
	outage "$secs" "$mnt" "$fault" "$restore"
	load_running mount || fail "fio ended before the controller was back (it runs 60 s): $(cat /tmp/fio-mount.err)"
	# The controller is live again: 3 s of verified I/O through it, and the load has done its part.
	load_stop_after mount 3000
	fio_load_check mount 120
	check_stall "fio through the mount" "$(fio_stall_ms /tmp/fio-mount.json)"
	reconnects=$(nvmefs_ctrl_stat "$mnt" reconnects)
	((reconnects >= 1)) || fail "the mount's stats count $reconnects reconnects: $(jq -c '.controller' "$mnt/stats")"
	errors=$(nvmefs_stats "$mnt" .total.errors)
	[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests: $(jq -c 'del(.queues)' "$mnt/stats")"
	nvmefs_unmount "$mnt"

	log "nvmefs perf --verify across a $secs s outage ($fault)"
	perf_load_start outage 50
	wait_progress "${load_pids[outage]}" /tmp/perf-outage.err 3
	outage "$secs" '' "$fault" "$restore"
	load_running outage || fail "perf ended during the outage: $(cat /tmp/perf-outage.err)"
	# Once perf's I/O flows again (a progress line after the restore counts I/Os: its controller
	# is back), 2 s more of it; a perf still held 20 s later runs to its end, and perf_load_check
	# says what went wrong.
	if wait_until 20000 perf_flowing outage "$(perf_lines outage)"; then
		load_stop_after outage 2000
	fi
	perf_load_check outage 120 1
	check_stall "perf --verify (its longest outage)" "$(perf_longest_outage_ms /tmp/perf-outage.json)"
}

# io_loop_start NAME FILE MODE: starts, in the background, a loop of 4 KiB O_DIRECT reads (MODE
# read) or writes of random data (MODE write) at random offsets in the first 32 MiB of FILE, one at
# a time, until the first error. It prints "running" once started, then at the first error
# "error_ms <when, as now_ms> <strerror>" and exits; /tmp/io-NAME.out has its output.
io_loop_start() {
	local name=$1 file=$2 mode=$3
	python3 - "$file" "$mode" >"/tmp/io-$name.out" 2>&1 <<'PY' &
import mmap, os, random, sys, time
path, mode = sys.argv[1], sys.argv[2]
fd = os.open(path, (os.O_RDONLY if mode == "read" else os.O_WRONLY) | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
span = min(os.lseek(fd, 0, os.SEEK_END), 32 << 20) // 4096
print("running", flush=True)
while True:
    try:
        if mode == "read":
            os.preadv(fd, [buf], random.randrange(span) * 4096)
        else:
            buf[:] = os.urandom(4096)
            os.pwritev(fd, [buf], random.randrange(span) * 4096)
    except OSError as e:
        print(f"error_ms {time.time_ns() // 1000000} {e.strerror}", flush=True)
        sys.exit(0)
PY
	load_pids[io-$name]=$!
	wait_until 10000 grep -q running "/tmp/io-$name.out" ||
		fail "the $mode loop on $file did not start: $(cat "/tmp/io-$name.out")"
}

# io_loop_error NAME MAX_S: waits (at most MAX_S seconds) for io_loop_start NAME to hit its error;
# sets io_err_at (when, as now_ms) and io_err (its strerror).
io_loop_error() {
	local name=$1 line
	load_wait "io-$name" "$2" || fail "the I/O loop $name failed: $(cat "/tmp/io-$name.out")"
	line=$(sed -n 's/^error_ms //p' "/tmp/io-$name.out")
	[[ -n $line ]] || fail "the I/O loop $name ended without an error: $(cat "/tmp/io-$name.out")"
	# shellcheck disable=SC2034 # for the caller
	io_err_at=${line%% *} io_err=${line#* }
}

# io_fails_eio WHAT MAX_MS DD_ARGS...: the dd must fail with EIO within MAX_MS (it is killed after
# 60 s).
io_fails_eio() {
	local what=$1 max_ms=$2 out rc=0 start elapsed
	shift 2
	start=$(now_ms)
	out=$(timeout -s KILL 60 dd "$@" status=none 2>&1) || rc=$?
	elapsed=$(($(now_ms) - start))
	((rc != 0)) || fail "$what succeeded; it should have failed with EIO"
	((rc != 137)) || fail "$what hung: killed after 60 s"
	[[ $out == *"Input/output error"* ]] || fail "$what failed, but not with EIO: $out"
	((elapsed <= max_ms)) || fail "$what took $elapsed ms to fail, more than $max_ms"
	log "$what failed with EIO after $elapsed ms"
}

# verify_loop_start NAME FILE: starts, in the background, a light verifying load on FILE: one
# 4 KiB O_DIRECT write of fresh random data at a random offset in its first 32 MiB, then one read
# of a block written before, checked against what was written; about 50 of each a second. It ends
# at the first error or mismatch (exit 1), or when verify_loop_stop NAME asks (exit 0); its output
# is in /tmp/verify-NAME.out.
verify_loop_start() {
	local name=$1 file=$2
	rm -f "/tmp/verify-$name.stop"
	python3 - "$file" "/tmp/verify-$name.stop" >"/tmp/verify-$name.out" 2>&1 <<'PY' &
import mmap, os, random, sys, time
path, stop = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
span = min(os.lseek(fd, 0, os.SEEK_END), 32 << 20) // 4096
written = {}                    # block -> seed of its content
writes = reads = 0
print("running", flush=True)
try:
    while not os.path.exists(stop):
        block, seed = random.randrange(span), random.getrandbits(64)
        buf[:] = random.Random(seed).randbytes(4096)
        os.pwritev(fd, [buf], block * 4096)
        written[block] = seed
        writes += 1
        block = random.choice(list(written)) if len(written) < 64 else random.choice(tuple(written))
        os.preadv(fd, [buf], block * 4096)
        reads += 1
        if buf[:] != random.Random(written[block]).randbytes(4096):
            print(f"mismatch at byte {block * 4096} after {writes} writes", flush=True)
            sys.exit(1)
        time.sleep(0.02)
except OSError as e:
    print(f"error after {writes} writes and {reads} reads: {e.strerror}", flush=True)
    sys.exit(1)
print(f"ok {writes} writes {reads} reads", flush=True)
PY
	load_pids[verify-$name]=$!
	wait_until 10000 grep -q running "/tmp/verify-$name.out" ||
		fail "the verifying load on $file did not start: $(cat "/tmp/verify-$name.out")"
}

# verify_loop_stop NAME: ends verify_loop_start NAME and fails unless it found no error and no
# mismatch; logs what it did.
verify_loop_stop() {
	local name=$1 rc=0
	: >"/tmp/verify-$name.stop"
	load_wait "verify-$name" 60 || rc=$?
	((rc == 0)) || fail "the verifying load on the mount failed: $(tail -n 3 "/tmp/verify-$name.out")"
	log "verifying load: $(tail -n 1 "/tmp/verify-$name.out")"
}

# The state of soft-RoCE's GSI queue pair (QP1), which carries the RDMA CM's connection messages
# for every initiator and the target: RTS, or ERR once it broke.
rxe_gsi_state() { rdma res show qp | sed -n 's/.* type GSI state \([A-Z]*\) .*/\1/p' | head -n 1; }

# rxe_recreate MAX_S: deletes the soft-RoCE device and adds it again on the same netdev, then
# makes nvmet listen again (a subsystem unlinked from each port and linked back), as a NIC reset
# does. Needed after link_down: soft-RoCE moves its GSI queue pair to the error state the first
# time a connection message is sent while its port is down (it cannot route the packet), and that
# queue pair never recovers, so no initiator could connect again on that device. Deleting the
# device waits until every user has let go of it (RDMA_CM_EVENT_DEVICE_REMOVAL); returns 1 if
# that takes more than MAX_S seconds: the delete goes on in the background, and calling
# rxe_recreate again waits for it and finishes the job. Sets rxe_delete_ms: how long the delete
# took, mostly waiting for its users.
rxe_delete_pid=
rxe_delete_ms=0
rxe_recreate() {
	local max_s=$1 p nqn start
	start=$(now_ms)
	if [[ -z $rxe_delete_pid ]]; then
		rxe_netdev_saved=$(rxe_netdev)
		rxe_ibdev_saved=$(rdma link show | sed -n 's/^link \([^/]*\)\/.* netdev .*/\1/p' | head -n 1)
		testbed_retire
		rdma link delete "$rxe_ibdev_saved" &
		rxe_delete_pid=$!
	fi
	wait_gone "$rxe_delete_pid" $((max_s * 1000)) || return 1
	wait "$rxe_delete_pid" || fail "rdma link delete $rxe_ibdev_saved failed"
	rxe_delete_pid=
	rxe_delete_ms=$(($(now_ms) - start))
	rdma link add "$rxe_ibdev_saved" type rxe netdev "$rxe_netdev_saved" ||
		fail "rdma link add $rxe_ibdev_saved type rxe netdev $rxe_netdev_saved failed"
	link_up
	# nvmet's listener went with the device: disabling and enabling each port makes a new one.
	for p in "$NVMEFS_TEST_NVMET"/ports/*; do
		for nqn in "$p"/subsystems/*; do
			[[ -L $nqn ]] || continue
			port_unlink "${nqn##*/}" "${p##*/}"
			port_link "${nqn##*/}" "${p##*/}"
		done
	done
	log "$rxe_ibdev_saved deleted and added again on $rxe_netdev_saved in $(($(now_ms) - start)) ms; its GSI QP is $(rxe_gsi_state)"
}

# The processes that have an RDMA device open, as "PID (command)".
rdma_device_users() {
	local f pid users=()
	for f in /proc/[0-9]*/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) == /dev/infiniband/* ]] || continue
		pid=${f#/proc/}
		pid=${pid%%/*}
		[[ " ${users[*]} " == *" $pid "* ]] || users+=("$pid")
	done
	for pid in "${users[@]}"; do echo -n "$pid ($(cat "/proc/$pid/comm" 2>/dev/null)) "; done
}

# link_restore [MAX_S]: link_up, then, if soft-RoCE's GSI queue pair broke while the link was down
# (see rxe_recreate), the device re-created, giving its users MAX_S seconds (default 30) to let go
# of it; fails if they do not.
link_restore() {
	link_up
	[[ $(rxe_gsi_state) == ERR ]] || return 0
	log "soft-RoCE's GSI queue pair broke while the link was down: re-creating the device, as a NIC reset"
	rxe_recreate "${1:-30}" ||
		fail "the RDMA device could not be deleted within ${1:-30} s: $(rdma_device_users)still hold it open; an initiator must let go of a removed device (RDMA_CM_EVENT_DEVICE_REMOVAL) and reconnect on the new one"
}
