/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Secret keys in locked memory of their own, and their text form
 * "<prefix>NN:<base64 of key || le32 CRC-32 of key>:" as nvme-cli writes
 * DH-HMAC-CHAP secrets and TLS PSKs.  Secrets live in whole pages, not in
 * the heap, where a freed block keeps its bytes until reused.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "secret.h"
#include "../base/error.h"

/*
 * OpenSSL failed: take its first reason off the thread's error queue, so
 * that it neither lingers for an unrelated caller nor is lost.
 */
int nvmefs_ossl_error(int err, const char *what)
{
	unsigned long e = ERR_get_error();
	const char *why = e ? ERR_reason_error_string(e) : NULL;

	ERR_clear_error();
	return nvmefs_error(err, "%s: OpenSSL: %s", what, why ? why : "no reason given");
}

/* ------------------------------------------------------------------------ */
/* Secret memory                                                            */
/* ------------------------------------------------------------------------ */

/*
 * Whole pages of their own, so that locking and excluding them from core
 * dumps cannot touch anything else, and unlocking them cannot unlock a
 * neighbour's secret.
 */
int nvmefs_secret_alloc(size_t len, uint8_t hash, struct nvmefs_auth_key **keyp)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t map_len = (sizeof(struct nvmefs_auth_key) + len + page - 1) / page * page;
	struct nvmefs_auth_key *key;
	int err;

	key = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (key == MAP_FAILED)
		return nvmefs_error(-errno, "cannot map memory for a secret key: %s",
				    strerror(errno));
	if (mlock(key, map_len) < 0) {
		err = errno;
		munmap(key, map_len);
		return nvmefs_error(-err, "cannot lock a secret key in memory "
				    "(the locked-memory limit, ulimit -l?): %s", strerror(err));
	}
	if (madvise(key, map_len, MADV_DONTDUMP) < 0) {
		err = errno;
		munlock(key, map_len);
		munmap(key, map_len);
		return nvmefs_error(-err, "cannot keep a secret key out of core dumps: %s",
				    strerror(err));
	}
	key->map_len = map_len;
	key->len = len;
	key->hash = hash;
	*keyp = key;
	return 0;
}

void nvmefs_auth_key_free(struct nvmefs_auth_key *key)
{
	size_t map_len;

	if (!key)
		return;
	map_len = key->map_len;
	OPENSSL_cleanse(key, map_len);
	munlock(key, map_len);
	munmap(key, map_len);
}

/* ------------------------------------------------------------------------ */
/* Text: "<prefix>NN:<base64>:"                                            */
/* ------------------------------------------------------------------------ */

/*
 * CRC-32 as zlib and the kernel's ~crc32(~0, ...) compute it (IEEE 802.3,
 * reflected, initial and final ~0).  It is a checksum against typing
 * errors, not cryptography, and 68 bytes do not justify zlib or a table.
 */
