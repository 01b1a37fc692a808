/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keys of NVMe/TCP with TLS 1.3 (NVMe TCP Transport Specification,
 * 3.6.1.3 and 3.6.1.4), laid out byte for byte as libnvme and the kernel
 * lay them out, since the other end of a connection holds a key one of them
 * derived: the kernel target's keyring is filled by nvme-cli.  HKDF and
 * HMAC are OpenSSL's; this file only builds their inputs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <nvmefs/connect_opts.h>

#include "auth_crypto.h"
#include "host_id.h"
#include "tls_key.h"
#include "../base/error.h"

static const struct nvmefs_secret_form tls_form = {
	.prefix = "NVMeTLSkey-1:",
	.what = "TLS PSK",
	.max_hash = NVMEFS_AUTH_HASH_SHA384,
	.hashes = "00 (no transform), 01 (SHA-256) or 02 (SHA-384)",
	.lens = { 32, 48 },
	.lens_text = "32 or 48",
};

/* HH 01 and 02 name the hash and with it the key's length. */
static int check_len(unsigned int hash, size_t len)
{
	if (hash != NVMEFS_AUTH_HASH_NONE && len != nvmefs_auth_hash_len(hash))
		return nvmefs_error(-EMSGSIZE, "TLS PSK: the key is %zu bytes, but its hash "
				    "indicator %02u (%s) needs %zu", len, hash,
				    nvmefs_auth_hash_name(hash), nvmefs_auth_hash_len(hash));
	return 0;
}

int nvmefs_tls_key_parse(const char *text, struct nvmefs_auth_key **keyp)
{
	struct nvmefs_auth_key *key;
	int err;

	err = nvmefs_secret_parse(&tls_form, text, &key);
	if (err)
		return err;
	err = check_len(key->hash, key->len);
	if (err) {
		nvmefs_auth_key_free(key);
		return err;
	}
	*keyp = key;
	return 0;
}

int nvmefs_tls_key_format(unsigned int hash, const uint8_t *key, size_t len, char *out,
			  size_t size)
{
	int err = hash <= NVMEFS_AUTH_HASH_SHA384 ? check_len(hash, len) : 0;

	return err ? err : nvmefs_secret_format(&tls_form, hash, key, len, out, size);
}

unsigned int nvmefs_tls_key_cipher(const struct nvmefs_auth_key *configured)
{
	if (configured->hash != NVMEFS_AUTH_HASH_NONE)
		return configured->hash;
	return configured->len == 48 ? NVMEFS_AUTH_HASH_SHA384 : NVMEFS_AUTH_HASH_SHA256;
}

/*
 * HKDF-Expand-Label(HKDF-Extract(0, @in), "tls13 " @label, @ctx, @out's
 * length) with @hash.  RFC 8446 7.1's HkdfLabel is be16 length, then the
 * label and the context each after a length byte; libnvme before 1.16 wrote
 * a le16 length and the label and context with no length bytes.
 */
static int expand_label(unsigned int hash, const struct nvmefs_auth_key *in, const char *label,
			const char *ctx1, const char *ctx2, bool compat,
			struct nvmefs_auth_key *out)
{
	size_t label_len = strlen("tls13 ") + strlen(label);
	size_t ctx_len = strlen(ctx1) + strlen(ctx2);
	size_t info_len = 2 + 1 + label_len + 1 + ctx_len, n = 0;
	const char *digest = hash == NVMEFS_AUTH_HASH_SHA384 ? OSSL_DIGEST_NAME_SHA2_384 :
							     OSSL_DIGEST_NAME_SHA2_256;
	EVP_KDF *kdf = NULL;
	EVP_KDF_CTX *kctx = NULL;
	uint8_t *info;
	int err = 0;

