#!/usr/bin/env bash
# testbed: --ns-size 16M
# Unaligned and odd-sized I/O through a mounted namespace file (512-byte blocks) does exactly what
# it would do to a plain file: dd with bs=1 and bs=777, then 1000 random writes (4000 in make
# check-long) from 1 byte to 1.2 MiB at any offset up to the last byte, are applied to a shadow
# copy in memory as well, and the whole namespace reads back equal to the shadow (random unaligned
# reads are checked along the way). Then concurrent writers, 100 rounds (400 in make check-long):
# in each round, two writers' requests are in flight together on the same blocks (disjoint parts
# of one block, or the very same unaligned range); after the round each range holds exactly what
# one writer wrote: a read-modify-write that loses the other writer's bytes, or a range that ends
# up part one writer's and part the other's, fails the test.
. "$(dirname "$0")/lib.sh"
require_nvmefs
trap 'nvmefs_cleanup; rm -f /tmp/ua-*' EXIT
mnt=/tmp/nvmefs-unaligned
size=$NVMEFS_TEST_NS_SIZE
nvmefs_mount "${subnqns[0]}" "$mnt"
lba=$(stat -c %o "$mnt/n1")
[[ $lba == 512 ]] || fail "st_blksize of $mnt/n1 is $lba; the testbed's namespace has 512-byte blocks"

# The shadow starts as zeros: the testbed's null_blk namespace is fresh.
cmp -n "$size" "$mnt/n1" /dev/zero >/dev/null 2>&1 || fail "the fresh namespace does not read as zeros: $(cmp -n "$size" "$mnt/n1" /dev/zero 2>&1)"

log "dd with bs=1 and bs=777 at odd offsets"
head -c 20000 /dev/urandom >/tmp/ua-src
# Each entry: the write's byte offset, its length, the offset in /tmp/ua-src it came from.
: >/tmp/ua-dd
dd if=/tmp/ua-src of="$mnt/n1" bs=1 count=300 seek=1234567 conv=notrunc status=none || fail "dd bs=1 seek=1234567 failed"
echo "1234567 300 0" >>/tmp/ua-dd
dd if=/tmp/ua-src of="$mnt/n1" bs=777 count=20 seek=3001 skip=1 conv=notrunc status=none || fail "dd bs=777 seek=3001 failed"
echo "$((777 * 3001)) $((777 * 20)) 777" >>/tmp/ua-dd
# Up to the last byte: bs=777 as far as whole 777-byte records go, then bs=1 to the end.
k=$((size / 777 - 2))
dd if=/tmp/ua-src of="$mnt/n1" bs=777 count=2 seek=$k conv=notrunc status=none || fail "dd bs=777 seek=$k failed"
echo "$((777 * k)) 1554 0" >>/tmp/ua-dd
tail=$((size - 777 * (k + 2)))
dd if=/tmp/ua-src of="$mnt/n1" bs=1 count=$tail seek=$((777 * (k + 2))) skip=5000 conv=notrunc status=none ||
	fail "dd bs=1 of the last $tail bytes failed"
echo "$((777 * (k + 2))) $tail 5000" >>/tmp/ua-dd
# Reading with bs=1 and bs=777 gives the same bytes.
dd if="$mnt/n1" bs=1 count=300 skip=1234567 status=none >/tmp/ua-r || fail "dd bs=1 read failed"
cmp /tmp/ua-r <(head -c 300 /tmp/ua-src) || fail "300 bytes written and read with dd bs=1 at 1234567 differ"
dd if="$mnt/n1" bs=777 count=20 skip=3001 status=none >/tmp/ua-r || fail "dd bs=777 read failed"
cmp /tmp/ua-r <(tail -c +778 /tmp/ua-src | head -c 15540) || fail "20 blocks of 777 bytes written and read with dd bs=777 at $((777 * 3001)) differ"

log "random unaligned writes against a shadow copy"
start=$(now_ms)
python3 - "$mnt/n1" "$size" /tmp/ua-src /tmp/ua-dd "$(scaled 1000 4000)" <<'PY' || fail "random unaligned I/O: see above"
import os, random, sys

path, size, src_path, dd_path, writes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
rng = random.Random()
seed = rng.randrange(1 << 32)
rng.seed(seed)
print(f"# random seed {seed}")
src = open(src_path, "rb").read()
shadow = bytearray(size)
for line in open(dd_path):
    off, n, s = map(int, line.split())
    shadow[off:off + n] = src[s:s + n]

