/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the TLS PSKs of NVMe/TCP (src/lib/ctrl/tls_key.c): the
 * interchange form, the retained PSK, identities 0 and 1 and the TLS PSK,
 * in RFC 8446's HkdfLabel and in libnvme's before 1.16 (compat), and secure
 * concatenation's generated one.
 *
 * The known answers come from tests/unit/data/tls_vectors.py (Python's
 * hmac, hashlib, base64, zlib), which first asserts the keys and
 * identities libnvme's own test/psk.c expects; `tls_vectors.py --check` on
 * this file says whether the block below is still what the script prints.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "test_util.h"

#include <nvmefs/nvmefs.h>

#include "ctrl/tls_key.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* 223 bytes each, NVMe's longest NQN. */
#define LONG_HOST "nqn.2014-08.org.nvmexpress:uuid:" \
	"hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh" \
	"hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh" \
	"hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"
#define LONG_SUB "nqn.2026-11.io.nvmefs.testbed:" \
	"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss" \
	"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss" \
	"sssssssssssssssssssssssssssssssss"

struct tls_vector {
	const char *text;
	const char *hostnqn;
	const char *subnqn;
	unsigned int version;
	bool compat;
	const char *identity;
	const char *retained;	/* hex */
	const char *psk;	/* hex */
};