	if (!compat && (ctx_len > 255 || label_len > 255))
		return nvmefs_error(-EMSGSIZE, "TLS PSK: the context of HKDF label \"%s\" is %zu "
				    "bytes, more than RFC 8446's 255", label, ctx_len);
	info = malloc(info_len);
	if (!info)
		return nvmefs_error(-ENOMEM, "TLS PSK: no memory for an HKDF label");
	if (compat) {
		info[n++] = (uint8_t)out->len;
		info[n++] = (uint8_t)(out->len >> 8);
	} else {
		info[n++] = (uint8_t)(out->len >> 8);
		info[n++] = (uint8_t)out->len;
		info[n++] = (uint8_t)label_len;
	}
	n += (size_t)sprintf((char *)info + n, "tls13 %s", label);
	if (!compat)
		info[n++] = (uint8_t)ctx_len;
	memcpy(info + n, ctx1, strlen(ctx1));
	n += strlen(ctx1);
	memcpy(info + n, ctx2, strlen(ctx2));
	n += strlen(ctx2);

	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)in->data, in->len),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, n),
		OSSL_PARAM_construct_end(),
	};
	kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL);
	kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	if (!kctx || EVP_KDF_derive(kctx, out->data, out->len, params) <= 0)
		err = nvmefs_ossl_error(-EIO, "TLS PSK: HKDF");
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	free(info);
	return err;
}

int nvmefs_tls_retained(const struct nvmefs_auth_key *configured, const char *hostnqn,
			bool compat, struct nvmefs_auth_key **retainedp)
{
	struct nvmefs_auth_key *retained;
	int err;

	err = nvmefs_secret_alloc(configured->len, configured->hash, &retained);
	if (err)
		return err;
	if (configured->hash == NVMEFS_AUTH_HASH_NONE)
		memcpy(retained->data, configured->data, configured->len);
	else
		err = expand_label(configured->hash, configured, "HostNQN", hostnqn, "", compat,
				   retained);
	if (err) {
		nvmefs_auth_key_free(retained);
		return err;
	}
	*retainedp = retained;
	return 0;
}

/* The PSK digest of identity version 1, base64 into @out (at least 65). */
static int psk_digest(unsigned int cipher, const struct nvmefs_auth_key *retained,
		      const char *hostnqn, const char *subnqn, char *out)
{
	static const char seed[] = "NVMe-over-Fabrics";
	const struct nvmefs_auth_chunk in[] = {
		{ hostnqn, strlen(hostnqn) },
		{ " ", 1 },
		{ subnqn, strlen(subnqn) },
		{ " ", 1 },
		{ seed, sizeof(seed) - 1 },
	};
	uint8_t mac[NVMEFS_AUTH_MAX_HASH_LEN];
	int err;

	err = nvmefs_auth_hmac(cipher, retained->data, retained->len, in,
			       sizeof(in) / sizeof(in[0]), mac);
	if (err)
		return err;
	EVP_EncodeBlock((unsigned char *)out, mac, (int)nvmefs_auth_hash_len(cipher));
	return 0;
}

int nvmefs_tls_psk_derive(const struct nvmefs_auth_key *configured, const char *hostnqn,
			  const char *subnqn, unsigned int version, bool compat,
			  struct nvmefs_tls_psk *psk)
{
	unsigned int cipher = nvmefs_tls_key_cipher(configured);
	struct nvmefs_auth_key *retained = NULL;
	char digest[4 * NVMEFS_AUTH_MAX_HASH_LEN / 3 + 4] = "";
	char hh[16];
	size_t id_len;
	int err;

	memset(psk, 0, sizeof(*psk));
	if (version > 1)
		return nvmefs_error(-EINVAL, "TLS PSK: identity version %u is not defined (0 or 1)",
				    version);
	err = nvmefs_tls_retained(configured, hostnqn, compat, &retained);
	if (err)
		return err;
	if (version == 1) {
		err = psk_digest(cipher, retained, hostnqn, subnqn, digest);
		if (err)
			goto out;
	}
	id_len = (size_t)snprintf(NULL, 0, "NVMe%uR%02u %s %s%s%s", version, cipher, hostnqn,
				  subnqn, version ? " " : "", digest);
	psk->identity = malloc(id_len + 1);
	if (!psk->identity) {
		err = nvmefs_error(-ENOMEM, "TLS PSK: no memory for the identity");
		goto out;
	}
	snprintf(psk->identity, id_len + 1, "NVMe%uR%02u %s %s%s%s", version, cipher, hostnqn,
		 subnqn, version ? " " : "", digest);
	if (version == 0 && !compat && id_len > 255) {
		err = nvmefs_error(-EMSGSIZE, "TLS PSK: the identity is %zu bytes, too long to "
				   "derive its key from (RFC 8446 allows 255): use identity "
				   "version 1", id_len);
		goto out;
	}
	err = nvmefs_secret_alloc(retained->len, (uint8_t)cipher, &psk->key);
	if (err)
		goto out;
	snprintf(hh, sizeof(hh), "%02u ", cipher);
	if (version == 1)
		err = expand_label(cipher, retained, "nvme-tls-psk", hh, digest, compat, psk->key);
	else
		err = expand_label(cipher, retained, "nvme-tls-psk", psk->identity, "", compat,
				   psk->key);
out:
	nvmefs_auth_key_free(retained);
	if (err)
		nvmefs_tls_psk_clear(psk);
	return err;
}

