#!/usr/bin/env bash
# testbed: --ports 2 --namespaces 2 --ns-size 64M
# Every JSON output of nvmefs validates against its schema in doc/json (doc/JSON.md), with
# python3-jsonschema (draft 2020-12), against the real target: discover (one log, --referral-depth's
# several, --persistent's JSON Lines), identify (controller, each namespace, --list-ns), perf (plain,
# randrw --verify --cpus with its reads and writes apart, multipath --all-paths), the mount's info and
# stats files (one path and two) and nvmefs list (one path, two, a stale mount). Each run that has
# optional members is checked to have them, so their schemas are exercised.
# And each schema can fail: every document checked is also altered (an undocumented member at the
# top and in an array's first object, a number given as a string, a string as a number, a required
# member left out), and every alteration must be rejected.
. "$(dirname "$0")/lib.sh"
require_nvmefs
schemas=$(cd "$(dirname "$0")/../../doc/json" && pwd)
# Not the first python3 in PATH (a pyenv one on a developer's machine lacks jsonschema): the
# system's, which Debian's python3-jsonschema is for.
py=/usr/bin/python3
# Found, not imported: importing it takes seconds under TCG, and check_all does it once.
"$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("jsonschema") is None)' ||
	skip "$py cannot import jsonschema: install python3-jsonschema (contrib/setup-debian does)"