/* BEGIN tls_vectors.py */
static const struct tls_vector vectors[] = {
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, false,
	  "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "ec85300ba827726bd3bc4fc07f3a34aec5fe7c8ccac05fefc2f021c74e0df9ef" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, false,
	  "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys quJVUJjp/BImWR0UQay/MjSfEgyAr6TyBOWybS/B404=",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "a45d08ee4639c7570729bb3e57e905e466a49a15ece5401af906830c4d3bdb0b" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, false,
	  "NVMe0R02 nqn.psk-test-host nqn.psk-test-subsys",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "b5dd464067a9378ba2226d71f005d7ac90ed8696e4b2142084384365597201d33ba26f8aeeb529574d4267bd294a828e" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, false,
	  "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys dyoPfSR5TBRaPMI5/FXUlJv2XMDtmQ7Q9Xrj89aBKbyRYkQeT5V1wNvIpnMDRTQW",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "1569317890995e207ab4cf148bc53470561e148030cb019b1d87fb4bc5794a791ed5ee68676c952ce5f11f3786e900d4" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, false,
	  "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys",
	  "073311dec37e219ff3acd43f130130c5bdd443c066e1cc3424e49030234ff7d5",
	  "05c6503551ad136e6ee32e6eeb3f6d500b69701d84ec71e328f65c7f51566f68" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, false,
	  "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=",
	  "073311dec37e219ff3acd43f130130c5bdd443c066e1cc3424e49030234ff7d5",
	  "8fc3c0badfd4c0c66fa3ca33aadd0314f85536cc9bc47338b60f3e6e563786ca" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, false,
	  "NVMe0R02 nqn.psk-test-host nqn.psk-test-subsys",
	  "73973a1b51a9acdde29a0610ac6a3ef852cf45936cca6830a661d18f68502f1a4c7a8ecb37524e0b1f7087cb4d680ad9",
	  "f42ba63824cdfe421914c582921f85b5b5b7e2d4df084caeedc9be20b212e8bb0fe8a23e9d59a1c8fc6449da4970a78d" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, false,
	  "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a",
	  "73973a1b51a9acdde29a0610ac6a3ef852cf45936cca6830a661d18f68502f1a4c7a8ecb37524e0b1f7087cb4d680ad9",
	  "a2b2f943f479fc682555cec89857c80ed004ce92f32a973d5764155bb7e36b17a85368a0666d250afac9282dda2e62ca" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  LONG_HOST, LONG_SUB, 1, false,
	  "NVMe1R01 " LONG_HOST " " LONG_SUB " 8kSE0eQNEWQYEFh8lVRMUjnOBFd0UuUjPGmHvpnqnoI=",
	  "a4501d2fb7d2b7785120952624641fd27f1403f5280a1c231b5ccc8112819da5",
	  "45d16b5225b6e27631dcbb39a9f1850b8b89d6ed05a66175b8fe7e55fceb5823" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  LONG_HOST, LONG_SUB, 1, false,
	  "NVMe1R02 " LONG_HOST " " LONG_SUB " 530Wx74+xkSsqw+3zNgfLk6YgtAsralTwbykgpomiqXms8r2erGMqdst4ytgRu1g",
	  "bf1ade121b65832131fab42ed14c1cd184e88a68761115353fe529117d77b5a376639d93881d363e38066bca9c17368e",
	  "2e98afc5b290dc012a4b9a2ac1e029275f429195c1d9d3c79cbf9b8c4acb1d8c0847b46723270723db4b291e0c81fc37" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, true,
	  "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "e2b16189378b34adba9fec995ab479040cedec0bc7c6b47728ee4d8de6ff52ba" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, true,
	  "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys quJVUJjp/BImWR0UQay/MjSfEgyAr6TyBOWybS/B404=",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "d50f6d3dd79345b6e8217744524df5ac0dc66964ff70cc5fd18e1b9d57ce7fcf" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, true,
	  "NVMe0R02 nqn.psk-test-host nqn.psk-test-subsys",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "9cb989c1d40fdcdc1bb729d6691901bfcd0b310f060f558d4a63c7afc2a0923f2d0610073fded349d25d6b3f91980826" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, true,
	  "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys dyoPfSR5TBRaPMI5/FXUlJv2XMDtmQ7Q9Xrj89aBKbyRYkQeT5V1wNvIpnMDRTQW",
	  "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03ffc344bcf442e2dd6d8bc4870b5d5b03",
	  "f6259eaeaab509d2e42bc494098bd1ccc4334b2528a1a34ea95fbe27e3fa75e3422d260a299110afa42170521b02d689" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, true,
	  "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys",
	  "ad4cdadfcbaf4e353fcbd09aac891c4d75c5300fe5ee7bb04ae87726a312eddc",
	  "09fb1983ac6d6d0353e7cae4f23daddd651c367fa347c59d9cf6936f5a83eafb" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, true,
	  "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys 66GuqV08TsAGII39teWUfwQwizjv06Jy8jOcX3NAAzM=",
	  "ad4cdadfcbaf4e353fcbd09aac891c4d75c5300fe5ee7bb04ae87726a312eddc",
	  "b9f5ab2a41ba6e72a23a12066302a2f775fa6c0942c8e0b18ca8ac07edf305e2" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 0, true,
	  "NVMe0R02 nqn.psk-test-host nqn.psk-test-subsys",
	  "12d2452bc4783f50286bf940ad1caa05a304065e379024d9278ca7c9d8a42400c47029f198bfcdf5f14c07cb04eb7306",
	  "2ee4754186a625b28a3936ef4a40d839c3ad958b2e017562ee07e2501f172ce999dc9c29033ea7ee33f814f192c13f47" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  "nqn.psk-test-host", "nqn.psk-test-subsys", 1, true,
	  "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys RsKmYJ3nAn1ApjjMloJFbAkLPivONDAX/xW327YBUsn2eGShXSjCZvBaOxscLqmz",
	  "12d2452bc4783f50286bf940ad1caa05a304065e379024d9278ca7c9d8a42400c47029f198bfcdf5f14c07cb04eb7306",
	  "fcefe2e2a2e682b1447dcabf1ec268f78f08c63cd075753abcc8bda2c5c34d48d3014aa8d76ad80107e4f5c9f27e2149" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
	  LONG_HOST, LONG_SUB, 1, true,
	  "NVMe1R01 " LONG_HOST " " LONG_SUB " YPpZz2k7kdT9Haa4V3R2VZKzL6BdSsYKshpz2JYZhOQ=",
	  "049d6707391e3b4818a37eaabcbe3699df53b27b2528312b49ba46bb3749975a",
	  "c4cbd2f8e23100c21ca74fe5a27fef45699d1c9a51734993b3f79f68de61b32f" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  LONG_HOST, LONG_SUB, 1, true,
	  "NVMe1R02 " LONG_HOST " " LONG_SUB " UcSy1ssuZBUIFYwhm6jGk6i61nBnGPkDSOU8iNBOw4mIeLNatY42hjqPNUYHR0qp",
	  "7d311fbe02a680fc723a33273d2895feb665b9deb13637292ebdbb26cdc218446246a324527e5196fa1a0ff69cdd0d42",
	  "cbac0f9dae67b3a30b7ca66cf959fe25fae783383af0ee02579314e7cc9a99bca325362333f787cecfec30e3d229a787" },
};
/* END tls_vectors.py */

struct concat_vector {
	unsigned int hash;
	const char *sess, *c1, *c2;	/* hex */
	const char *identity;
	const char *psk;		/* hex */
};

