/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cryptography of NVMe in-band authentication (DH-HMAC-CHAP, NVMe Base
 * Specification 2.0, 8.13.5), host side: secrets in nvme-cli's
 * "DHHC-1:NN:...:" form, their transformation, the responses R1 and R2, and
 * the FFDHE exchange with the augmented challenge.
 *
 * Where the specification leaves room, the Linux kernel decides, since its
 * target (nvmet) is the controller we are tested against and its initiator
 * the one targets are tested with: the transformed key is used at its full
 * hash length, the DH values and the session key are zero-padded to the
 * group's size, any key length goes with any hash indicator.
 *
 * All of the arithmetic is OpenSSL 3's (EVP); this file only lays out bytes.
 * Secrets and the keys derived from them live in locked pages of their own
 * (struct nvmefs_auth_key), not in the heap, where a freed block keeps its
 * bytes until reused; what OpenSSL holds while it works (HMAC contexts, the
 * DH private value) is in its heap, and it wipes that when freed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/dh.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "auth_crypto.h"
#include "../base/error.h"

static const struct {
	const char *name;
	const char *ossl;	/* OpenSSL's digest name */
	size_t len;
} hashes[] = {
	[NVMEFS_AUTH_HASH_SHA256] = { "SHA-256", OSSL_DIGEST_NAME_SHA2_256, 32 },
	[NVMEFS_AUTH_HASH_SHA384] = { "SHA-384", OSSL_DIGEST_NAME_SHA2_384, 48 },
	[NVMEFS_AUTH_HASH_SHA512] = { "SHA-512", OSSL_DIGEST_NAME_SHA2_512, 64 },
};

/* Our names are OpenSSL's group names too. */
static const struct {
	const char *name;
	size_t len;
} dhgroups[] = {
	[NVMEFS_AUTH_DHGROUP_NULL] = { "null", 0 },
	[NVMEFS_AUTH_DHGROUP_2048] = { "ffdhe2048", 256 },
	[NVMEFS_AUTH_DHGROUP_3072] = { "ffdhe3072", 384 },
	[NVMEFS_AUTH_DHGROUP_4096] = { "ffdhe4096", 512 },
	[NVMEFS_AUTH_DHGROUP_6144] = { "ffdhe6144", 768 },
	[NVMEFS_AUTH_DHGROUP_8192] = { "ffdhe8192", 1024 },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *nvmefs_auth_hash_name(unsigned int hash)
{
	return hash < ARRAY_LEN(hashes) ? hashes[hash].name : NULL;
}

size_t nvmefs_auth_hash_len(unsigned int hash)
{
	return hash < ARRAY_LEN(hashes) ? hashes[hash].len : 0;
}

const char *nvmefs_auth_dhgroup_name(unsigned int group)
{
	return group < ARRAY_LEN(dhgroups) ? dhgroups[group].name : NULL;
}

size_t nvmefs_auth_dhgroup_len(unsigned int group)
{
	return group < ARRAY_LEN(dhgroups) ? dhgroups[group].len : 0;
}

/* "DHHC-1:NN:<base64 of key || le32 CRC-32 of key>:", as nvme-cli writes it. */
static const struct nvmefs_secret_form dhchap_form = {
	.prefix = "DHHC-1:",
	.what = "DH-HMAC-CHAP secret",
	.max_hash = NVMEFS_AUTH_HASH_SHA512,
	.hashes = "00 (none), 01 (SHA-256), 02 (SHA-384) or 03 (SHA-512)",
	.lens = { 32, 48, 64 },
	.lens_text = "32, 48 or 64",
};

int nvmefs_auth_key_parse(const char *secret, struct nvmefs_auth_key **keyp)
{
	return nvmefs_secret_parse(&dhchap_form, secret, keyp);
}

/* ------------------------------------------------------------------------ */
/* HMAC and hash                                                            */
/* ------------------------------------------------------------------------ */

static int check_hash(unsigned int hash)
{
	if (!nvmefs_auth_hash_len(hash))
		return nvmefs_error(-EINVAL, "DH-HMAC-CHAP: hash function %u is not defined", hash);
	return 0;
}

int nvmefs_auth_hmac(unsigned int hash, const uint8_t *key, size_t key_len,
		     const struct nvmefs_auth_chunk *in, size_t n, uint8_t *out)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 (char *)hashes[hash].ossl, 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_HMAC, NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	size_t i, out_len = 0;
	int ok;

	ok = ctx && EVP_MAC_init(ctx, key, key_len, params);
	for (i = 0; ok && i < n; i++)
		ok = EVP_MAC_update(ctx, in[i].p, in[i].len);
	ok = ok && EVP_MAC_final(ctx, out, &out_len, hashes[hash].len) &&
	     out_len == hashes[hash].len;
	/* Frees cleanse the key schedule the context kept. */
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return ok ? 0 : nvmefs_ossl_error(-EIO, "HMAC");
}

