#!/usr/bin/env bash
# testbed: --ns-size 32M
# testbed-boot: own
# The Debian packages (deb/, from tests/check-dist) as an admin gets them: dpkg -i of nvmefs,
# libnvmefs0 and libnvmefs-dev in the guest (its root is a throwaway overlay), then everything
# from the installed paths only: /usr/bin/nvmefs linking /usr/lib/<multiarch>/libnvmefs.so.0,
# 'nvmefs discover', an /etc/fstab line mounted through mount.fuse3 (which runs 'nvmefs' from
# the default PATH, so /usr/bin must do) with data that the kernel initiator reads back, the man
# page and the bash completion where man and bash look, the documents the man pages name in
# /usr/share/doc/nvmefs, the systemd units (systemd-analyze verify accepts them), a program built
# with pkg-config against libnvmefs-dev (both examples); and dpkg --purge leaves none of it behind.
. "$(dirname "$0")/lib.sh"
# Nothing of the build tree: only what the packages install (lib.sh put the build's library in
# /usr/lib for the loader to find).
unset LD_LIBRARY_PATH
rm -f /usr/lib/libnvmefs.so*
top=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
nqn=${subnqns[0]}
mnt=/tmp/nvmefs-pkg
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
trap 'nvmefs_cleanup; sed -i "/nvmefs-pkg/d" /etc/fstab' EXIT
nvmefs_mounts+=("$mnt")

debs=()
for p in nvmefs libnvmefs0 libnvmefs-dev; do
	d=$(ls "$top"/deb/"${p}"_*_"$arch".deb 2>/dev/null | head -n 1)
	[[ -n $d ]] || fail "deb/${p}_*_$arch.deb is missing: run make deb (tests/check-dist) first"
	debs+=("$d")
done
for f in /usr/bin/nvmefs /usr/local/bin/nvmefs "/usr/lib/$multiarch/libnvmefs.so.0"; do
	[[ ! -e $f ]] || fail "$f exists before dpkg -i: the test would not see what the packages install"
done

# man-db's trigger would index every man page of the guest's root, the host's over 9p: minutes
# under TCG, at dpkg -i and again at --purge (test-packages took 845 s in one CI run). man -w below
# finds the page by searching the man path, without the index; the root is a throwaway overlay.
rm -f /var/lib/man-db/auto-update
start=$(now_ms)
log "dpkg -i ${debs[*]##*/}"
out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}" 2>&1) || fail "dpkg -i failed: $out"
for p in nvmefs libnvmefs0 libnvmefs-dev; do
	[[ $(dpkg-query -W -f '${db:Status-Abbrev}' "$p") == "ii " ]] || fail "$p is not installed after dpkg -i"
done
[[ $(command -v nvmefs) == /usr/bin/nvmefs ]] || fail "nvmefs in PATH is $(command -v nvmefs), not /usr/bin/nvmefs"
ldd /usr/bin/nvmefs | grep -q "libnvmefs.so.0 => /lib/$multiarch/libnvmefs.so.0 \|libnvmefs.so.0 => /usr/lib/$multiarch/libnvmefs.so.0 " ||
	fail "/usr/bin/nvmefs does not link the packaged library: $(ldd /usr/bin/nvmefs | grep nvmefs)"

log "nvmefs discover from /usr/bin"
/usr/bin/nvmefs discover -t rdma -a "$NVMEFS_TEST_TRADDR" -s "$NVMEFS_TEST_TRSVCID" -o json >/tmp/pkg-disc.json ||
	fail "the installed nvmefs discover failed"
jq -r '.records[].subnqn' /tmp/pkg-disc.json | grep -qx "$nqn" || fail "the installed nvmefs discover does not list $nqn"

log "an /etc/fstab line, mounted through mount.fuse3"
mkdir -p "$mnt"
echo "$nqn $mnt fuse.nvmefs traddr=$NVMEFS_TEST_TRADDR,trsvcid=$NVMEFS_TEST_TRSVCID,_netdev,noauto 0 0 # nvmefs-pkg" >>/etc/fstab
out=$(timeout 60 mount "$mnt" 2>&1) || fail "mount $mnt (from /etc/fstab) failed: $out"
[[ $(findmnt -n -o FSTYPE,SOURCE --mountpoint "$mnt") == "fuse.nvmefs nvmefs:$nqn" ]] ||
	fail "after mount $mnt, it is: $(findmnt "$mnt" || echo 'not a mount point')"
pid=$(pgrep -x nvmefs | head -n 1)
[[ -n $pid && $(readlink "/proc/$pid/exe") == /usr/bin/nvmefs ]] ||
	fail "the mount's daemon is not /usr/bin/nvmefs: $( [[ -n $pid ]] && readlink "/proc/$pid/exe")"
grep -q "/usr/lib/$multiarch/libnvmefs.so.0\|/lib/$multiarch/libnvmefs.so.0" "/proc/$pid/maps" ||
	fail "the mount's daemon did not map the packaged libnvmefs.so.0"
head -c 1M /dev/urandom >/tmp/pkg-w
dd if=/tmp/pkg-w of="$mnt/n1" bs=1M seek=5 conv=notrunc,fsync status=none || fail "writing through $mnt/n1 failed"
umount "$mnt" || fail "umount $mnt failed"
dev=$(kernel_connect "$nqn")
cmp <(dd if="$dev" bs=1M skip=5 count=1 iflag=direct status=none) /tmp/pkg-w ||
	fail "the kernel initiator reads other bytes than were written through the packaged mount"
