#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Known answers for tests/unit/check_tls_key.c, from an implementation that is not ours.

Computed with Python's own hmac, hashlib, base64 and zlib from the byte layouts
of NVMe/TCP's TLS keys (NVMe TCP Transport Specification 3.6.1) as libnvme
(src/nvme/linux.c) and the kernel lay them out:

  configured  "NVMeTLSkey-1:" HH ":" base64(key || le32(crc32(key))) ":"
  retained    HH 00: the key; else HKDF-Expand-Label_HH(HKDF-Extract(0, key),
              "HostNQN", NQNh, len(key))
  cipher      HH, or for HH 00 SHA-256 for a 32-byte key, SHA-384 for 48
  digest      base64(HMAC_cipher(retained, NQNh " " NQNc " NVMe-over-Fabrics"))
  identity    v0 "NVMe0Rhh NQNh NQNc", v1 "NVMe1Rhh NQNh NQNc digest"
  TLS PSK     HKDF-Expand-Label_cipher(HKDF-Extract(0, retained), "nvme-tls-psk",
              v0: the identity, v1: "hh digest", len(key))

HkdfLabel is RFC 8446's (be16 length, length-prefixed "tls13 " label and
context) or, with compat, libnvme's before 1.16 (le16 length, no prefixes).
The identities libnvme's own test/psk.c expects are asserted below, so these
layouts are the ones libnvme uses in both variants.

