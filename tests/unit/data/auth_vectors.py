#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Known answers for tests/unit/check_auth_crypto.c, from an implementation that is not ours.

Everything here is computed with Python's own hmac, hashlib, base64 and zlib
from the byte layouts of NVMe in-band authentication (DH-HMAC-CHAP, NVMe Base
Specification 2.0, 8.13.5) as the Linux kernel implements them
(drivers/nvme/common/auth.c, drivers/nvme/host/auth.c):

  secret      "DHHC-1:" NN ":" base64(key || le32(crc32(key))) ":"
  transform   HMAC_NN(key, NQN || "NVMe-over-Fabrics"); NN 00: the key as is;
              the host key with the host's NQN, the controller key with the
              subsystem's
  augmented   HMAC_H(H(session key), C)
  R1          HMAC_H(Kh', C1 || le32(S1) || le16(TID) || SC_C || "HostHost"
                     || NQNh || 00h || NQNc)
  R2          HMAC_H(Kc', C2 || le32(S2) || le16(TID) || SC_C || "Controller"
                     || NQNc || 00h || NQNh)

The secrets marked "nvme-cli" are the output of the real `nvme gen-dhchap-key`
(nvme-cli 2.3, libnvme 1.3), recorded below; this script checks that they say
what we think they say, and when nvme-cli is installed it runs it again.

Usage: auth_vectors.py            print the C block for the test
       auth_vectors.py --check F  fail unless F holds exactly that block
