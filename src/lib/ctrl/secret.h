/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libnvmefs: secret keys in memory of their own, and the text
 * form nvme-cli gives them, "<prefix>NN:<base64 of key || le32 CRC-32 of
 * key>:", which DH-HMAC-CHAP secrets (DHHC-1) and TLS PSKs (NVMeTLSkey-1)
 * share.  Every function returns 0 or a -errno and, on failure, says why in
 * nvmefs_errmsg(), never quoting the secret.
 */
#ifndef NVMEFS_SECRET_H
#define NVMEFS_SECRET_H

#include <stddef.h>
#include <stdint.h>

/*
 * A secret byte string: a parsed secret, a key derived from one, or a DH
 * session key.  It lives in memory of its own that is locked (never
 * swapped), left out of core dumps, and wiped when freed.
 */
struct nvmefs_auth_key {
	size_t map_len;		/* the mapping that holds this struct */
	size_t len;
	uint8_t hash;		/* the NN of its text form, or what it was derived with */
	uint8_t data[];
};

/* @len bytes of secret memory (not cleared: the mapping is fresh). */
int nvmefs_secret_alloc(size_t len, uint8_t hash, struct nvmefs_auth_key **keyp);
/* Wipe and free; NULL is fine. */
void nvmefs_auth_key_free(struct nvmefs_auth_key *key);

/* One text form of a secret, for parsing, formatting and messages. */
struct nvmefs_secret_form {
	const char *prefix;	/* "DHHC-1:" */
	const char *what;	/* "DH-HMAC-CHAP secret" */
	unsigned int max_hash;	/* the highest NN, at most 9 */
	const char *hashes;	/* "00 (none), 01 (SHA-256) or ..." */
	size_t lens[3];		/* the key lengths it may hold; 0 ends the list */
	const char *lens_text;	/* "32, 48 or 64" */
};

/*
 * Parse @text in @form (the final colon may be left out, as the kernel
 * allows); the key's hash is NN.  Each malformation has its own error:
 *   -EINVAL       it does not start with the prefix
 *   -EOPNOTSUPP   NN is above the form's highest
 *   -EILSEQ       the key is not base64 (RFC 4648, padded)
 *   -EMSGSIZE     the key's length is not one of the form's
 *   -EBADMSG      the CRC does not match the key
 * and -ENOMEM, -EPERM or -EAGAIN when no locked memory can be had.
 */
int nvmefs_secret_parse(const struct nvmefs_secret_form *form, const char *text,
			struct nvmefs_auth_key **keyp);

/*
 * nvmefs_secret_parse()'s error as the public API reports a malformed
 * secret: -EINVAL, whatever the parser found wrong.  Memory that could not
 * be mapped or locked for a key (-ENOMEM, -EAGAIN, -EPERM) is not.
 */
int nvmefs_secret_malformed(int ret);

/* The CRC-32 the text form carries after the key (zlib's). */
uint32_t nvmefs_secret_crc32(const uint8_t *p, size_t len);

/* The text form's length for a key of @len bytes, its NUL included. */
size_t nvmefs_secret_text_size(const struct nvmefs_secret_form *form, size_t len);
/*
 * @key's text in @form with NN @hash into @out, @size at least
 * nvmefs_secret_text_size() (-ENOSPC otherwise).  The caller wipes @out.
 */
int nvmefs_secret_format(const struct nvmefs_secret_form *form, unsigned int hash,
			 const uint8_t *key, size_t len, char *out, size_t size);

/*
 * OpenSSL failed: the first reason on the thread's error queue, taken off
 * it, in the message "<what>: OpenSSL: <reason>"; returns @err.
 */
int nvmefs_ossl_error(int err, const char *what);

#endif /* NVMEFS_SECRET_H */