/* BEGIN tls_vectors.py concat */
static const struct concat_vector concat_vectors[] = {
	{ 1, "01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6fd040b121920272e353c434a51585f666d747b828990979ea5acb3ba",
	  "0104070a0d101316191c1f2225282b2e3134373a3d404346494c4f5255585b5e",
	  "02070c11161b20252a2f34393e43484d52575c61666b70757a7f84898e93989d",
	  "NVMe1G01 nqn.psk-test-host nqn.psk-test-subsys RQzvRRgfyMCdhGJo1e0rWr/+4WW+ctiz6Bo1EQGW/0Q=",
	  "8a6b35304f6d57a49dce972695181d7b40180d9606aad54698fb6c6bcf75ae92" },
	{ 2, "020910171e252c333a41484f565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7fe050c131a21282f363d444b525960676e757c838a91989fa6adb4bb",
	  "0104070a0d101316191c1f2225282b2e3134373a3d404346494c4f5255585b5e6164676a6d707376797c7f8285888b8e",
	  "02070c11161b20252a2f34393e43484d52575c61666b70757a7f84898e93989da2a7acb1b6bbc0c5cacfd4d9dee3e8ed",
	  "NVMe1G02 nqn.psk-test-host nqn.psk-test-subsys sjNrnii/plXIgfT/1lHKPluHb6r9nx8wc8CPiGi5yMY5DWxNSTkiy4+ppfTbhe3G",
	  "4420e6d600dd475afdcea4a16e35fead7177c5c3c0edd6d9b44ffda2c1bfa50a1390a1b70aed2638b01cb4106bd05ccd" },
};
/* END tls_vectors.py concat */

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t i, n = strlen(hex) / 2;

	for (i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", &out[i]);
	return n;
}

START_TEST(test_long_nqns)
{
	ck_assert_uint_eq(strlen(LONG_HOST), 223);
	ck_assert_uint_eq(strlen(LONG_SUB), 223);
}
END_TEST

START_TEST(test_vector)
{
	const struct tls_vector *v = &vectors[_i];
	struct nvmefs_auth_key *key = NULL, *retained = NULL;
	struct nvmefs_tls_psk psk;
	char text[NVMEFS_TLS_KEY_TEXT_MAX];
	uint8_t want[64];
	size_t n;

	ck_assert_msg(nvmefs_tls_key_parse(v->text, &key) == 0, "%s", nvmefs_errmsg());
	ck_assert_int_eq(nvmefs_tls_key_format(key->hash, key->data, key->len, text,
					       sizeof(text)), 0);
	ck_assert_str_eq(text, v->text);

	ck_assert_msg(nvmefs_tls_retained(key, v->hostnqn, v->compat, &retained) == 0, "%s",
		      nvmefs_errmsg());
	n = unhex(v->retained, want);
	ck_assert_uint_eq(retained->len, n);
	assert_bytes(retained->data, want, n, "retained PSK");

	ck_assert_msg(nvmefs_tls_psk_derive(key, v->hostnqn, v->subnqn, v->version, v->compat,
					    &psk) == 0, "%s", nvmefs_errmsg());
	ck_assert_str_eq(psk.identity, v->identity);
	n = unhex(v->psk, want);
	ck_assert_uint_eq(psk.key->len, n);
	ck_assert_uint_eq(psk.key->hash, n == 32 ? 1 : 2);
	assert_bytes(psk.key->data, want, n, "TLS PSK");
	nvmefs_tls_psk_clear(&psk);
	ck_assert_ptr_null(psk.identity);
	ck_assert_ptr_null(psk.key);
	nvmefs_auth_key_free(retained);
	nvmefs_auth_key_free(key);
}
END_TEST

/* Secure concatenation: the generated PSK from the session key and both
 * challenges, its identity and TLS PSK, for SHA-256 and SHA-384. */
START_TEST(test_concat_vector)
{
	const struct concat_vector *v = &concat_vectors[_i];
	uint8_t c1[64], c2[64], want[64];
	struct nvmefs_auth_key *sess = NULL;
	struct nvmefs_tls_psk *psk = NULL;
	size_t hl, n;

	hl = unhex(v->c1, c1);
	ck_assert_uint_eq(unhex(v->c2, c2), hl);
	ck_assert_int_eq(nvmefs_secret_alloc(strlen(v->sess) / 2, 0, &sess), 0);
	unhex(v->sess, sess->data);
	ck_assert_msg(nvmefs_tls_psk_generated(v->hash, sess, c1, c2, hl, "nqn.psk-test-host",
					       "nqn.psk-test-subsys", &psk) == 0, "%s",
		      nvmefs_errmsg());
	ck_assert_str_eq(psk->identity, v->identity);
	n = unhex(v->psk, want);
	ck_assert_uint_eq(psk->key->len, n);
	ck_assert_uint_eq(psk->key->hash, v->hash);
	assert_bytes(psk->key->data, want, n, "TLS PSK");
	nvmefs_tls_psk_free(psk);
	/* SHA-512 has no TLS suite. */
	ck_assert_int_eq(nvmefs_tls_psk_generated(3, sess, c1, c2, 64, "nqn.h", "nqn.s", &psk),
			 -EINVAL);
	ck_assert_ptr_null(psk);
	nvmefs_auth_key_free(sess);
}
END_TEST