nvme disconnect -n "$nqn" >/dev/null

log "man page, completion and libnvmefs-dev"
[[ $(man -w nvmefs-mount) == /usr/share/man/man1/nvmefs-mount.1.gz ]] || fail "man -w nvmefs-mount: $(man -w nvmefs-mount 2>&1)"
[[ -r /usr/share/bash-completion/completions/nvmefs ]] || fail "the bash completion is not where bash-completion looks"
# The man pages send readers to doc/: the package ships it where they say.
for d in TROUBLESHOOTING.md JSON.md json/mount-stats.schema.json; do
	compgen -G "/usr/share/doc/nvmefs/$d*" >/dev/null || fail "/usr/share/doc/nvmefs/$d is not installed, though the man pages point to it"
done
# shellcheck disable=SC2046 # pkg-config's words are the flags
cc $(pkg-config --cflags nvmefs) -o /tmp/pkg-discover "${top_srcdir:-$top}/contrib/examples/discover.c" $(pkg-config --libs nvmefs) ||
	fail "contrib/examples/discover.c does not build against libnvmefs-dev with pkg-config"
/tmp/pkg-discover "$NVMEFS_TEST_TRADDR" "$NVMEFS_TEST_TRSVCID" | grep -q "^$nqn " ||
	fail "the example built against libnvmefs-dev does not list $nqn"
# shellcheck disable=SC2046
cc $(pkg-config --cflags nvmefs) -o /tmp/pkg-readwrite "${top_srcdir:-$top}/contrib/examples/readwrite.c" $(pkg-config --libs nvmefs) ||
	fail "contrib/examples/readwrite.c does not build against libnvmefs-dev with pkg-config"

log "systemd units"
unit=/lib/systemd/system/nvmefs-discover@.service
[[ -r $unit ]] || fail "$unit is not installed"
ex=/usr/share/doc/nvmefs/examples
for f in mnt-nvme.mount mnt-nvme.automount; do
	compgen -G "$ex/$f*" >/dev/null || fail "the example $ex/$f is not installed"
done
# verify loads the units as systemd would: a bad key, a command that is not installed or a man
# page that is not there fails it.
rm -rf /tmp/pkg-units && mkdir /tmp/pkg-units
cp "$unit" /tmp/pkg-units/
for f in mnt-nvme.mount mnt-nvme.automount; do
	if [[ -e $ex/$f.gz ]]; then zcat "$ex/$f.gz" >"/tmp/pkg-units/$f"; else cp "$ex/$f" /tmp/pkg-units/; fi
done
out=$(cd /tmp/pkg-units && systemd-analyze verify ./nvmefs-discover@target1.service ./mnt-nvme.mount \
	./mnt-nvme.automount 2>&1) || fail "systemd-analyze verify refuses the packaged units: $out"
[[ -z $out ]] || fail "systemd-analyze verify warns about the packaged units: $out"
# The template runs what its comment says, with the options of its instance's file.
mkdir -p /etc/nvmefs/discover
echo "NVMEFS_DISCOVER_OPTS=-t $trtype -a $NVMEFS_TEST_TRADDR -s $NVMEFS_TEST_TRSVCID" >/etc/nvmefs/discover/target1.conf
cmd=$(sed -n 's/^ExecStart=//p' "$unit")
[[ $cmd == "/usr/bin/nvmefs discover --persistent \$NVMEFS_DISCOVER_OPTS" ]] || fail "the template's ExecStart is: $cmd"
# systemd's EnvironmentFile, not shell: the value is the rest of the line.
opts=$(sed -n 's/^NVMEFS_DISCOVER_OPTS=//p' /etc/nvmefs/discover/target1.conf)
rc=0
# shellcheck disable=SC2086 # the options are words, as systemd splits $VAR
timeout 5 /usr/bin/nvmefs discover --persistent $opts >/tmp/pkg-pdc.out 2>&1 || rc=$?
# Persistent: still watching when timeout ends it.
((rc == 124)) || fail "the template's command ended with status $rc within 5 s: $(head -c 300 /tmp/pkg-pdc.out)"
grep -q "subnqn: *$nqn" /tmp/pkg-pdc.out || fail "the template's command does not print the log with $nqn: $(head -c 300 /tmp/pkg-pdc.out)"
rm -rf /etc/nvmefs

log "dpkg --purge"
out=$(dpkg --purge libnvmefs-dev nvmefs libnvmefs0 2>&1) || fail "dpkg --purge failed: $out"
for f in /usr/bin/nvmefs "/usr/lib/$multiarch/libnvmefs.so.0" /usr/include/nvmefs /usr/share/man/man1/nvmefs.1.gz \
	/usr/share/bash-completion/completions/nvmefs /usr/share/doc/nvmefs "$unit"; do
	[[ ! -e $f ]] || fail "$f is left after dpkg --purge"
done
log "the packages' steps took $(($(now_ms) - start)) ms"
echo "PASS: the packages install, discover and mount (fstab, mount.fuse3) from /usr/bin with the data on the target, ship the docs the man pages name and systemd units that verify, and purge clean"
