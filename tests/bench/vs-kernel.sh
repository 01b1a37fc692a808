#!/usr/bin/env bash
# Benchmark (not a test): in one testbed boot, on the same namespace, fio (libaio, O_DIRECT, one
# job) on the kernel initiator's block device against `nvmefs perf` (one thread, the same total
# depth on one queue, then spread over --spread queues, then with no tuning flags at all: the
# layout it chooses) and against the same fio job on the file that `nvmefs mount` serves, for the
# workloads of doc/PERFORMANCE.md.  Prints three tables (IOPS, MiB/s, mean latency); ratios to the
# kernel are what count (everything in the guest is emulated).  With --floor, the same fio job
# also runs on tests/bench/fuse-null's file (a FUSE server with no backend: FUSE's own round
# trip), and issue #26's table follows: the mount, that floor and nvmefs perf against the kernel
# (`make bench-mount`).  The testbed boots the kernel NVMEFS_TESTBED_KERNEL names, if set.  Where
# that kernel offers FUSE over io_uring and nvmefs was built with libfuse 3.18 (make check-ring's
# ring-build/), the fio job also runs on a second mount with -o io_uring=on (column ring), beside
# the default mount's (/dev/fuse), in the same boot.  Where the fio engine is built (configure
# --with-fio), the same fio job also runs through it as a thread (column engine, issue #37 item 2),
# straight on libnvmefs, with its ratio to the kernel and to the mounted file.
#
#   tests/bench/vs-kernel.sh [--time SEC] [--runs N] [--spread QUEUES] [--cpu CPU] [--stat best|median]
#                            [--mtu BYTES] [--rkey-per-io auto|on|off] [--floor] [--transport rdma|tcp]
#                            [--digests] [--tls]
# Each cell is the best (or the median) of N runs.  nvmefs perf runs pinned to CPU (default 0;
# 'none' leaves it unpinned); the kernel's cell is the better of fio unpinned and fio pinned to
# the same CPU.  nvmefs perf polls at queue depth 1 and sleeps on completion events at higher
# depths.  --mtu is the testbed's link MTU (its default: 9000).  --rkey-per-io goes to nvmefs perf
# and mount (their default: auto; RDMA only).  --transport is what every initiator runs over: the
# kernel's nvme-rdma or nvme-tcp, nvmefs perf and mount with -t (default rdma); --digests (TCP
# only) has every initiator ask for header and data digests (-g -G), to show what they cost; --tls
# (TCP only) has the testbed's port require TLS 1.3 with a pre-shared key (its --tls, tlshd doing
# the target's handshakes) and every initiator use it: the kernel's nvme-tcp through the same
# tlshd, nvmefs perf and mount with --tls-key (the fio engine's column is left out); then a table
# of TLS's cost to each initiator: the kernel's fio and nvmefs perf at 4k QD1 and QD32 again, over
# a plain NVMe/TCP port the script adds to the target, against their runs over TLS.  Run from the
# build tree after `make`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
time_s=10 runs=1 spread=4 cpu=0 stat=best mtu= rkey=auto floor=0 transport=rdma digests=0 tls=0
while (($#)); do
	case $1 in
	--time) time_s=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--spread) spread=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	--stat) stat=$2; shift 2 ;;
	--mtu) mtu=$2; shift 2 ;;
	--rkey-per-io) rkey=$2; shift 2 ;;
	--floor) floor=1; shift ;;
	--transport) transport=$2; shift 2 ;;
	--digests) digests=1; shift ;;
	--tls) tls=1; shift ;;
	-h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs-kernel.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done
[[ $stat == best || $stat == median ]] || { echo "vs-kernel.sh: --stat is best or median" >&2; exit 2; }
[[ $cpu == none || $cpu =~ ^[0-9]+$ ]] || { echo "vs-kernel.sh: --cpu is a CPU number or none" >&2; exit 2; }
[[ $transport == rdma || $transport == tcp ]] || { echo "vs-kernel.sh: --transport is rdma or tcp" >&2; exit 2; }
((!digests)) || [[ $transport == tcp ]] || { echo "vs-kernel.sh: --digests is NVMe/TCP's: give --transport tcp" >&2; exit 2; }
((!tls)) || [[ $transport == tcp ]] || { echo "vs-kernel.sh: --tls is NVMe/TCP's: give --transport tcp" >&2; exit 2; }
# The testbed's TLS key (tests/integration/test-tls.sh's).
tls_key=NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:

if [[ ${NVMEFS_TESTBED:-} != 1 ]]; then
	[[ -x $top/src/cli/nvmefs ]] || { echo "vs-kernel.sh: build first (make)" >&2; exit 1; }
	((!floor)) || [[ -x $top/tests/bench/fuse-null ]] ||
		{ echo "vs-kernel.sh: --floor needs tests/bench/fuse-null: build first (make)" >&2; exit 1; }
	floor_arg=()
	((floor)) && floor_arg=(--floor)
	((digests)) && floor_arg+=(--digests)
	testbed_tls=()
	((tls)) && floor_arg+=(--tls) testbed_tls=(--tls "$tls_key")
	exec "$top/contrib/nvmefs-testbed" ${mtu:+--mtu "$mtu"} "${testbed_tls[@]}" --ns-size 1G --memory 3072 --timeout 3600 -- \
		bash "$0" --time "$time_s" --runs "$runs" --spread "$spread" --cpu "$cpu" --stat "$stat" \
		--rkey-per-io "$rkey" --transport "$transport" "${floor_arg[@]}"
fi

nvmefs=$top/src/cli/nvmefs
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
nqn=${NVMEFS_TEST_SUBNQNS%% *}
addr=$NVMEFS_TEST_TRADDR
workloads=("${bench_workloads[@]}")

# Options of nvmefs perf and mount: remote keys over RDMA; over TCP, digests if asked.
perf_opts=() mount_opts=() digest_opts=()
if [[ $transport == rdma ]]; then
	perf_opts=(--rkey-per-io="$rkey")
	mount_opts=(-o rkey_per_io="$rkey")
elif ((digests)); then
	digest_opts=(-g -G)
	perf_opts=("${digest_opts[@]}")
	mount_opts=("${digest_opts[@]}")
fi
tls_opts=()
if ((tls)); then
	(umask 077 && printf '%s\n' "$NVMEFS_TEST_TLS_KEY" >/tmp/vs-kernel-tls.key)
	tls_opts=(--tls-key /tmp/vs-kernel-tls.key)
	perf_opts+=("${tls_opts[@]}")
	mount_opts+=("${tls_opts[@]}")
	# nvme-cli 2.3 has no --tls: the kernel's own options.
	(exec 3<>/dev/nvme-fabrics &&
		echo "transport=tcp,traddr=$addr,trsvcid=$NVMEFS_TEST_TRSVCID,nqn=$nqn,hostnqn=$(</etc/nvme/hostnqn),hostid=$(</etc/nvme/hostid),tls" >&3)
else
	nvme connect -t "$transport" -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "${digest_opts[@]}" >/dev/null
fi
dev=$(kernel_bdev vs-kernel.sh "$nqn")

mnt=/tmp/nvmefs-bench
mkdir -p "$mnt"
"$nvmefs" mount -t "$transport" -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "${mount_opts[@]}" "$mnt"
nullmnt=/tmp/nvmefs-bench-null ringmnt=/tmp/nvmefs-bench-ring ring=0
# errexit stays out of the clean-up: a mount that is not there to unmount would make a good run
# exit 1.
trap 'set +e; fusermount3 -u "$mnt" 2>/dev/null; fusermount3 -u "$nullmnt" 2>/dev/null
	fusermount3 -u "$ringmnt" 2>/dev/null; nvme disconnect-all >/dev/null 2>&1 || true' EXIT
if [[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]]; then
	mkdir -p "$ringmnt"
	if "$nvmefs" mount -t "$transport" -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "${mount_opts[@]}" \
		-o io_uring=on "$ringmnt" 2>/tmp/vs-kernel-ring.err; then
		ring=1
	else
		echo "vs-kernel.sh: the kernel offers FUSE over io_uring but -o io_uring=on failed, no ring" \
			"column: $(tail -n 1 /tmp/vs-kernel-ring.err)" >&2
	fi
fi
if ((floor)); then
	# The same size as the namespace, requests of the mount's default max_io.
	mkdir -p "$nullmnt"
	"$top/tests/bench/fuse-null" "$nullmnt" "$(($(blockdev --getsize64 "$dev") >> 20))" 128 &
	wait_for -e "$nullmnt/n1" || { echo "vs-kernel.sh: fuse-null did not mount within 10 s" >&2; exit 1; }
fi

# The fio engine's options where it is built, after the job's own.
engine_so=$top/src/fio/.libs/fio-nvmefs.so engine=()
[[ -f $engine_so && $digests == 0 && $tls == 0 ]] &&
	mapfile -t engine < <(engine_args "$engine_so" "$transport" "$addr" "$NVMEFS_TEST_TRSVCID" "$nqn")