/* The 32-byte key of the vectors with HH 01, as the variations start from. */
#define K32_01 "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:"

static const struct {
	const char *text;
	int err;
	const char *msg;
} bad[] = {
	{ "DHHC-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EINVAL,
	  "not a TLS PSK: it does not start with \"NVMeTLSkey-1:\"" },
	{ "NVMeTLSkey-1:03:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EOPNOTSUPP,
	  "TLS PSK: the hash indicator is not 00 (no transform), 01 (SHA-256) or 02 (SHA-384)" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9Lr*:", -EILSEQ,
	  "TLS PSK: the key is not base64" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:x", -EILSEQ,
	  "TLS PSK: the key is not base64" },
	{ "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", -EMSGSIZE,
	  "TLS PSK: the key is 32 bytes, but its hash indicator 02 (SHA-384) needs 48" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
	  -EMSGSIZE, "TLS PSK: the key is 48 bytes, but its hash indicator 01 (SHA-256) needs 32" },
	{ "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZVRLbtnN9AQb2WXW3c9+wEf/D"
	  "RLz0QuLdbYvEhwtdWwNf9LrZ:", -EMSGSIZE, "TLS PSK: the key is 68 bytes, not 32 or 48" },
	{ "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrY:", -EBADMSG,
	  "TLS PSK: its CRC does not match the key (mistyped or truncated?)" },
};

START_TEST(test_parse_bad)
{
	struct nvmefs_auth_key *key = NULL;
	int err = nvmefs_tls_key_parse(bad[_i].text, &key);

	ck_assert_msg(err == bad[_i].err, "\"%s\": %d, want %d (%s)", bad[_i].text, err,
		      bad[_i].err, nvmefs_errmsg());
	ck_assert_ptr_null(key);
	ck_assert_str_eq(nvmefs_errmsg(), bad[_i].msg);
}
END_TEST

START_TEST(test_parse_no_final_colon)
{
	char text[sizeof(K32_01)];
	struct nvmefs_auth_key *key = NULL;

	memcpy(text, K32_01, sizeof(text));
	text[strlen(text) - 1] = '\0';
	ck_assert_int_eq(nvmefs_tls_key_parse(text, &key), 0);
	ck_assert_uint_eq(key->len, 32);
	ck_assert_uint_eq(key->hash, 1);
	nvmefs_auth_key_free(key);
}
END_TEST

START_TEST(test_format_bad)
{
	uint8_t raw[48] = { 0 };
	char text[NVMEFS_TLS_KEY_TEXT_MAX];

	ck_assert_int_eq(nvmefs_tls_key_format(1, raw, 48, text, sizeof(text)), -EMSGSIZE);
	ck_assert_int_eq(nvmefs_tls_key_format(2, raw, 32, text, sizeof(text)), -EMSGSIZE);
	ck_assert_int_eq(nvmefs_tls_key_format(3, raw, 32, text, sizeof(text)), -EINVAL);
	ck_assert_int_eq(nvmefs_tls_key_format(0, raw, 40, text, sizeof(text)), -EINVAL);
	ck_assert_int_eq(nvmefs_tls_key_format(2, raw, 48, text, sizeof(text) - 1), -ENOSPC);
	ck_assert_int_eq(nvmefs_tls_key_format(2, raw, 48, text, sizeof(text)), 0);
	ck_assert_uint_eq(strlen(text), sizeof(text) - 1);
}
END_TEST

/* RFC 8446 gives the context one length byte: a version 0 identity of two
 * long NQNs cannot be a context; compat has no length byte to overflow. */
START_TEST(test_context_limit)
{
	struct nvmefs_auth_key *key = NULL;
	struct nvmefs_tls_psk psk;

	ck_assert_int_eq(nvmefs_tls_key_parse(K32_01, &key), 0);
	ck_assert_int_eq(nvmefs_tls_psk_derive(key, LONG_HOST, LONG_SUB, 0, false, &psk),
			 -EMSGSIZE);
	ck_assert_ptr_null(psk.identity);
	ck_assert_ptr_null(psk.key);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "identity version 1"));
	ck_assert_int_eq(nvmefs_tls_psk_derive(key, LONG_HOST, LONG_SUB, 0, true, &psk), 0);
	ck_assert_uint_eq(strlen(psk.identity), 9 + 223 + 1 + 223);
	nvmefs_tls_psk_clear(&psk);
	ck_assert_int_eq(nvmefs_tls_psk_derive(key, "h", "s", 2, false, &psk), -EINVAL);
	nvmefs_auth_key_free(key);
}
END_TEST