def die(msg):
    print(f"FAIL: {msg} (random seed {seed})", file=sys.stderr)
    sys.exit(1)

def first_diff(a, b):
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return i
    return min(len(a), len(b))

def check_read(fd, off, n, what):
    got = os.pread(fd, n, off)
    want = bytes(shadow[off:off + n])
    if got != want:
        d = first_diff(got, want)
        die(f"{what}: {n} bytes read at {off} differ from the shadow at byte {off + d} "
            f"(got {len(got)} bytes; {got[d:d+8].hex()} instead of {want[d:d+8].hex()})")

fd = os.open(path, os.O_RDWR)
check_read(fd, 0, size, "after the dd writes, the whole file")
for i in range(writes):
    kind = rng.random()
    if kind < 0.3:
        n = rng.randint(1, 16)
    elif kind < 0.6:
        n = rng.randint(1, 511)
    elif kind < 0.9:
        n = rng.randint(513, 20000)
    elif kind < 0.98:
        n = rng.randint(1, 4) * 512
    else:
        n = rng.randint(100000, 1200000)
    if rng.random() < 0.05:
        off = size - n - rng.randint(0, 3)
    elif rng.random() < 0.1:
        off = rng.randrange(0, size - n, 512)
    else:
        off = rng.randint(0, size - n)
    data = rng.randbytes(n)
    done = os.pwrite(fd, data, off)
    if done != n:
        die(f"write {i}: pwrite of {n} bytes at {off} wrote {done}")
    shadow[off:off + n] = data
    if i % 10 == 9:
        n = rng.randint(1, 70000)
        check_read(fd, rng.randint(0, size - n), n, f"after {i + 1} writes, a random read")
os.close(fd)
# Read back in a new open, whole blocks and odd sizes.
fd = os.open(path, os.O_RDONLY)
for chunk in (1 << 20, 777 * 1000):
    off = 0
    while off < size:
        n = min(chunk, size - off)
        check_read(fd, off, n, f"after {writes} writes, reading the whole file in {chunk}-byte reads")
        off += n
if os.pread(fd, 4096, size) != b"":
    die("reading at the end of the file did not give end of file")
os.close(fd)
print(f"# {writes} random writes, every byte of the {size}-byte file equal to the shadow")
PY
log "random writes checked in $(($(now_ms) - start)) ms"

log "concurrent writers on the same blocks"
# The kernel serializes write() calls on one FUSE file (nvmefs does not ask for parallel direct
# writes), so concurrent writes reach nvmefs only as asynchronous direct I/O: each round submits
# all its writes in one io_submit() (Linux AIO, O_DIRECT), and they are in flight together.
start=$(now_ms)
python3 - "$mnt/n1" "$(scaled 100 400)" <<'PY' || fail "concurrent writers: see above"
import ctypes, mmap, os, random, sys

path = sys.argv[1]
ROUNDS = int(sys.argv[2])
MB = 1 << 20
# Each case: (what, [(offset, length) of writer A, (offset, length) of writer B]).
cases = [
    # Disjoint halves of one 512-byte block: each write reads, modifies, writes the same block.
    ("halves of one block", [(1 * MB, 256), (1 * MB + 256, 256)]),
    # Disjoint sub-block pieces of one block, with a gap between them.
    ("pieces of one block", [(2 * MB + 10, 90), (2 * MB + 300, 100)]),
    # Disjoint unaligned ranges that share their edge block (1024..1535).
    ("ranges sharing an edge block", [(3 * MB + 12, 1100), (3 * MB + 1112, 900)]),
    # The same 512 bytes, unaligned: two partial blocks.
    ("the same unaligned 512 bytes", [(4 * MB + 100, 512), (4 * MB + 100, 512)]),
    # The same 1500 bytes, unaligned: partial head, two whole blocks, partial tail.
    ("the same unaligned 1500 bytes", [(5 * MB + 300, 1500), (5 * MB + 300, 1500)]),
]

class IOCB(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("key", ctypes.c_uint32), ("rw_flags", ctypes.c_int32),
                ("opcode", ctypes.c_uint16), ("reqprio", ctypes.c_int16), ("fildes", ctypes.c_uint32),
                ("buf", ctypes.c_uint64), ("nbytes", ctypes.c_uint64), ("offset", ctypes.c_int64),
                ("reserved2", ctypes.c_uint64), ("flags", ctypes.c_uint32), ("resfd", ctypes.c_uint32)]

class EVENT(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("obj", ctypes.c_uint64), ("res", ctypes.c_int64),
                ("res2", ctypes.c_int64)]