int nvmefs_tls_psk_generated(unsigned int hash, const struct nvmefs_auth_key *sess,
			     const uint8_t *c1, const uint8_t *c2, size_t hl, const char *hostnqn,
			     const char *subnqn, struct nvmefs_tls_psk **pskp)
{
	const struct nvmefs_auth_chunk challenges[] = { { c1, hl }, { c2, hl } };
	char digest[4 * NVMEFS_AUTH_MAX_HASH_LEN / 3 + 4];
	struct nvmefs_auth_key *generated = NULL;
	struct nvmefs_tls_psk *psk;
	size_t id_len;
	char hh[16];
	int err;

	*pskp = NULL;
	if (hash != NVMEFS_AUTH_HASH_SHA256 && hash != NVMEFS_AUTH_HASH_SHA384)
		return nvmefs_error(-EINVAL, "secure concatenation with hash %u: TLS has a suite "
				    "for SHA-256 (1) and SHA-384 (2) only", hash);
	if (hl != nvmefs_auth_hash_len(hash))
		return nvmefs_error(-EINVAL, "secure concatenation: %zu-byte challenges with hash %u",
				    hl, hash);
	psk = calloc(1, sizeof(*psk));
	if (!psk)
		return nvmefs_error(-ENOMEM, "TLS PSK: no memory");
	err = nvmefs_secret_alloc(hl, (uint8_t)hash, &generated);
	if (err)
		goto out;
	err = nvmefs_auth_hmac(hash, sess->data, sess->len, challenges, 2, generated->data);
	if (err)
		goto out;
	err = psk_digest(hash, generated, hostnqn, subnqn, digest);
	if (err)
		goto out;
	id_len = (size_t)snprintf(NULL, 0, "NVMe1G%02u %s %s %s", hash, hostnqn, subnqn, digest);
	psk->identity = malloc(id_len + 1);
	if (!psk->identity) {
		err = nvmefs_error(-ENOMEM, "TLS PSK: no memory for the identity");
		goto out;
	}
	snprintf(psk->identity, id_len + 1, "NVMe1G%02u %s %s %s", hash, hostnqn, subnqn, digest);
	err = nvmefs_secret_alloc(hl, (uint8_t)hash, &psk->key);
	if (err)
		goto out;
	snprintf(hh, sizeof(hh), "%02u ", hash);
	err = expand_label(hash, generated, "nvme-tls-psk", hh, digest, false, psk->key);
out:
	nvmefs_auth_key_free(generated);
	if (err)
		nvmefs_tls_psk_free(psk);
	else
		*pskp = psk;
	return err;
}

void nvmefs_tls_psk_clear(struct nvmefs_tls_psk *psk)
{
	free(psk->identity);
	nvmefs_auth_key_free(psk->key);
	psk->identity = NULL;
	psk->key = NULL;
}