static int digest(unsigned int hash, const uint8_t *in, size_t len, uint8_t *out)
{
	EVP_MD *md = EVP_MD_fetch(NULL, hashes[hash].ossl, NULL);
	unsigned int out_len = 0;
	int ok;

	ok = md && EVP_Digest(in, len, out, &out_len, md, NULL) &&
	     out_len == hashes[hash].len;
	EVP_MD_free(md);
	return ok ? 0 : nvmefs_ossl_error(-EIO, "DH-HMAC-CHAP: hash");
}

int nvmefs_auth_key_transform(const struct nvmefs_auth_key *key, const char *nqn,
			      struct nvmefs_auth_key **outp)
{
	static const char seed[] = "NVMe-over-Fabrics";
	const struct nvmefs_auth_chunk in[] = {
		{ nqn, strlen(nqn) },
		{ seed, sizeof(seed) - 1 },
	};
	struct nvmefs_auth_key *out;
	int err;

	if (key->hash == NVMEFS_AUTH_HASH_NONE) {
		err = nvmefs_secret_alloc(key->len, key->hash, &out);
		if (err)
			return err;
		memcpy(out->data, key->data, key->len);
		*outp = out;
		return 0;
	}
	err = check_hash(key->hash);
	if (err)
		return err;
	/* As long as the hash, whatever the key's length: current kernels
	 * (our testbed's 6.12 among them) key the responses with all of it;
	 * those before late 2023 took only the key's length of it. */
	err = nvmefs_secret_alloc(hashes[key->hash].len, key->hash, &out);
	if (err)
		return err;
	err = nvmefs_auth_hmac(key->hash, key->data, key->len, in, ARRAY_LEN(in), out->data);
	if (err) {
		nvmefs_auth_key_free(out);
		return err;
	}
	*outp = out;
	return 0;
}

int nvmefs_auth_augment_challenge(unsigned int hash, const struct nvmefs_auth_key *sess,
				  const uint8_t *c, uint8_t *out)
{
	struct nvmefs_auth_key *hashed;
	struct nvmefs_auth_chunk in;
	int err;

	err = check_hash(hash);
	if (err)
		return err;
	/* H(session key) is as secret as the key itself. */
	err = nvmefs_secret_alloc(hashes[hash].len, 0, &hashed);
	if (err)
		return err;
	err = digest(hash, sess->data, sess->len, hashed->data);
	if (!err) {
		in = (struct nvmefs_auth_chunk){ c, hashes[hash].len };
		err = nvmefs_auth_hmac(hash, hashed->data, hashed->len, &in, 1, out);
	}
	nvmefs_auth_key_free(hashed);
	return err;
}

/*
 * R1 and R2 differ in the key, the NQN it is transformed with, the label
 * and the order of the NQNs; the rest is the same layout.
 */