class TIMESPEC(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]

assert ctypes.sizeof(IOCB) == 64 and ctypes.sizeof(EVENT) == 32
SYS_io_setup, SYS_io_getevents, SYS_io_submit = 206, 208, 209   # x86_64
libc = ctypes.CDLL(None, use_errno=True)

def sys_call(name, *args):
    ret = libc.syscall(*args)
    if ret < 0:
        e = ctypes.get_errno()
        print(f"FAIL: {name}: {os.strerror(e)}", file=sys.stderr)
        sys.exit(1)
    return ret

def pattern(case, writer, rnd, n):
    return random.Random(case * 10**7 + writer * 10**6 + rnd).randbytes(n)

ctx = ctypes.c_ulong(0)
sys_call("io_setup", ctypes.c_long(SYS_io_setup), ctypes.c_long(64), ctypes.byref(ctx))
fd = os.open(path, os.O_RDWR | os.O_DIRECT)
nr = 2 * len(cases)
bufs = [mmap.mmap(-1, 4096) for _ in range(nr)]
iocbs = (IOCB * nr)()
ptrs = (ctypes.POINTER(IOCB) * nr)()
events = (EVENT * nr)()
rng = random.Random()
bad = []
for r in range(ROUNDS):
    order = list(range(nr))
    rng.shuffle(order)      # who is submitted first changes from round to round
    for slot, k in enumerate(order):
        c, w = divmod(k, 2)
        off, n = cases[c][1][w]
        bufs[k].seek(0)
        bufs[k].write(pattern(c, w, r, n))
        iocbs[k] = IOCB(data=k, opcode=1, fildes=fd,      # IOCB_CMD_PWRITE
                        buf=ctypes.addressof(ctypes.c_char.from_buffer(bufs[k])), nbytes=n, offset=off)
        ptrs[slot] = ctypes.pointer(iocbs[k])
    got = sys_call("io_submit", ctypes.c_long(SYS_io_submit), ctx, ctypes.c_long(nr), ptrs)
    if got != nr:
        print(f"FAIL: io_submit took {got} of {nr} writes", file=sys.stderr)
        sys.exit(1)
    done = 0
    while done < nr:
        ts = TIMESPEC(30, 0)
        n = sys_call("io_getevents", ctypes.c_long(SYS_io_getevents), ctx, ctypes.c_long(1),
                     ctypes.c_long(nr - done), ctypes.byref(events, done * 32), ctypes.byref(ts))
        if n == 0:
            print(f"FAIL: round {r}: {nr - done} asynchronous writes still incomplete after 30 s",
                  file=sys.stderr)
            sys.exit(1)
        done += n
    for e in events:
        c, w = divmod(e.data, 2)
        if e.res != cases[c][1][w][1]:
            bad.append(f"round {r}, {cases[c][0]}: writer {'AB'[w]}'s write returned {e.res}")
    for c, (what, ranges) in enumerate(cases):
        (o0, n0), (o1, n1) = ranges
        if o0 == o1:
            data = os.pread(fd, n0, o0)
            a, b = pattern(c, 0, r, n0), pattern(c, 1, r, n1)
            if data not in (a, b):
                mix = "".join("A" if x == y else "B" if x == z else "?" for x, y, z in zip(data, a, b))
                bad.append(f"round {r}, {what} at {o0}: a mix of both writers, not one "
                           f"(whose byte, every 16th: {mix[::16]})")
        else:
            for w, (o, n) in enumerate(ranges):
                if os.pread(fd, n, o) != pattern(c, w, r, n):
                    bad.append(f"round {r}, {what}: writer {'AB'[w]}'s {n} bytes at {o} were lost "
                               f"(overwritten by a stale read-modify-write of the other)")
if bad:
    print(f"FAIL: {len(bad)} lost or mixed writes in {ROUNDS} rounds; the first: " + "; ".join(bad[:4]),
          file=sys.stderr)
    sys.exit(1)
print(f"# {ROUNDS} rounds of {nr} overlapping writes in flight together: none lost, none mixed")
PY
log "concurrent writers checked in $(($(now_ms) - start)) ms"
errors=$(nvmefs_stats "$mnt" .total.errors)
[[ $errors == 0 ]] || fail "the mount's stats count $errors failed requests"
nvmefs_unmount "$mnt"
check_run_transport
echo "PASS: unaligned I/O matches a shadow copy byte for byte; concurrent overlapping writes neither lost nor mixed"