int nvmefs_tls_psk_new(const char *text, const char *hostnqn, const char *subnqn,
		       unsigned int version, bool compat, struct nvmefs_tls_psk **pskp)
{
	struct nvmefs_auth_key *key;
	struct nvmefs_tls_psk *psk;
	int err;

	err = nvmefs_tls_key_parse(text, &key);
	if (err)
		return nvmefs_secret_malformed(err);
	psk = calloc(1, sizeof(*psk));
	if (!psk)
		err = nvmefs_error(-ENOMEM, "TLS PSK: out of memory");
	else
		err = nvmefs_tls_psk_derive(key, hostnqn, subnqn, version, compat, psk);
	nvmefs_auth_key_free(key);
	if (err) {
		free(psk);
		return err;
	}
	*pskp = psk;
	return 0;
}

void nvmefs_tls_psk_free(struct nvmefs_tls_psk *psk)
{
	if (!psk)
		return;
	nvmefs_tls_psk_clear(psk);
	free(psk);
}

/* ------------------------------------------------------------------------ */
/* The public API: what 'nvmefs check-tls-key' and 'gen-tls-key' print     */
/* ------------------------------------------------------------------------ */

int nvmefs_tls_key_check(const char *text, struct nvmefs_tls_key_info *info)
{
	struct nvmefs_auth_key *key;
	int err;

	if (!text)
		return nvmefs_error(-EINVAL, "no TLS PSK given");
	err = nvmefs_tls_key_parse(text, &key);
	if (err)
		return nvmefs_secret_malformed(err);
	info->hmac = key->hash;
	info->len = (unsigned int)key->len;
	info->crc = nvmefs_secret_crc32(key->data, key->len);
	info->cipher = nvmefs_tls_key_cipher(key);
	nvmefs_auth_key_free(key);
	return 0;
}

int nvmefs_tls_key_identity(const char *text, const char *hostnqn, const char *subnqn,
			    unsigned int version, bool compat, char **identity)
{
	struct nvmefs_auth_key *key = NULL;
	struct nvmefs_tls_psk psk;
	char *owned_nqn = NULL;
	int err;

	if (!text || !subnqn)
		return nvmefs_error(-EINVAL, "no TLS PSK or no subsystem NQN given");
	err = nvmefs_nqn_check(subnqn, "subsystem", "--subsysnqn");
	if (err)
		return err;
	if (!hostnqn) {
		hostnqn = owned_nqn = nvmefs_hostnqn_default();
		if (!hostnqn)
			return -ENOENT;
	}
	err = nvmefs_nqn_check(hostnqn, "host", owned_nqn ? "/etc/nvme/hostnqn" : "--hostnqn");
	if (err)
		goto out;
	err = nvmefs_tls_key_parse(text, &key);
	if (err) {
		err = nvmefs_secret_malformed(err);
		goto out;
	}
	err = nvmefs_tls_psk_derive(key, hostnqn, subnqn, version, compat, &psk);
	if (err)
		goto out;
	*identity = psk.identity;
	psk.identity = NULL;
	nvmefs_tls_psk_clear(&psk);
out:
	nvmefs_auth_key_free(key);
	free(owned_nqn);
	return err;
}

int nvmefs_tls_key_make(unsigned int hmac, const uint8_t *secret, size_t len, char *out,
			size_t size)
{
	struct nvmefs_auth_key *key;
	int err;

	if (hmac != NVMEFS_AUTH_HASH_SHA256 && hmac != NVMEFS_AUTH_HASH_SHA384)
		return nvmefs_error(-EINVAL, "TLS PSK: HMAC %u is not 1 (SHA-256) or 2 (SHA-384)",
				    hmac);
	if (len != nvmefs_auth_hash_len(hmac))
		return nvmefs_error(-EINVAL, "TLS PSK: the key is %zu bytes, but HMAC %u (%s) "
				    "needs %zu", len, hmac, nvmefs_auth_hash_name(hmac),
				    nvmefs_auth_hash_len(hmac));
	if (secret)
		return nvmefs_tls_key_format(hmac, secret, len, out, size);
	err = nvmefs_secret_alloc(len, (uint8_t)hmac, &key);
	if (err)
		return err;
	if (RAND_priv_bytes(key->data, (int)len) != 1)
		err = nvmefs_ossl_error(-EIO, "TLS PSK: random bytes");
	else
		err = nvmefs_tls_key_format(hmac, key->data, len, out, size);
	nvmefs_auth_key_free(key);
	return err;
}