static int response(const struct nvmefs_auth_exchange *x, const struct nvmefs_auth_key *key,
		    const char *key_nqn, const uint8_t *c, uint32_t seq, const char *label,
		    const char *nqn1, const char *nqn2, uint8_t *out)
{
	uint8_t aug[NVMEFS_AUTH_MAX_HASH_LEN];
	uint8_t head[7] = {
		(uint8_t)seq, (uint8_t)(seq >> 8), (uint8_t)(seq >> 16), (uint8_t)(seq >> 24),
		(uint8_t)x->tid, (uint8_t)(x->tid >> 8),
		x->sc_c,
	};
	static const uint8_t zero;
	struct nvmefs_auth_key *tkey;
	struct nvmefs_auth_chunk in[] = {
		{ c, 0 },
		{ head, sizeof(head) },
		{ label, strlen(label) },
		{ nqn1, strlen(nqn1) },
		{ &zero, 1 },
		{ nqn2, strlen(nqn2) },
	};
	int err;

	err = check_hash(x->hash);
	if (err)
		return err;
	in[0].len = hashes[x->hash].len;
	if (x->sess) {
		err = nvmefs_auth_augment_challenge(x->hash, x->sess, c, aug);
		if (err)
			return err;
		in[0].p = aug;
	}
	err = nvmefs_auth_key_transform(key, key_nqn, &tkey);
	if (!err) {
		err = nvmefs_auth_hmac(x->hash, tkey->data, tkey->len, in, ARRAY_LEN(in), out);
		nvmefs_auth_key_free(tkey);
	}
	OPENSSL_cleanse(aug, sizeof(aug));
	return err;
}

int nvmefs_auth_host_response(const struct nvmefs_auth_exchange *x,
			      const struct nvmefs_auth_key *host_key,
			      const uint8_t *c1, uint32_t s1, uint8_t *r1)
{
	return response(x, host_key, x->hostnqn, c1, s1, "HostHost",
			x->hostnqn, x->subsysnqn, r1);
}

int nvmefs_auth_ctrl_response(const struct nvmefs_auth_exchange *x,
			      const struct nvmefs_auth_key *ctrl_key,
			      const uint8_t *c2, uint32_t s2, uint8_t *r2)
{
	return response(x, ctrl_key, x->subsysnqn, c2, s2, "Controller",
			x->subsysnqn, x->hostnqn, r2);
}

/* ------------------------------------------------------------------------ */
/* FFDHE                                                                    */
/* ------------------------------------------------------------------------ */

struct nvmefs_auth_dh {
	unsigned int group;
	EVP_PKEY *pkey;
};

int nvmefs_auth_dh_new(unsigned int group, struct nvmefs_auth_dh **dhp)
{
	struct nvmefs_auth_dh *dh;
	EVP_PKEY_CTX *ctx;
	OSSL_PARAM params[2];
	int ok;

	if (!nvmefs_auth_dhgroup_len(group))
		return nvmefs_error(-EINVAL, "DH-HMAC-CHAP: DH group %u is not an FFDHE group",
				    group);
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		return nvmefs_error(-ENOMEM, "out of memory");
	dh->group = group;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     (char *)dhgroups[group].name, 0);
	params[1] = OSSL_PARAM_construct_end();
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	ok = ctx && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_params(ctx, params) > 0 &&
	     EVP_PKEY_generate(ctx, &dh->pkey) > 0;
	EVP_PKEY_CTX_free(ctx);
	if (!ok) {
		free(dh);
		return nvmefs_ossl_error(-EIO, "DH-HMAC-CHAP: generating a DH key pair");
	}
	*dhp = dh;
	return 0;
}

void nvmefs_auth_dh_free(struct nvmefs_auth_dh *dh)
{
	if (!dh)
		return;
	/* Clears the private value. */
	EVP_PKEY_free(dh->pkey);
	free(dh);
}

int nvmefs_auth_dh_public(const struct nvmefs_auth_dh *dh, uint8_t *buf, size_t len)
{
	BIGNUM *pub = NULL;
	int ok;

	if (len != dhgroups[dh->group].len)
		return nvmefs_error(-EINVAL, "DH-HMAC-CHAP: %s public values are %zu bytes, "
				    "not %zu", dhgroups[dh->group].name,
				    dhgroups[dh->group].len, len);
	ok = EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_PUB_KEY, &pub) &&
	     BN_bn2binpad(pub, buf, (int)len) == (int)len;
	BN_free(pub);
	return ok ? 0 : nvmefs_ossl_error(-EIO, "DH-HMAC-CHAP: exporting the DH public value");
}

