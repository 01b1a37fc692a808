#!/usr/bin/env bash
# testbed: --subsystems 2 --ns-size 16M
# testbed-boot: own
# The API examples of contrib/examples: discover prints every record of the discovery log, as
# nvme-cli finds them; readwrite writes and reads back through a buffer it registered itself, and
# the kernel initiator reads the same bytes. The library as a user installs it is
# test-packages.sh's: both examples built with nothing but 'pkg-config --cflags --libs nvmefs'
# against libnvmefs-dev (make install itself is make distcheck's, in tests/check-dist).
. "$(dirname "$0")/lib.sh"
examples=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}/contrib/examples
[[ -x $examples/discover && -x $examples/readwrite ]] || fail "the examples are not built: run make check"
nqn=${subnqns[0]}

"$examples/discover" "$NVMEFS_TEST_TRADDR" "$NVMEFS_TEST_TRSVCID" >/tmp/ex-discover.out ||
	fail "discover failed: $(cat /tmp/ex-discover.out)"
want=$(nvme discover -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -o json |
	jq -r '.records[] | "\(.subnqn) \(.traddr):\(.trsvcid)"' | sort)
diff -u <(echo "$want") <(sort /tmp/ex-discover.out) || fail "discover's records differ from nvme discover's (- nvme, + example)"
for s in "${subnqns[@]}"; do
	grep -q "^$s $NVMEFS_TEST_TRADDR:$NVMEFS_TEST_TRSVCID$" /tmp/ex-discover.out || fail "discover does not list $s"
done
log "discover: $(wc -l </tmp/ex-discover.out) records, as nvme discover"

"$examples/readwrite" "$NVMEFS_TEST_TRADDR" "$NVMEFS_TEST_TRSVCID" "$nqn" 1 >/tmp/ex-rw.out ||
	fail "readwrite failed: $(cat /tmp/ex-rw.out)"
log "readwrite: $(cat /tmp/ex-rw.out)"

trap nvmefs_cleanup EXIT
dev=$(kernel_connect "$nqn")
python3 - "$dev" <<'PY' || fail "the kernel initiator reads other bytes of $nqn than readwrite wrote"
import sys
data = open(sys.argv[1], 'rb').read(64 * 1024)
sys.exit(0 if data == bytes((i * 31 + 7) & 0xff for i in range(64 * 1024)) else 1)
PY
nvme disconnect -n "$nqn" >/dev/null
echo "PASS: the examples: discover as nvme discover, readwrite's data as the kernel reads it"