"""
import base64
import hashlib
import hmac
import shutil
import subprocess
import sys
import zlib

HASHES = {1: hashlib.sha256, 2: hashlib.sha384, 3: hashlib.sha512}
HASH_LEN = {1: 32, 2: 48, 3: 64}
SEED = b"NVMe-over-Fabrics"

HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:0c5c3c2e-7a8b-4b4e-9d1f-3a6e2b1c9d00"
SUBNQN = "nqn.2026-11.io.nvmefs.testbed:sub1"

S32 = bytes(range(0x00, 0x20))
S48 = bytes(range(0x40, 0x70))
S64 = bytes(range(0x80, 0xC0))

# `nvme gen-dhchap-key --secret=<hex> --hmac=NN --key-length=L --nqn=HOSTNQN`.
# With NN != 00 nvme-cli stores HMAC_NN(secret, NQN || seed), already
# transformed once, and accepts only L equal to that hash's size.
NVME_CLI = [
    (0, S32, "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"),
    (0, S48, "DHHC-1:00:QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZ2hpamtsbW5voBXMjQ==:"),
    (0, S64, "DHHC-1:00:gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1"
             "tre4ubq7vL2+v6rfDIU=:"),
    (1, S32, "DHHC-1:01:r+8LqqMqGGthoKf9MzewV+Et9QIG8FZT59xJ2M7Im2Cbe0qA:"),
    (2, S48, "DHHC-1:02:RE2X5qB/+brxSaWFkqEvkVDZaHvGRraGJBsz89Xekklq6MKlHbCaG/RlCC9PjuII3cEFNw==:"),
    (3, S64, "DHHC-1:03:iOlKgYBoK+AeNpqirYGj2eOAk9HJKTzsUbrbBozQ3Rf5MxQti8KQbBNrkITpAst+i91my0BP"
             "3kGNv0NBGueJg1VuNm4=:"),
]
# Made by nvme-cli from random secrets: they only have to parse.
NVME_CLI_RANDOM = [
    "DHHC-1:01:IzKwNbv1dsTxAfnLTd47jiq2PmtZcNWWtflq/Vi90vMWA6Kz:",
    "DHHC-1:02:u+62h3tKiKCb0pPTMPjumoGp16TvX3YmNHMsDdpFztV2ZfbOdrl/DxA2dvf4ZycdS08zUw==:",
    "DHHC-1:03:u2fE+Zyw/PXUjWSSgLNRqH5NJty+dcDJ+byttThxTY9M2yHejv7JNl0e/k3d2sLCA/yakzVYaE0T"
    "JgnxkNUyHFMZ5Og=:",
]


def crc_le(key):
    return zlib.crc32(key).to_bytes(4, "little")


def secret(nn, key, crc=None):
    blob = key + (crc if crc is not None else crc_le(key))
    return "DHHC-1:%02x:%s:" % (nn, base64.b64encode(blob).decode())


def transform(nn, key, nqn):
    if nn == 0:
        return key
    return hmac.new(key, nqn.encode() + SEED, HASHES[nn]).digest()


def augment(h, sess, c):
    return hmac.new(HASHES[h](sess).digest(), c, HASHES[h]).digest()


def response(h, tkey, c, seq, tid, label, nqn1, nqn2, sess):
    if sess is not None:
        c = augment(h, sess, c)
    msg = (c + seq.to_bytes(4, "little") + tid.to_bytes(2, "little") + b"\0"
           + label + nqn1.encode() + b"\0" + nqn2.encode())
    return hmac.new(tkey, msg, HASHES[h]).digest()


def check_nvme_cli():
    for nn, raw, got in NVME_CLI:
        want = secret(nn, transform(nn, raw, HOSTNQN))
        assert got == want, (nn, got, want)
    for s in NVME_CLI_RANDOM:
        blob = base64.b64decode(s.split(":")[2], validate=True)
        assert crc_le(blob[:-4]) == blob[-4:], s
    if not shutil.which("nvme"):
        return
    for nn, raw, want in NVME_CLI:
        out = subprocess.run(
            ["nvme", "gen-dhchap-key", "--secret=" + raw.hex(), "--hmac=%d" % nn,
             "--key-length=%d" % len(raw), "--nqn=" + HOSTNQN],
            check=True, capture_output=True, text=True).stdout.strip()
        assert out == want, (nn, out, want)


def c_bytes(b, indent="\t\t"):
    lines = []
    for i in range(0, len(b), 12):
        lines.append(indent + " ".join("0x%02x," % x for x in b[i:i + 12]))
    return "{\n" + "\n".join(lines) + "\n" + indent[:-1] + "}"


def c_str(s):
    # Split long strings so that the test stays within 100 columns.
    parts = [s[i:i + 72] for i in range(0, len(s), 72)] or [""]
    return "\n\t\t".join('"%s"' % p for p in parts)


def pattern(n, start, step):
    return bytes((start + step * i) & 0xFF for i in range(n))


def emit():
    out = []
    w = out.append
    w("/* BEGIN generated by tests/unit/data/auth_vectors.py: do not edit */")
    w('#define V_HOSTNQN "%s"' % HOSTNQN)
    w('#define V_SUBNQN "%s"' % SUBNQN)
    w("")

    # Every secret parses to this key (nvme-cli's, and ours for the malformed
    # ones' good twins).
    w("static const struct v_parse {\n\tconst char *secret;\n\tunsigned int hash;"
      "\n\tsize_t len;\n\tuint8_t key[64];\n} v_parse[] = {")
    for nn, raw, s in NVME_CLI:
        key = transform(nn, raw, HOSTNQN)
        w("\t{ /* nvme-cli, --hmac=%d --key-length=%d */" % (nn, len(raw)))
        w("\t\t%s,\n\t\t%d, %d,\n\t\t%s,\n\t}," % (c_str(s), nn, len(key), c_bytes(key, "\t\t\t")))
    # The kernel takes any of the three lengths with any indicator.
    for nn, raw in ((1, S64), (3, S32), (2, S32)):
        w("\t{ /* %d-byte key, indicator %02d */" % (len(raw), nn))
        w("\t\t%s,\n\t\t%d, %d,\n\t\t%s,\n\t}," % (c_str(secret(nn, raw)), nn, len(raw),
                                                  c_bytes(raw, "\t\t\t")))
    w("};")
    w("")
    w("static const char *const v_parse_random[] = {")
    for s in NVME_CLI_RANDOM:
        w("\t%s," % c_str(s))
    w("};")
    w("")

    # Malformed secrets, each wrong in exactly one way.
    good = secret(1, S32)
    pre, b64 = good[:10], good[10:-1]
    bad = {
        "prefix": ["DHHC-2" + good[6:], "dhhc-1" + good[6:], "DHHC-1", "", "DHHC-1" + good[7:]],
        "hash": [good[:7] + "04" + good[9:], good[:7] + "0x" + good[9:],
                 good[:7] + "1" + good[9:], good[:7] + "001" + good[9:],
                 good[:7] + "FF" + good[9:]],
        "base64": [pre + b64[:10] + "*" + b64[11:] + ":", pre + b64[:10] + "=" + b64[11:] + ":",
                   pre + b64[:-1] + ":", pre + ":", pre + b64 + "==:",
                   pre + b64[:-2] + "=A:", pre + b64[:-3] + "===:", pre + b64 + " ",
                   pre + b64 + ":" + b64 + ":"],
        "length": [secret(1, S32[:31]), secret(1, S32 + b"\x20"), secret(0, S64 + b"\x40"),
                   secret(0, S32[:16]), secret(0, b"")],
        "crc": [secret(1, S32, crc_le(bytes([S32[0] ^ 1]) + S32[1:])),
                secret(1, S32, zlib.crc32(S32).to_bytes(4, "big")),
                secret(3, S64, crc_le(S64[:-1]))],
    }
    for what, strs in bad.items():
        w("static const char *const v_bad_%s[] = {" % what)
        for s in strs:
            w("\t%s," % c_str(s))
        w("};")
    w("")

    # Transformation: the parsed secret, the NQN, the transformed key.
    w("static const struct v_transform {\n\tconst char *secret;\n\tconst char *nqn;"
      "\n\tsize_t len;\n\tuint8_t key[64];\n} v_transform[] = {")
    cases = [(nn, raw, HOSTNQN) for nn, raw in ((1, S32), (2, S48), (3, S64))]
    cases += [(1, S64, SUBNQN), (3, S32, SUBNQN), (0, S48, HOSTNQN)]
    for nn, raw, nqn in cases:
        t = transform(nn, raw, nqn)
        w("\t{\n\t\t%s,\n\t\t%s,\n\t\t%d,\n\t\t%s,\n\t}," % (
            c_str(secret(nn, raw)), "V_HOSTNQN" if nqn == HOSTNQN else "V_SUBNQN",
            len(t), c_bytes(t, "\t\t\t")))
    w("};")
    w("")

    # Augmented challenge over a session key that starts with zero bytes, as
    # a padded DH shared secret may.
    sess = b"\0\0" + pattern(254, 0x11, 0x3B)
    w("static const uint8_t v_sess[%d] = %s;" % (len(sess), c_bytes(sess, "\t")))
    w("")
    w("static const struct v_augment {\n\tunsigned int hash;\n\tuint8_t c[64];"
      "\n\tuint8_t want[64];\n} v_augment[] = {")
    for h in (1, 2, 3):
        c = pattern(HASH_LEN[h], 0xA0 + h, 7)
        w("\t{\n\t\t%d,\n\t\t%s,\n\t\t%s,\n\t}," % (h, c_bytes(c, "\t\t\t"),
                                                  c_bytes(augment(h, sess, c), "\t\t\t")))
    w("};")
    w("")

    # Responses R1 and R2.  TID 0x1234 and sequence numbers whose four bytes
    # differ pin the byte orders.
    w("#define V_TID 0x1234")
    w("#define V_S1 0x89abcdefu")
    w("#define V_S2 0x01234567u")
    w("static const struct v_response {\n\tconst char *what;\n\tunsigned int hash;"
      "\n\tconst char *host_secret;\n\tconst char *ctrl_secret;\n\tbool dh;"
      "\n\tuint8_t c1[64];\n\tuint8_t c2[64];\n\tuint8_t r1[64];\n\tuint8_t r2[64];"
      "\n} v_response[] = {")
    rcases = [
        ("SHA-256", 1, (1, S32), (1, S48[:32]), False),
        ("SHA-384", 2, (2, S48), (2, S64[:48]), False),
        ("SHA-512", 3, (3, S64), (3, S32 + S32), False),
        # The transformed key is as long as its hash, not as the key.
        ("SHA-256, 32-byte key with SHA-512, 48-byte key untransformed", 1, (3, S32), (0, S48),
         False),
        ("SHA-384, 64-byte key with SHA-256, 48-byte key with SHA-512", 2, (1, S64), (3, S48),
         False),
        ("SHA-256 with a DH session key", 1, (1, S32), (1, S48[:32]), True),
        ("SHA-512 with a DH session key", 3, (2, S48), (0, S32), True),
    ]
    for what, h, (hn, hraw), (cn, craw), dh in rcases:
        hl = HASH_LEN[h]
        c1 = pattern(hl, 0x30 + h, 5)
        c2 = pattern(hl, 0xC0 + h, 3)
        s = sess if dh else None
        r1 = response(h, transform(hn, hraw, HOSTNQN), c1, 0x89ABCDEF, 0x1234,
                      b"HostHost", HOSTNQN, SUBNQN, s)
        r2 = response(h, transform(cn, craw, SUBNQN), c2, 0x01234567, 0x1234,
                      b"Controller", SUBNQN, HOSTNQN, s)
        w('\t{\n\t\t"%s", %d,\n\t\t%s,\n\t\t%s,\n\t\t%s,' % (
            what, h, c_str(secret(hn, hraw)), c_str(secret(cn, craw)),
            "true" if dh else "false"))
        for b in (c1, c2, r1, r2):
            w("\t\t%s," % c_bytes(b, "\t\t\t"))
        w("\t},")
    w("};")
    w("/* END generated by tests/unit/data/auth_vectors.py */")
    return "\n".join(out) + "\n"


def main():
    check_nvme_cli()
    block = emit()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        with open(sys.argv[2]) as f:
            text = f.read()
        begin = text.find("/* BEGIN generated by tests/unit/data/auth_vectors.py")
        end_mark = "/* END generated by tests/unit/data/auth_vectors.py */\n"
        end = text.find(end_mark)
        if begin < 0 or end < 0 or text[begin:end + len(end_mark)] != block:
            sys.exit("%s: the generated block differs from auth_vectors.py's" % sys.argv[2])
        return
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    sys.stdout.write(block)


if __name__ == "__main__":
    main()