/* The public API the commands use: what check-tls-key and gen-tls-key print. */
START_TEST(test_public_api)
{
	struct nvmefs_tls_key_info info;
	char text[NVMEFS_TLS_KEY_SIZE], other[NVMEFS_TLS_KEY_SIZE];
	char *id = NULL;
	uint8_t raw[48];

	ck_assert_int_eq(nvmefs_tls_key_check(vectors[0].text, &info), 0);
	ck_assert_uint_eq(info.hmac, 0);
	ck_assert_uint_eq(info.len, 32);
	ck_assert_uint_eq(info.crc, 0xd9baf45f);
	ck_assert_uint_eq(info.cipher, 1);
	/* Every malformation is -EINVAL to the API, with the parser's reason. */
	ck_assert_int_eq(nvmefs_tls_key_check(bad[7].text, &info), -EINVAL);
	ck_assert_str_eq(nvmefs_errmsg(), bad[7].msg);
	ck_assert_int_eq(nvmefs_tls_key_check(NULL, &info), -EINVAL);

	for (size_t i = 0; i < ARRAY_LEN(vectors); i++) {
		const struct tls_vector *v = &vectors[i];

		ck_assert_msg(nvmefs_tls_key_identity(v->text, v->hostnqn, v->subnqn, v->version,
						      v->compat, &id) == 0, "%s", nvmefs_errmsg());
		ck_assert_str_eq(id, v->identity);
		free(id);
	}
	id = NULL;
	ck_assert_int_eq(nvmefs_tls_key_identity(K32_01, "nqn.h", "sub", 0, false, &id), -EINVAL);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "--subsysnqn"));
	ck_assert_int_eq(nvmefs_tls_key_identity(K32_01, "host", "nqn.s", 0, false, &id), -EINVAL);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "--hostnqn"));
	ck_assert_int_eq(nvmefs_tls_key_identity(bad[0].text, "nqn.h", "nqn.s", 0, false, &id),
			 -EINVAL);
	ck_assert_int_eq(nvmefs_tls_key_identity(K32_01, "nqn.h", "nqn.s", 2, false, &id), -EINVAL);
	ck_assert_ptr_null(id);

	ck_assert_uint_eq(unhex("5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03",
				raw), 32);
	ck_assert_int_eq(nvmefs_tls_key_make(1, raw, 32, text, sizeof(text)), 0);
	ck_assert_str_eq(text, K32_01);
	ck_assert_int_eq(nvmefs_tls_key_make(0, raw, 32, text, sizeof(text)), -EINVAL);
	ck_assert_int_eq(nvmefs_tls_key_make(3, raw, 32, text, sizeof(text)), -EINVAL);
	ck_assert_int_eq(nvmefs_tls_key_make(2, raw, 32, text, sizeof(text)), -EINVAL);
	/* Random: two keys differ, and each reads back as what it was made for. */
	ck_assert_int_eq(nvmefs_tls_key_make(2, NULL, 48, text, sizeof(text)), 0);
	ck_assert_int_eq(nvmefs_tls_key_make(2, NULL, 48, other, sizeof(other)), 0);
	ck_assert_str_ne(text, other);
	ck_assert_int_eq(nvmefs_tls_key_check(text, &info), 0);
	ck_assert_uint_eq(info.hmac, 2);
	ck_assert_uint_eq(info.len, 48);
	ck_assert_uint_eq(info.cipher, 2);
}
END_TEST

static Suite *tls_key_suite(void)
{
	Suite *s = suite_create("tls_key");
	TCase *tc = tcase_create("keys");

	tcase_add_test(tc, test_long_nqns);
	tcase_add_loop_test(tc, test_concat_vector, 0, (int)ARRAY_LEN(concat_vectors));
	tcase_add_loop_test(tc, test_vector, 0, ARRAY_LEN(vectors));
	tcase_add_loop_test(tc, test_parse_bad, 0, ARRAY_LEN(bad));
	tcase_add_test(tc, test_parse_no_final_colon);
	tcase_add_test(tc, test_format_bad);
	tcase_add_test(tc, test_context_limit);
	tcase_add_test(tc, test_public_api);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(tls_key_suite(), CK_NORMAL);
}