uint32_t nvmefs_secret_crc32(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static bool is_base64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/*
 * How many bytes @n characters at @s decode to, or -1 unless they are
 * whole, padded RFC 4648 base64: EVP_DecodeBlock() would skip blanks and
 * decode the padding as zero bytes, so the form is checked here.
 */
static long base64_decoded_len(const char *s, size_t n)
{
	size_t pad = 0, i;

	if (n == 0 || n % 4)
		return -1;
	if (s[n - 1] == '=')
		pad = s[n - 2] == '=' ? 2 : 1;
	for (i = 0; i < n - pad; i++)
		if (!is_base64_char(s[i]))
			return -1;
	return (long)(n / 4 * 3 - pad);
}

static bool len_ok(const struct nvmefs_secret_form *form, long len)
{
	size_t i;

	for (i = 0; i < sizeof(form->lens) / sizeof(form->lens[0]) && form->lens[i]; i++)
		if ((long)form->lens[i] == len)
			return true;
	return false;
}

int nvmefs_secret_parse(const struct nvmefs_secret_form *form, const char *text,
			struct nvmefs_auth_key **keyp)
{
	size_t plen = strlen(form->prefix);
	struct nvmefs_auth_key *key;
	const char *b64, *end;
	size_t n, len;
	long decoded;
	uint8_t hash;
	uint32_t crc;
	int err;

	if (strncmp(text, form->prefix, plen))
		return nvmefs_error(-EINVAL, "not a %s: it does not start with \"%s\"",
				    form->what, form->prefix);
	text += plen;
	if (text[0] != '0' || text[1] < '0' || text[1] > (char)('0' + form->max_hash) ||
	    text[2] != ':')
		return nvmefs_error(-EOPNOTSUPP, "%s: the hash indicator is not %s", form->what,
				    form->hashes);
	hash = (uint8_t)(text[1] - '0');

	b64 = text + 3;
	end = strchr(b64, ':');
	n = end ? (size_t)(end - b64) : strlen(b64);
	decoded = end && end[1] ? -1 : base64_decoded_len(b64, n);
	if (decoded < 0)
		return nvmefs_error(-EILSEQ, "%s: the key is not base64", form->what);
	if (decoded < 4 || !len_ok(form, decoded - 4))
		return nvmefs_error(-EMSGSIZE, "%s: the key is %ld bytes, not %s", form->what,
				    decoded >= 4 ? decoded - 4 : 0, form->lens_text);

	/* EVP_DecodeBlock() writes the padding's zero bytes too. */
	err = nvmefs_secret_alloc(n / 4 * 3, hash, &key);
	if (err)
		return err;
	if (EVP_DecodeBlock(key->data, (const unsigned char *)b64, (int)n) != (int)(n / 4 * 3)) {
		nvmefs_auth_key_free(key);
		ERR_clear_error();
		return nvmefs_error(-EILSEQ, "%s: the key is not base64", form->what);
	}
	len = (size_t)decoded - 4;
	crc = (uint32_t)key->data[len] | (uint32_t)key->data[len + 1] << 8 |
	      (uint32_t)key->data[len + 2] << 16 | (uint32_t)key->data[len + 3] << 24;
	if (crc != nvmefs_secret_crc32(key->data, len)) {
		nvmefs_auth_key_free(key);
		return nvmefs_error(-EBADMSG, "%s: its CRC does not match the key (mistyped or "
				    "truncated?)", form->what);
	}
	/* The CRC is a function of the key: it goes too. */
	OPENSSL_cleanse(key->data + len, key->len - len);
	key->len = len;
	*keyp = key;
	return 0;
}

int nvmefs_secret_malformed(int ret)
{
	switch (ret) {
	case 0:
	case -ENOMEM:
	case -EAGAIN:
	case -EPERM:
		return ret;
	default:
		return -EINVAL;
	}
}

size_t nvmefs_secret_text_size(const struct nvmefs_secret_form *form, size_t len)
{
	/* prefix, "NN:", base64 of key and CRC, ":" and the NUL */
	return strlen(form->prefix) + 3 + (len + 4 + 2) / 3 * 4 + 2;
}

int nvmefs_secret_format(const struct nvmefs_secret_form *form, unsigned int hash,
			 const uint8_t *key, size_t len, char *out, size_t size)
{
	struct nvmefs_auth_key *raw;
	uint32_t crc;
	int n, err;

	if (hash > form->max_hash || !len_ok(form, (long)len))
		return nvmefs_error(-EINVAL, "%s: no form for a %zu-byte key with hash indicator "
				    "%02u", form->what, len, hash);
	if (size < nvmefs_secret_text_size(form, len))
		return nvmefs_error(-ENOSPC, "%s: %zu bytes are too few for its text", form->what,
				    size);
	err = nvmefs_secret_alloc(len + 4, (uint8_t)hash, &raw);
	if (err)
		return err;
	memcpy(raw->data, key, len);
	crc = nvmefs_secret_crc32(key, len);
	raw->data[len] = (uint8_t)crc;
	raw->data[len + 1] = (uint8_t)(crc >> 8);
	raw->data[len + 2] = (uint8_t)(crc >> 16);
	raw->data[len + 3] = (uint8_t)(crc >> 24);
	n = snprintf(out, size, "%s%02u:", form->prefix, hash);
	n += EVP_EncodeBlock((unsigned char *)out + n, raw->data, (int)(len + 4));
	out[n++] = ':';
	out[n] = '\0';
	nvmefs_auth_key_free(raw);
	return 0;
}
