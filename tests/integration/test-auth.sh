#!/usr/bin/env bash
# testbed: --ns-size 64M --allow-host nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a2 --dhchap-key DHHC-1:00:2u+6aUn5+Cifmx3l87ETY6Xr3p0E/ClCO5CyWmYNsLoL2NyH:
# DH-HMAC-CHAP against nvmet, with the kernel initiator beside as the reference:
# - every hash (SHA-256, -384, -512) and every DH group (null, ffdhe2048 ... ffdhe8192) that nvmet
#   is set to ask for, with a host secret and with a controller secret too (bidirectional): 6
#   rounds, each group once with the hashes in turn, the first three groups with a host secret
#   and the last three bidirectional, so each hash goes both ways (all 18 pairs each way, 36
#   rounds, in make check-long): the kernel initiator connects, and so does nvmefs identify, over
#   keys of every kind 'nvme gen-dhchap-key' makes (hash indicators 00 to 03, 32 to 64 bytes);
# - perf --verify and a mount with fio verify, bidirectional, SHA-512 and ffdhe8192, the secrets
#   read from files, 4 I/O queues with a 2 s keep-alive timeout (each authentication step must
#   take less); the mount reconnects (authenticating again) across a port outage; the
#   secret then shows in no process's arguments or environment, in neither
#   the info nor the stats file, and not in the log;
# - wrong host secret, wrong controller secret, no secret, a corrupted key string: each fails in
#   bounded time with its own one-line message, and leaves no queue (RDMA queue pair, TCP
#   connection) behind.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -rf /tmp/auth-*' EXIT
nqn=${subnqns[0]}
host=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000a2
hostdir=$NVMEFS_TEST_NVMET/hosts/$host
[[ -d $hostdir ]] || fail "the testbed did not make $hostdir"
to=(--timeout 10000)
nv_identify() { "$NVMEFS" identify -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -q "$host" "${to[@]}" "$@"; }

# One key of each kind; what nvmet holds is set for each round.
keys=()
for m in 0 1 2 3; do
	len=$((m == 0 ? 32 : 16 + 16 * m))
	keys+=("$(nvme gen-dhchap-key -m "$m" -l "$len" -n "$host")") || fail "nvme gen-dhchap-key -m $m failed"
done
ctrl_key=$(nvme gen-dhchap-key -m 3 -l 64 -n "$nqn") || fail "nvme gen-dhchap-key for the controller failed"

# set_target HASH GROUP KEY [CTRL_KEY]
set_target() {
	echo "hmac($1)" >"$hostdir/dhchap_hash"
	echo "$2" >"$hostdir/dhchap_dhgroup"
	echo "$3" >"$hostdir/dhchap_key"
	[[ -z ${4:-} ]] || echo "$4" >"$hostdir/dhchap_ctrl_key"
}

kernel_auth() {
	local dev
	dev=$(kernel_connect "$nqn" 1 --hostnqn "$host" "$@")
	blockdev --getsize64 "$dev" >/dev/null || fail "the kernel initiator's $dev does not answer"
	kernel_disconnect_all
}