Usage: tls_vectors.py            print the C blocks for the test (secure concatenation's second)
       tls_vectors.py --check F  fail unless F holds exactly that block
"""
import base64
import hashlib
import hmac
import struct
import sys
import zlib

H = {1: hashlib.sha256, 2: hashlib.sha384}
K32 = bytes.fromhex("5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03")
K48 = K32 + bytes.fromhex("ffc344bcf442e2dd6d8bc4870b5d5b03")
HOST = "nqn.psk-test-host"
SUB = "nqn.psk-test-subsys"
# NQNs at their 223-byte limit: a version 1 identity of 526 bytes.
LONG_HOST = "nqn.2014-08.org.nvmexpress:uuid:" + "h" * (223 - 32)
LONG_SUB = "nqn.2026-11.io.nvmefs.testbed:" + "s" * (223 - 30)

# What libnvme's test/psk.c expects (test_data_psk, test_data_identity{,_compat}).
LIBNVME_KEYS = {
    (0, K32): "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
    (1, K32): "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
    (2, K48): "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
}
LIBNVME_IDS = {
    (1, False): "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=",
    (2, False): "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a",
    (1, True): "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys 66GuqV08TsAGII39teWUfwQwizjv06Jy8jOcX3NAAzM=",
    (2, True): "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys RsKmYJ3nAn1ApjjMloJFbAkLPivONDAX/xW327YBUsn2eGShXSjCZvBaOxscLqmz",
}


def hkdf(h, key, info, length):
    prk = hmac.new(b"\0" * h().digest_size, key, h).digest()
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), h).digest()
        out += t
        i += 1
    return out[:length]


def label(length, lab, ctx, compat):
    lab = b"tls13 " + lab
    if compat:
        return struct.pack("<H", length) + lab + ctx
    return struct.pack(">H", length) + bytes([len(lab)]) + lab + bytes([len(ctx)]) + ctx


def interchange(hh, key):
    crc = struct.pack("<I", zlib.crc32(key))
    return "NVMeTLSkey-1:%02x:%s:" % (hh, base64.b64encode(key + crc).decode())


def derive(hh, key, host, sub, version, compat):
    n = len(key)
    retained = key if hh == 0 else hkdf(H[hh], key, label(n, b"HostNQN", host.encode(), compat), n)
    cipher = hh or (1 if n == 32 else 2)
    if version == 1:
        mac = hmac.new(retained, (host + " " + sub + " NVMe-over-Fabrics").encode(), H[cipher])
        digest = base64.b64encode(mac.digest()).decode()
        identity = "NVMe1R%02d %s %s %s" % (cipher, host, sub, digest)
        ctx = ("%02d %s" % (cipher, digest)).encode()
    else:
        identity = "NVMe0R%02d %s %s" % (cipher, host, sub)
        ctx = identity.encode()
    return retained, identity, hkdf(H[cipher], retained, label(n, b"nvme-tls-psk", ctx, compat), n)


def block():
    for (hh, key), text in LIBNVME_KEYS.items():
        assert interchange(hh, key) == text, (hh, text)
    for (hh, compat), want in LIBNVME_IDS.items():
        assert derive(hh, K32 if hh == 1 else K48, HOST, SUB, 1, compat)[1] == want, want
    cases = []
    for compat in (False, True):
        for hh, key in ((0, K32), (0, K48), (1, K32), (2, K48)):
            for version in (0, 1):
                cases.append((hh, key, HOST, SUB, version, compat))
        cases.append((1, K32, LONG_HOST, LONG_SUB, 1, compat))
        cases.append((2, K48, LONG_HOST, LONG_SUB, 1, compat))
    lines = ["/* BEGIN tls_vectors.py */", "static const struct tls_vector vectors[] = {"]
    for hh, key, host, sub, version, compat in cases:
        retained, identity, psk = derive(hh, key, host, sub, version, compat)
        lines += ['\t{ "%s",' % interchange(hh, key),
                  '\t  %s, %s, %d, %s,' % ("LONG_HOST" if host == LONG_HOST else '"%s"' % host,
                                           "LONG_SUB" if sub == LONG_SUB else '"%s"' % sub,
                                           version, "true" if compat else "false"),
                  '\t  "%s",' % identity.replace(LONG_HOST, '" LONG_HOST "').replace(LONG_SUB, '" LONG_SUB "'),
                  '\t  "%s",' % retained.hex(),
                  '\t  "%s" },' % psk.hex()]
    lines += ["};", "/* END tls_vectors.py */"]
    return "\n".join(lines).replace('"" ', "").replace(' ""', "") + "\n"


def generated(hh, sess, c1, c2, host, sub):
    """Secure concatenation: the generated PSK HMAC(KS, C1 || C2), then as version 1."""
    gen = hmac.new(sess, c1 + c2, H[hh]).digest()
    mac = hmac.new(gen, (host + " " + sub + " NVMe-over-Fabrics").encode(), H[hh])
    digest = base64.b64encode(mac.digest()).decode()
    identity = "NVMe1G%02d %s %s %s" % (hh, host, sub, digest)
    ctx = ("%02d %s" % (hh, digest)).encode()
    return identity, hkdf(H[hh], gen, label(len(gen), b"nvme-tls-psk", ctx, False), len(gen))


def concat_block():
    lines = ["/* BEGIN tls_vectors.py concat */",
             "static const struct concat_vector concat_vectors[] = {"]
    for hh in (1, 2):
        n = H[hh]().digest_size
        # A session key is the DH group's size (256 bytes for ffdhe2048); any will do here.
        sess = bytes((7 * i + hh) & 0xff for i in range(64))
        c1 = bytes((3 * i + 1) & 0xff for i in range(n))
        c2 = bytes((5 * i + 2) & 0xff for i in range(n))
        identity, psk = generated(hh, sess, c1, c2, HOST, SUB)
        lines += ['	{ %d, "%s",' % (hh, sess.hex()),
                  '	  "%s",' % c1.hex(),
                  '	  "%s",' % c2.hex(),
                  '	  "%s",' % identity,
                  '	  "%s" },' % psk.hex()]
    lines += ["};", "/* END tls_vectors.py concat */"]
    return "\n".join(lines) + "\n"


def check(text, begin, end, out):
    start = text.index(begin)
    stop = text.index(end) + len(end) + 1
    if text[start:stop] != out:
        sys.exit("%s: the vectors are not what tls_vectors.py prints" % sys.argv[2])


def main():
    out, concat = block(), concat_block()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        text = open(sys.argv[2]).read()
        check(text, "/* BEGIN tls_vectors.py */", "/* END tls_vectors.py */", out)
        check(text, "/* BEGIN tls_vectors.py concat */", "/* END tls_vectors.py concat */", concat)
        return
    sys.stdout.write(out + "\n" + concat)


if __name__ == "__main__":
    main()
