#!/usr/bin/env bash
# testbed: --subsystems 2 --ns-size 16M
# The API examples of contrib/examples: discover prints every record of the discovery log, as
# nvme-cli finds them; readwrite writes and reads back through a buffer it registered itself, and
# the kernel initiator reads the same bytes. Then the library as a user gets it: 'make install'
# into the guest's /usr/local (a throwaway overlay), readwrite built with nothing but
# 'pkg-config --cflags --libs nvmefs' against that tree, run on the second subsystem, and the
# installed nvmefs command run from there.
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

log "make install, and readwrite built with pkg-config against the installed tree"
# Nothing of the build tree from here on (lib.sh put the build's library in /usr/lib for the
# loader to find).
unset LD_LIBRARY_PATH
rm -f /usr/lib/libnvmefs.so*
top=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
[[ ! -e /usr/local/lib/libnvmefs.so.0 ]] || fail "/usr/local already holds a libnvmefs: the test would not see what make install puts there"
out=$(make -C "$top" install 2>&1) || fail "make install failed: $(tail -n 5 <<<"$out")"
ldconfig
[[ $(pkg-config --modversion nvmefs) == "$(sed -n 's/^Version: //p' "$top/src/lib/nvmefs.pc")" ]] ||
	fail "pkg-config does not find the installed nvmefs.pc: $(pkg-config --modversion nvmefs 2>&1)"
src=${top_srcdir:-$top}/contrib/examples/readwrite.c
# shellcheck disable=SC2046 # pkg-config's words are the flags
cc $(pkg-config --cflags nvmefs) -o /tmp/ex-rw-installed "$src" $(pkg-config --libs nvmefs) ||
	fail "readwrite.c does not build with pkg-config --cflags --libs nvmefs"
ldd /tmp/ex-rw-installed | grep -q "libnvmefs.so.0 => /usr/local/lib/libnvmefs.so.0 " ||
	fail "the program does not link the installed library: $(ldd /tmp/ex-rw-installed | grep nvmefs)"
/tmp/ex-rw-installed "$NVMEFS_TEST_TRADDR" "$NVMEFS_TEST_TRSVCID" "${subnqns[1]}" 1 >/tmp/ex-rw2.out ||
	fail "readwrite built against the installed tree failed: $(cat /tmp/ex-rw2.out)"
log "installed readwrite: $(cat /tmp/ex-rw2.out)"
installed=$(command -v nvmefs) || fail "make install put no nvmefs in PATH"
[[ $installed == /usr/local/bin/nvmefs ]] || fail "nvmefs in PATH is $installed, not /usr/local/bin/nvmefs"
ldd "$installed" | grep -q "libnvmefs.so.0 => /usr/local/lib/libnvmefs.so.0 " ||
	fail "the installed nvmefs does not link the installed library: $(ldd "$installed" | grep nvmefs)"
nvmefs discover -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -o json |
	jq -r '.records[].subnqn' | grep -qx "${subnqns[1]}" || fail "the installed nvmefs discover does not list ${subnqns[1]}"

trap nvmefs_cleanup EXIT
for s in "$nqn" "${subnqns[1]}"; do
	dev=$(kernel_connect "$s")
	python3 - "$dev" <<'PY' || fail "the kernel initiator reads other bytes of $s than readwrite wrote"
import sys
data = open(sys.argv[1], 'rb').read(64 * 1024)
sys.exit(0 if data == bytes((i * 31 + 7) & 0xff for i in range(64 * 1024)) else 1)
PY
	nvme disconnect -n "$s" >/dev/null
done
echo "PASS: the examples: discover as nvme discover, readwrite's data as the kernel reads it, from the build and from the installed tree"