pin=()
[[ $cpu == none ]] || pin=(--cpus="$cpu")
[[ $cpu == none ]] && pin=(--cpus=none)
nvmefs_run() { # rw bs qd queues: one thread, qd in flight over the queues
	local mode=event
	(($3 == 1)) && mode=poll
	"$nvmefs" perf "${pin[@]}" -t "$transport" -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw="$1" \
		--bs="$2" --qd="$3" --queues="$4" --threads=1 --time="$time_s" --mode="$mode" "${perf_opts[@]}" -o json \
		2>/dev/null | perf_figures
}
# What a user who types only the workload and the depth gets.
nvmefs_defaults() { # rw bs qd
	local rk=("${tls_opts[@]}")
	[[ $rkey == auto && $digests == 0 ]] || rk=("${perf_opts[@]}")
	"$nvmefs" perf -t "$transport" -a "$addr" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" --rw="$1" --bs="$2" --qd="$3" \
		--time="$time_s" "${rk[@]}" -o json 2>/dev/null | perf_figures
}
# Runs alternate between the initiators, so that a slow spell of the emulator is not all one's.
declare -A res
for w in "${workloads[@]}"; do
	read -r name rw bs qd <<<"$w"
	k= kp= p1= pn= pd= f= z= u= e=
	spreads=$((qd >= spread && qd % spread == 0))
	for ((r = 0; r < runs; r++)); do
		k+=$(fio_run "$dev" "$rw" "$bs" "$qd")$'\n'
		[[ $cpu == none ]] || kp+=$(fio_run "$dev" "$rw" "$bs" "$qd" --cpus_allowed="$cpu")$'\n'
		p1+=$(nvmefs_run "$rw" "$bs" "$qd" 1)$'\n'
		((spreads)) && pn+=$(nvmefs_run "$rw" "$bs" "$qd" "$spread")$'\n'
		pd+=$(nvmefs_defaults "$rw" "$bs" "$qd")$'\n'
		f+=$(fio_run "$mnt/n1" "$rw" "$bs" "$qd")$'\n'
		((floor)) && z+=$(fio_run "$nullmnt/n1" "$rw" "$bs" "$qd")$'\n'
		((ring)) && u+=$(fio_run "$ringmnt/n1" "$rw" "$bs" "$qd")$'\n'
		((${#engine[@]})) && e+=$(fio_run ns1 "$rw" "$bs" "$qd" "${engine[@]}")$'\n'
	done
	res[$name k]=$(pick <<<"$k")
	[[ $cpu == none ]] || res[$name k]=$(better "${res[$name k]}" "$(pick <<<"$kp")")
	res[$name p1]=$(pick <<<"$p1")
	res[$name pn]=-
	((spreads)) && res[$name pn]=$(pick <<<"$pn")
	res[$name pd]=$(pick <<<"$pd")
	res[$name f]=$(pick <<<"$f")
	res[$name z]=-
	((floor)) && res[$name z]=$(pick <<<"$z")
	res[$name u]=-
	((ring)) && res[$name u]=$(pick <<<"$u")
	res[$name e]=-
	((${#engine[@]})) && res[$name e]=$(pick <<<"$e")
done

# table TITLE FIELD FORMAT: FIELD 1 IOPS, 2 MiB/s, 3 mean latency (us)
table() {
	printf '\n%-18s | %9s | %9s %6s | %9s %6s | %9s %6s | %9s %6s' "$1" kernel perf ratio \
		"perf/${spread}q" ratio defaults ratio fuse ratio
	((floor)) && printf ' | %9s %6s' null ratio
	((ring)) && printf ' | %9s %6s' ring ratio
	((${#engine[@]})) && printf ' | %9s %6s %7s' engine ratio "/fuse"
	echo
	for w in "${workloads[@]}"; do
		read -r name _ <<<"$w"
		awk -v name="$name" -v f="$2" -v fmt="$3" -v k="${res[$name k]}" -v p1="${res[$name p1]}" \
			-v pn="${res[$name pn]}" -v pd="${res[$name pd]}" -v fu="${res[$name f]}" \
			-v z="${res[$name z]}" -v floor="$floor" -v u="${res[$name u]}" -v ring="$ring" \
			-v e="${res[$name e]}" -v engine="${#engine[@]}" \
			'function cell(v, kv) {
				if (v == "-") return sprintf(" %9s %6s", "-", "")
				split(v, a, " ")
				return sprintf(" " fmt " %5.2fx", a[f], a[f] / kv)
			}
			BEGIN {
				split(k, ka, " ")
				printf "%-18s | " fmt " |%s |%s |%s |%s", name, ka[f], cell(p1, ka[f]),
					cell(pn, ka[f]), cell(pd, ka[f]), cell(fu, ka[f])
				if (floor) printf " |%s", cell(z, ka[f])
				if (ring) printf " |%s", cell(u, ka[f])
				if (engine) {
					split(fu, fa, " ")
					split(e, ea, " ")
					printf " |%s %6.2fx", cell(e, ka[f]), ea[f] / fa[f]
				}
				printf "\n"
			}'
	done
}
table IOPS 1 '%9.0f'
table MiB/s 2 '%9.1f'
table 'mean latency, us' 3 '%9.0f'
echo
pinned="unpinned"
[[ $cpu == none ]] || pinned="pinned to CPU $cpu"
echo "kernel: fio (libaio, O_DIRECT, one job) on the kernel initiator's block device (its 2 I/O"
[[ $cpu == none ]] || echo "queues), the better of fio unpinned and fio pinned to CPU $cpu;"
echo "perf: nvmefs perf ($pinned), one thread, the whole depth on one queue; perf/${spread}q: one"
echo "thread, the same total depth spread over $spread queues; defaults: nvmefs perf with only"
echo "--rw, --bs and --qd (the layout it chooses: nvmefs-perf(1)); fuse: the fio job (unpinned) on"
echo "the nvmefs mount's file n1 (its default queues and workers).  nvmefs perf polls at depth 1,"
echo "sleeps on events otherwise.  Ratios are to the kernel: for IOPS and MiB/s higher is better,"
echo "for latency lower."
((floor)) && echo "null: the fio job on tests/bench/fuse-null's file (no backend: zeros, success)."
((ring)) && echo "ring: the fio job on a second mount with -o io_uring=on (FUSE over io_uring); fuse's mount takes the default, /dev/fuse."
((${#engine[@]})) && echo "engine: the fio job (unpinned, a thread) through the fio engine fio-nvmefs.so (its defaults: polling at depth 1, events above); /fuse: its ratio to fuse."
if [[ $transport == rdma ]]; then
	echo "Over RDMA (the kernel's nvme-rdma); remote keys: --rkey-per-io=$rkey."
	echo "${time_s}s per run, $stat of $runs; soft-RoCE link MTU $(cat /sys/class/net/nvmefs0/mtu)\
 (RDMA MTU $(ibv_devinfo -d rxe0 | awk '/active_mtu/ { print $2 }')); kernel $(uname -r)."
else
	echo "Over TCP (the kernel's nvme-tcp; nvmefs -t tcp); header and data digests $( ((digests)) && echo on || echo off)."
	((tls)) && echo "TLS 1.3 with a PSK on every queue of every initiator: nvmefs's suite $(jq -r .controller.tls "$mnt/stats"), OpenSSL in user space; the kernel's kTLS after tlshd's handshake."
	echo "${time_s}s per run, $stat of $runs; link MTU $(cat /sys/class/net/nvmefs0/mtu); kernel $(uname -r)."
fi
if ((tls)); then
	# TLS's cost: the same initiators over a plain NVMe/TCP port (nvmet port 198, the subsystem
	# linked to it), the kernel connected there instead, after the TLS runs above.
	fusermount3 -u "$mnt"
	nvme disconnect-all >/dev/null
	plain=$((NVMEFS_TEST_TRSVCID + 40)) d=$NVMEFS_TEST_NVMET/ports/198
	mkdir "$d"
	echo tcp >"$d/addr_trtype"
	echo ipv4 >"$d/addr_adrfam"
	echo "$addr" >"$d/addr_traddr"
	echo "$plain" >"$d/addr_trsvcid"
	ln -s "$NVMEFS_TEST_NVMET/subsystems/$nqn" "$d/subsystems/$nqn"
	nvme connect -t tcp -a "$addr" -s "$plain" -n "$nqn" >/dev/null
	dev=$(kernel_bdev vs-kernel.sh "$nqn")
	NVMEFS_TEST_TRSVCID=$plain perf_opts=() tls_opts=()
	echo
	echo "TLS's cost: each initiator over TLS against itself over plain NVMe/TCP in this boot (the plain"
	echo "runs after the TLS ones); for IOPS below 1 is TLS's cost, for latency above 1."
	echo
	printf '%-18s | %-29s | %-29s\n' "" "kernel: TLS, plain, TLS/plain" "perf: TLS, plain, TLS/plain"
	for w in 4k-randread-qd1 4k-randread-qd32; do
		for x in "${workloads[@]}"; do
			if [[ $x == "$w "* ]]; then read -r name rw bs qd <<<"$x"; fi
		done
		k= kp= p1=
		for ((r = 0; r < runs; r++)); do
			k+=$(fio_run "$dev" "$rw" "$bs" "$qd")$'\n'
			[[ $cpu == none ]] || kp+=$(fio_run "$dev" "$rw" "$bs" "$qd" --cpus_allowed="$cpu")$'\n'
			p1+=$(nvmefs_run "$rw" "$bs" "$qd" 1)$'\n'
		done
		kk=$(pick <<<"$k")
		[[ $cpu == none ]] || kk=$(better "$kk" "$(pick <<<"$kp")")
		f=1 fmt='%9.0f IOPS'
		((qd == 1)) && f=3 fmt='%6.0f us'
		awk -v name="$name" -v f="$f" -v fmt="$fmt" -v kt="${res[$name k]}" -v kp="$kk" \
			-v pt="${res[$name p1]}" -v pp="$(pick <<<"$p1")" 'BEGIN {
				split(kt, a, " "); split(kp, b, " "); split(pt, c, " "); split(pp, d, " ")
				printf "%-18s | " fmt " " fmt " %5.2fx | " fmt " " fmt " %5.2fx\n", name,
					a[f], b[f], a[f] / b[f], c[f], d[f], c[f] / d[f]
			}'
	done
fi
((floor)) || exit 0

# Issue #26's table: one column of it, this boot's kernel, with the floor beside the mount.
# row LABEL WORKLOAD FIELD FORMAT GOAL: FIELD 1 IOPS, 2 MiB/s, 3 mean latency (us)
row() {
	awk -v label="$1" -v f="$3" -v fmt="$4" -v goal="$5" -v k="${res[$2 k]}" -v fu="${res[$2 f]}" \
		-v z="${res[$2 z]}" -v p="${res[$2 p1]}" 'BEGIN {
			split(k, ka, " "); split(fu, fa, " "); split(z, za, " "); split(p, pa, " ")
			printf "| %-29s | " fmt " | %5.2fx | %-5s | %5.2fx | %5.2fx |\n", label, ka[f],
				fa[f] / ka[f], goal, za[f] / ka[f], pa[f] / ka[f]
		}'
}
echo
echo "Issue #26, kernel $(uname -r): through the mounted file, as a ratio to the kernel initiator's"
echo "block device in this boot; beside it the floor: FUSE with no backend (null) and nvmefs perf."
echo
echo "| through the mounted file      |    kernel | mount  | goal  | null   | perf   |"
echo "|---|---|---|---|---|---|"
row "4k randread QD1 mean latency" 4k-randread-qd1 3 '%6.0f us' '<=1.0'
row "4k randread QD32 IOPS" 4k-randread-qd32 1 '%9.0f' '>=0.9'
row "4k randwrite QD32 IOPS" 4k-randwrite-qd32 1 '%9.0f' '>=0.9'
row "128k read QD16 bandwidth" 128k-read-qd16 2 '%3.0f MiB/s' '>=1.0'
row "128k write QD16 bandwidth" 128k-write-qd16 2 '%3.0f MiB/s' '>=1.0'
echo
awk -v k="${res[4k-randread-qd1 k]}" -v fu="${res[4k-randread-qd1 f]}" -v z="${res[4k-randread-qd1 z]}" \
	-v p="${res[4k-randread-qd1 p1]}" 'BEGIN {
		split(k, ka, " "); split(fu, fa, " "); split(z, za, " "); split(p, pa, " ")
		printf "QD1: FUSE'"'"'s round trip (null, %.0f us) + the NVMe path (perf, %.0f us) = %.0f us, %.2fx the\n",
			za[3], pa[3], za[3] + pa[3], (za[3] + pa[3]) / ka[3]
		printf "kernel'"'"'s %.0f us; the mount took %.0f us, %.2fx that sum.\n", ka[3], fa[3],
			fa[3] / (za[3] + pa[3])
	}'
echo "mount: nvmefs mount's defaults; null: tests/bench/fuse-null (libfuse's multi-threaded loop,"
echo "direct I/O, requests of up to 128 KiB); perf: nvmefs perf, one thread, one queue (polling at"
echo "QD1).  Goals are the mount's (issue #26)."