# Every round: the kernel initiator, then nvmefs, with the same secrets. Each round costs two
# connections of a few seconds: make check takes each group once, with the hashes in turn, half
# the groups with a host secret and half bidirectional (each hash both ways).
all_pairs=$(scaled 0 1)
hashes=(sha256 sha384 sha512)
groups=(null ffdhe2048 ffdhe3072 ffdhe4096 ffdhe6144 ffdhe8192)
i=0
rounds=0
for mode in host bidirectional; do
	# make check: groups 0-2 with a host secret, 3-5 bidirectional.
	[[ $mode == host ]] && first_half=1 || first_half=0
	for ((h = 0; h < ${#hashes[@]}; h++)); do
		for ((g = 0; g < ${#groups[@]}; g++)); do
			((all_pairs || (g % ${#hashes[@]} == h && (g < ${#groups[@]} / 2) == first_half))) || continue
			hash=${hashes[h]} group=${groups[g]}
			key=${keys[i++ % 4]}
			rounds=$((rounds + 1))
			args=(--dhchap-secret "$key")
			if [[ $mode == bidirectional ]]; then
				set_target "$hash" "$group" "$key" "$ctrl_key"
				args+=(--dhchap-ctrl-secret "$ctrl_key")
			else
				set_target "$hash" "$group" "$key"
			fi
			start=$(now_ms)
			kernel_auth "${args[@]}"
			kms=$(($(now_ms) - start))
			start=$(now_ms)
			out=$(nv_identify "${args[@]}" -o json 2>&1) ||
				fail "$mode, $hash, $group, key ${key:0:9}: nvmefs identify failed where the kernel initiator connected: $out"
			jq -e '.sn == "nvmefs00000000000001"' <<<"$out" >/dev/null ||
				fail "$mode, $hash, $group: identify printed no serial number: $out"
			log "$mode $hash $group key ${key:0:9}: kernel $kms ms, nvmefs $(($(now_ms) - start)) ms"
		done
	done
done
((rounds == (all_pairs ? 36 : 6))) || fail "$rounds rounds ran, not $((all_pairs ? 36 : 6))"

log "perf --verify and a mount with fio verify, bidirectional, sha512, ffdhe8192, secrets in files"
set_target sha512 ffdhe8192 "${keys[3]}" "$ctrl_key"
umask 077
echo "${keys[3]}" >/tmp/auth-host
echo "$ctrl_key" >/tmp/auth-ctrl
files=(--dhchap-secret-file /tmp/auth-host --dhchap-ctrl-secret-file /tmp/auth-ctrl)
out=$("$NVMEFS" perf -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" -q "$host" -o json \
	"${files[@]}" --verify --queues 2 --rw randrw --bs 4k --size 8M --time 1 2>/tmp/auth-err) ||
	fail "perf --verify over authenticated queues failed: $(cat /tmp/auth-err) $out"
jq -e '.errors == 0 and .iops > 0 and .verify.mismatches == 0 and .verify.blocks_read > 0' <<<"$out" >/dev/null ||
	fail "perf --verify over authenticated queues: errors, no I/O or mismatches: $out"
log "-J: nvme-cli's JSON configuration gives the host NQN (no -q), the host's key and the port's controller key"
cat >/tmp/auth-config.json <<EOF
[ { "hostnqn": "$host", "dhchap_key": "${keys[3]}",
    "subsystems": [ { "nqn": "$nqn", "ports": [ { "transport": "$trtype", "traddr": "$NVMEFS_TEST_TRADDR",
      "trsvcid": "$NVMEFS_TEST_TRSVCID", "dhchap_ctrl_key": "$ctrl_key" } ] } ] } ]
EOF
out=$("$NVMEFS" identify -t "$trtype" -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -n "$nqn" "${to[@]}" \
	-J /tmp/auth-config.json -o json 2>&1) || fail "identify with the host and keys from -J failed: $out"
jq -e '.sn == "nvmefs00000000000001"' <<<"$out" >/dev/null || fail "identify with -J printed no serial number: $out"
mnt=/tmp/auth-mnt
syslog_start
# Four I/O queues and a 2 s KATO: nvmet drops an authentication whose next step takes the host
# longer than KATO, so every queue's DH work must stay well inside it (issue 34 item 11: with
# OpenSSL's 8192-bit subgroup check it did not, and this mount failed every time).
start=$(now_ms)
nvmefs_mount "$nqn" "$mnt" -q "$host" -o "dhchap_secret_file=/tmp/auth-host,dhchap_ctrl_secret_file=/tmp/auth-ctrl" -i 4 -k 2
connect_ms=$(($(now_ms) - start))
log "the mount authenticated its admin queue and 4 I/O queues in $connect_ms ms"
pid=$(nvmefs_pid "$mnt")
fio --name=auth --filename="$mnt/n1" --ioengine=libaio --direct=1 --iodepth=8 --rw=randwrite --bs=4k \
	--size=16M --verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 --verify_state_save=0 \
	>/tmp/auth-fio 2>&1 || fail "fio verify through the authenticated mount failed: $(tail -5 /tmp/auth-fio)"
# After a reconnect every queue authenticates again, or the target lets none of it in.
unlink_port() { port_unlink "$nqn"; }
link_port() { port_link "$nqn"; }
# Reconnecting authenticates every queue again: the wait for 'live' grows with what that cost.
outage_live_ms=$((20000 + 2 * connect_ms))
outage 3 "$mnt" unlink_port link_port
(($(nvmefs_ctrl_stat "$mnt" reconnects) >= 1)) || fail "the mount did not count the reconnect: $(cat "$mnt/stats")"
dd if="$mnt/n1" of=/dev/null bs=64k count=256 iflag=direct status=none ||
	fail "reading through the mount after it reconnected with DH-HMAC-CHAP failed"
[[ -n ${syslog_file:-} && -s $syslog_file ]] || fail "the daemon logged nothing to look for secrets in"
# secrets_hidden HOW: the secrets are nowhere the mount on $mnt (daemon $pid) shows them.
secrets_hidden() {
	for secret in "${keys[3]}" "$ctrl_key"; do
		# The pattern from a file: a search given it as an argument would find itself in ps.
		echo "${secret:10:20}" >/tmp/auth-pattern
		! grep -qF -f /tmp/auth-pattern /proc/[0-9]*/cmdline 2>/dev/null ||
			fail "$1: a secret shows in a process's arguments: $(grep -lF -f /tmp/auth-pattern /proc/[0-9]*/cmdline 2>/dev/null)"
		! grep -qF -f /tmp/auth-pattern "/proc/$pid/environ" || fail "$1: a secret is in the daemon's environment"
		! grep -qF -f /tmp/auth-pattern "$mnt/info" "$mnt/stats" || fail "$1: a secret is in the mount's info or stats file"
		! grep -qF -f /tmp/auth-pattern "$syslog_file" || fail "$1: a secret is in the log"
	done
	# Not vacuous: the same search finds what is there.
	echo "$nqn" >/tmp/auth-pattern
	grep -qF -f /tmp/auth-pattern "$mnt/info" || fail "the search for secrets finds nothing at all in info"
	grep -qF -f /tmp/auth-pattern /proc/[0-9]*/cmdline 2>/dev/null || fail "the search for secrets finds no process's arguments"
}
secrets_hidden "secrets from files"
nvmefs_unmount "$mnt"

log "a mount given the secrets themselves in -o (as an fstab line may): gone from its arguments"
# The null group: what is looked at is the arguments, not the exchange.
set_target sha256 null "${keys[3]}" "$ctrl_key"
nvmefs_mount "$nqn" "$mnt" -q "$host" -o "direct,dhchap_secret=${keys[3]},dhchap_ctrl_secret=$ctrl_key" -i 1
pid=$(nvmefs_pid "$mnt")
secrets_hidden "-o dhchap_secret="
# What stays of the option list is still there to read.
tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "direct,dhchap_secret=" ||
	fail "the daemon's arguments lost more than the secrets: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
nvmefs_unmount "$mnt"

log "failures: one line each, in bounded time, nothing left behind"
qps_before=$(transport_queues)
wrong=$(nvme gen-dhchap-key -m 1 -l 32 -n "$host")
expect_failure "wrong host secret" "this host's DH-HMAC-CHAP response.*--dhchap-secret" 20000 -- \
	nv_identify --dhchap-secret "$wrong"
expect_failure "wrong controller secret" "failed to prove it holds the controller secret.*--dhchap-ctrl-secret" 20000 -- \
	nv_identify --dhchap-secret "${keys[3]}" --dhchap-ctrl-secret "$wrong"
expect_failure "no secret" "requires in-band authentication.*--dhchap-secret" 20000 -- nv_identify
k=${keys[1]}
# The last base64 character before the colon changes the CRC's last byte.
last=${k: -2:1}
[[ $last == A ]] && repl=B || repl=A
expect_failure "bad CRC" "CRC does not match" 5000 -- nv_identify --dhchap-secret "${k:0:${#k}-2}$repl:"
expect_failure "bad base64" "not base64" 5000 -- nv_identify --dhchap-secret "DHHC-1:01:not*base64!:"
expect_failure "wrong length" "is 16 bytes, not 32, 48 or 64" 5000 -- \
	nv_identify --dhchap-secret "DHHC-1:00:$(head -c 20 /dev/urandom | base64):"
expect_failure "bad hash indicator" "hash indicator" 5000 -- nv_identify --dhchap-secret "DHHC-1:07:${k:10}"
chmod 644 /tmp/auth-host
expect_failure "secret file readable by others" "can be read or written by other users.*chmod 600" 5000 -- \
	nv_identify --dhchap-secret-file /tmp/auth-host
# The target lets go of its end of a refused queue asynchronously.
wait_until 5000 output_is "$qps_before" transport_queues ||
	fail "failed authentications left $(($(transport_queues) - qps_before)) $trtype queues behind"
echo "PASS: DH-HMAC-CHAP: $rounds hash x group rounds (every group, each hash both ways) beside the kernel initiator, perf and a mount over it, secrets kept, every failure named"