addr=$NVMEFS_TEST_TRADDR
nqn=${subnqns[0]}
read -r -a ports <<<"$NVMEFS_TEST_TRSVCIDS"
((${#ports[@]} >= 2)) || fail "the testbed gave ${#ports[@]} ports, not 2"
work=/tmp/json-schema
mkdir -p "$work"
cd "$work" || fail "cannot enter $work"
trap nvmefs_cleanup EXIT

# The validator: SCHEMAS NAME FILE MIN [NAME FILE MIN ...]: every document in each FILE (one or
# more JSON documents one after the other, as discover prints several logs, pretty or as JSON Lines)
# validates against SCHEMAS/NAME.schema.json, and there are at least MIN of them: it prints how
# many, or each error (where, what) on stderr and exits 1. Then each alteration of the first
# document must fail: it prints where each was caught, or exits 2 naming the one that was accepted.
# One python3 for every file of the test: starting it and importing jsonschema takes seconds under
# TCG, and once per file that was most of the test's time.
validator=$(
	cat <<'PY'
import copy, json, sys
import jsonschema

schemas, jobs = sys.argv[1], sys.argv[2:]


def where(e):
    return "/" + "/".join(str(p) for p in e.absolute_path)


def leaves(node, path=()):
    """Every (path, value) under node, depth first, in document order."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield path + (k,), v
        yield from leaves(v, path + (k,))


def name_of(path):
    return "/" + "/".join(str(p) for p in path)


def check(name, doc_path, least):
    schema_path = f"{schemas}/{name}.schema.json"
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    with open(doc_path, encoding="utf-8") as f:
        text = f.read()
    docs, pos, decoder = [], 0, json.JSONDecoder()
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        doc, pos = decoder.raw_decode(text, pos)
        docs.append(doc)
    if not docs:
        sys.exit(f"{name}: {doc_path}: no JSON document in it")

    def errors(doc):
        """The deepest first: they name the member at fault."""
        return sorted(validator.iter_errors(doc), key=lambda e: (-len(e.absolute_path), [str(p) for p in e.absolute_path]))

    bad = 0
    for n, doc in enumerate(docs, 1):
        for e in errors(doc):
            print(f"{doc_path}, document {n}: {where(e)}: {e.message}", file=sys.stderr)
            bad += 1
    if bad:
        print(f"{name}: {doc_path} does not match {schema_path} (above); it holds: {text[:3000]}", file=sys.stderr)
        sys.exit(1)
    if len(docs) < least:
        sys.exit(f"{name}: {doc_path} holds {len(docs)} JSON documents, expected at least {least}")
    print(f"{name}: {doc_path}: {len(docs)} document(s) valid against {schema['$id']}")

    def altered(path, change):
        doc = copy.deepcopy(docs[0])
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        change(parent, path[-1])
        return doc

    first = docs[0]
    alterations = [("an undocumented member /undocumented", altered(("undocumented",), lambda p, k: p.__setitem__(k, 1)))]
    for path, v in leaves(first):
        if isinstance(v, dict) and isinstance(path[-1], int):
            alterations.append((f"an undocumented member in {name_of(path)}",
                                altered(path + ("undocumented",), lambda p, k: p.__setitem__(k, 1))))
            break
    for path, v in leaves(first):
        if isinstance(v, int) and not isinstance(v, bool):
            alterations.append((f"{name_of(path)} as a string", altered(path, lambda p, k: p.__setitem__(k, str(p[k])))))
            break
    for path, v in leaves(first):
        if isinstance(v, str):
            alterations.append((f"{name_of(path)} as a number", altered(path, lambda p, k: p.__setitem__(k, 12345))))
            break
    top = next(iter(first))
    alterations.append((f"/{top} left out", altered((top,), lambda p, k: p.__delitem__(k))))
    for what, doc in alterations:
        errs = errors(doc)
        if not errs:
            print(f"{schema_path}: {what} was accepted: it cannot catch an undocumented or mistyped member", file=sys.stderr)
            sys.exit(2)
        print(f"  {what}: rejected at {where(errs[0])}: {errs[0].message[:100]}")


for i in range(0, len(jobs), 3):
    check(jobs[i], jobs[i + 1], int(jobs[i + 2]))
PY
)

# check NAME FILE [MIN_DOCS]: every document in FILE validates against doc/json/NAME.schema.json
# (at least MIN_DOCS of them, default 1), and each alteration of the first is rejected; check_all,
# at the end, runs the validator once over every file checked.
checks=()
check() {
	[[ -s $2 ]] || fail "$1: no output in $2"
	checks+=("$1" "$2" "${3:-1}")
}
check_all() {
	local out rc=0 line
	log "the schemas: $((${#checks[@]} / 3)) files, in one validator"
	out=$("$py" -c "$validator" "$schemas" "${checks[@]}") || rc=$?
	while IFS= read -r line; do
		if [[ $line == "  "* ]]; then printf '%s\n' "$line"; else log "$line"; fi
	done <<<"$out"
	((rc == 0)) || fail "the validator exited $rc: a document does not match its schema, or a schema accepted an altered one (above)"
}

# has FILE JQ_FILTER WHAT: the optional members a run should have printed are there.
has() { jq -e "$2" "$1" >/dev/null || fail "$1 lacks $3: $(head -c 3000 "$1")"; }

discover() { "$NVMEFS" discover -t rdma -a "$addr" "$@"; }
ident() { "$NVMEFS" identify -t rdma -a "$addr" -s "${ports[0]}" -n "$nqn" "$@"; }
perf() { "$NVMEFS" perf -t rdma -a "$addr" -s "${ports[0]}" -n "$nqn" -o json --time 1 --size 8M "$@"; }

log "discover, on each port"
for port in "${ports[@]}"; do
	discover -s "$port" -o json >"discover-$port.json" || fail "nvmefs discover -s $port -o json failed"
	check discover "discover-$port.json"
	has "discover-$port.json" '[.records[] | select(.trtype == "rdma") | .rdma_pkey] | length > 0' "RDMA records"
done

log "discover --referral-depth 1: port ${ports[0]}'s log refers to port ${ports[1]}'s, one document each"
ref=$NVMEFS_TEST_NVMET/ports/1/referrals/to-2
mkdir "$ref"
echo rdma >"$ref/addr_trtype"
echo ipv4 >"$ref/addr_adrfam"
echo "$addr" >"$ref/addr_traddr"
echo "${ports[1]}" >"$ref/addr_trsvcid"
echo 1 >"$ref/enable"
discover -s "${ports[0]}" --referral-depth 1 -o json >discover-referral.json ||
	fail "nvmefs discover --referral-depth 1 -o json failed"
check discover discover-referral.json 2
jq -s -e '[.[0].records[] | select(.subtype == "discovery subsystem referral")] | length > 0' discover-referral.json \
	>/dev/null || fail "port ${ports[0]}'s log has no referral record: $(cat discover-referral.json)"

log "discover --persistent: JSON Lines, until SIGINT"
rc=0
timeout --preserve-status -s INT 4 "$NVMEFS" discover -t rdma -a "$addr" -s "${ports[0]}" --persistent -o json \
	>discover-persistent.json 2>discover-persistent.err || rc=$?
((rc == 0)) || fail "discover --persistent exited $rc after SIGINT: $(cat discover-persistent.err)"
[[ $(head -n 1 discover-persistent.json) == "{"*"}" ]] ||
	fail "discover --persistent -o json did not print its log on one line: $(head -c 500 discover-persistent.json)"
check discover discover-persistent.json

log "identify: the controller, each namespace, the namespace list"
ident -o json >identify-ctrl.json || fail "nvmefs identify -o json failed"
check identify-ctrl identify-ctrl.json
for nsid in $(seq 1 "$NVMEFS_TEST_NAMESPACES"); do
	ident --nsid "$nsid" -o json >"identify-ns$nsid.json" || fail "nvmefs identify --nsid $nsid -o json failed"
	check identify-ns "identify-ns$nsid.json"
	has "identify-ns$nsid.json" '."ns-descs" | length > 0' "namespace identification descriptors"
done
ident --list-ns -o json >identify-list-ns.json || fail "nvmefs identify --list-ns -o json failed"
check identify-list-ns identify-list-ns.json
has identify-list-ns.json ".nsid_list | length == $NVMEFS_TEST_NAMESPACES" "$NVMEFS_TEST_NAMESPACES namespaces"

log "perf: a plain run, randrw --verify --cpus, and --all-paths"
perf --rw read --queues 2 >perf-read.json 2>perf.err || fail "perf --rw read failed: $(cat perf.err)"
check perf perf-read.json
has perf-read.json '(has("read") or has("write")) | not' "no read and write apart outside randrw"
perf --rw randrw --mix 70 --verify --cpus 0 --mode poll >perf-verify.json 2>perf.err ||
	fail "perf --rw randrw --verify failed: $(cat perf.err)"
check perf perf-verify.json
has perf-verify.json '.job.mix == 70 and .job.cpus == [0] and .verify.blocks_read > 0' "mix, cpus and verify"
# randrw's reads and writes apart, which add up to the I/Os that succeeded, about 70 to 30.
has perf-verify.json '.read.ios + .write.ios == .ios - .errors and .read.ios > .write.ios and .write.ios > 0 and
	.read.lat_us.p50 > 0 and .write.lat_us.p50 > 0 and .job.iodepth == .job.qd and .job.nr_io_queues == .job.queues' \
	"reads and writes apart, and iodepth and nr_io_queues"
perf --all-paths --iopolicy round-robin --qd 4 >perf-paths.json 2>perf.err ||
	fail "perf --all-paths failed: $(cat perf.err)"
check perf perf-paths.json
has perf-paths.json '.iopolicy == "round-robin" and (.paths | length) == 2' "iopolicy and 2 paths"

log "mount: info and stats, one path"
mnt=$work/mnt
nvmefs_mount "$nqn" "$mnt"
dd if=/dev/urandom of="$mnt/n1" bs=64k count=16 oflag=direct status=none || fail "writing through the mount failed"
dd if="$mnt/n1" of=/dev/null bs=64k count=16 iflag=direct status=none || fail "reading through the mount failed"
cat "$mnt/info" >mount-info.json || fail "reading $mnt/info failed"
cat "$mnt/stats" >mount-stats.json || fail "reading $mnt/stats failed"
"$NVMEFS" list -o json >list.json || fail "nvmefs list -o json failed"
vmpin=$(awk '/^VmPin:/ {print $2 * 1024}' "/proc/$(nvmefs_pid "$mnt")/status")
nvmefs_unmount "$mnt"
check mount-info mount-info.json
check mount-stats mount-stats.json
check list list.json
has mount-info.json ".trtype == \"rdma\" and .traddr == \"$addr\" and .trsvcid == \"${ports[0]}\"" "the transport, address and service id"
has list.json ".mounts[] | select(.mountpoint == \"$mnt\") | .state == \"live\" and (.paths | length) == 1 and .reads > 0" "the live mount, one path, its reads"
has mount-info.json ".namespaces | length == $NVMEFS_TEST_NAMESPACES" "$NVMEFS_TEST_NAMESPACES namespaces"
has mount-stats.json '.total.writes > 0 and .total.reads > 0' "the I/O just done"
has mount-stats.json ".memory.pinned_bytes == $vmpin" "the daemon's VmPin ($vmpin bytes) as pinned_bytes"

log "mount: info and stats, two paths"
nvmefs_mount "$nqn" "$mnt" --path "$addr:${ports[1]}"
dd if=/dev/urandom of="$mnt/n1" bs=64k count=16 oflag=direct status=none || fail "writing through the mount failed"
cat "$mnt/info" >mount-info-paths.json || fail "reading $mnt/info failed"
cat "$mnt/stats" >mount-stats-paths.json || fail "reading $mnt/stats failed"
"$NVMEFS" list -o json >list-paths.json || fail "nvmefs list -o json failed"
vmpin=$(awk '/^VmPin:/ {print $2 * 1024}' "/proc/$(nvmefs_pid "$mnt")/status")
nvmefs_unmount "$mnt"
check mount-info mount-info-paths.json
check mount-stats mount-stats-paths.json
check list list-paths.json
has list-paths.json ".mounts[] | select(.mountpoint == \"$mnt\") | .iopolicy and (.paths | length) == 2" "the iopolicy and 2 paths"
has mount-info-paths.json '(.paths | length) == 2' "2 paths"
has mount-stats-paths.json "(.paths | length) == 2 and (.paths[0].ana | length) == $NVMEFS_TEST_NAMESPACES" "2 paths with the ANA state of each namespace"
has mount-stats-paths.json "([.paths[].pinned_bytes] | min) > 0 and ([.paths[].pinned_bytes] | add) == .memory.pinned_bytes and .memory.pinned_bytes == $vmpin" \
	"each path's pinned bytes, summing to the daemon's VmPin ($vmpin bytes)"
log "list: a stale mount (its daemon killed)"
nvmefs_mount "$nqn" "$mnt"
kill -KILL "$(nvmefs_pid "$mnt")"
wait_gone "$(nvmefs_pid "$mnt")" 5000 || fail "the daemon survived kill -9"
"$NVMEFS" list -o json >list-stale.json || fail "nvmefs list -o json failed with a stale mount"
fusermount3 -u "$mnt" || fail "fusermount3 -u of the stale mount failed"
rm -f "$mnt.pid"
check list list-stale.json
has list-stale.json ".mounts[] | select(.mountpoint == \"$mnt\") | .state == \"error\" and .errno == -107" "the stale mount in error (ENOTCONN)"
check_all
cd / || fail "cannot leave $work"
rm -rf "$work"
echo "PASS: every JSON output (discover, identify, perf, list, the mount's info and stats) matches its schema in doc/json, and each schema rejects altered documents"