/* The controller's public value as an EVP_PKEY of our group. */
static int peer_key(const struct nvmefs_auth_dh *dh, const uint8_t *peer, size_t len,
		    EVP_PKEY **keyp)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	BIGNUM *pub = BN_bin2bn(peer, (int)len, NULL);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	OSSL_PARAM *params = NULL;
	int ok;

	ok = bld && pub && ctx &&
	     OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
					     dhgroups[dh->group].name, 0) &&
	     OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, pub) &&
	     (params = OSSL_PARAM_BLD_to_param(bld)) &&
	     EVP_PKEY_fromdata_init(ctx) > 0 &&
	     EVP_PKEY_fromdata(ctx, keyp, EVP_PKEY_PUBLIC_KEY, params) > 0;
	OSSL_PARAM_free(params);
	EVP_PKEY_CTX_free(ctx);
	BN_free(pub);
	OSSL_PARAM_BLD_free(bld);
	return ok ? 0 : nvmefs_ossl_error(-EPROTO, "DH-HMAC-CHAP: the controller's DH value");
}

/*
 * Whether the controller's value y lies in the prime-order subgroup: 1 < y <
 * p - 1 and y^q = 1 (mod p). An outside value would leak bits of our private
 * value. The groups' p are safe primes (p = 2q + 1), so y^q = 1 is Euler's
 * criterion, the Legendre symbol (y/p) = 1: a gcd-like walk instead of the
 * 8192-bit exponentiation OpenSSL's own validation makes, which in a slow
 * guest took longer than nvmet lets an authentication step take (KATO).
 */
static int peer_in_subgroup(const struct nvmefs_auth_dh *dh, const uint8_t *peer, size_t len)
{
	BIGNUM *p = NULL, *y = BN_bin2bn(peer, (int)len, NULL), *p1 = NULL;
	BN_CTX *bnctx = BN_CTX_new();
	int err;

	if (!y || !bnctx || !EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_FFC_P, &p) ||
	    !(p1 = BN_dup(p)) || !BN_sub_word(p1, 1)) {
		err = nvmefs_ossl_error(-ENOMEM, "DH-HMAC-CHAP: checking the controller's DH value");
		goto out;
	}
	if (BN_cmp(y, BN_value_one()) > 0 && BN_cmp(y, p1) < 0 && BN_kronecker(y, p, bnctx) == 1)
		err = 0;
	else
		err = nvmefs_error(-EPROTO, "DH-HMAC-CHAP: the controller's DH value is not a "
				   "valid public value of its group");
out:
	BN_free(y);
	BN_free(p);
	BN_free(p1);
	BN_CTX_free(bnctx);
	return err;
}

int nvmefs_auth_dh_derive(struct nvmefs_auth_dh *dh, const uint8_t *peer, size_t len,
			  struct nvmefs_auth_key **sessp)
{
	size_t size = dhgroups[dh->group].len, out_len;
	struct nvmefs_auth_key *sess = NULL;
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	int err;

	if (len != size)
		return nvmefs_error(-EMSGSIZE, "DH-HMAC-CHAP: the controller's DH value is %zu "
				    "bytes, %s needs %zu", len, dhgroups[dh->group].name, size);
	err = peer_in_subgroup(dh, peer, len);
	if (err == 0)
		err = peer_key(dh, peer, len, &pkey);
	if (err)
		return err;
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, dh->pkey, NULL);
	/* Validated above, at a fraction of what OpenSSL's validation costs. */
	if (!ctx || EVP_PKEY_derive_init(ctx) <= 0 ||
	    EVP_PKEY_derive_set_peer_ex(ctx, pkey, 0) <= 0) {
		err = nvmefs_ossl_error(-EPROTO, "DH-HMAC-CHAP: the controller's DH value");
		goto out;
	}
	/* The kernel's session key keeps the leading zero bytes; OpenSSL's
	 * default, like DH_compute_key(), strips them. */
	if (EVP_PKEY_CTX_set_dh_pad(ctx, 1) <= 0) {
		err = nvmefs_ossl_error(-EIO, "DH-HMAC-CHAP: DH padding");
		goto out;
	}
	err = nvmefs_secret_alloc(size, 0, &sess);
	if (err)
		goto out;
	out_len = size;
	if (EVP_PKEY_derive(ctx, sess->data, &out_len) <= 0 || out_len != size) {
		err = nvmefs_ossl_error(-EPROTO, "DH-HMAC-CHAP: deriving the DH shared secret");
		goto out;
	}
	*sessp = sess;
	sess = NULL;
out:
	nvmefs_auth_key_free(sess);
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	return err;
}
