/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libnvmefs: the keys of NVMe/TCP with TLS 1.3 (NVMe TCP
 * Transport Specification, 3.6.1), as nvme-cli (libnvme) and the kernel
 * derive them: the configured PSK in its interchange form
 * "NVMeTLSkey-1:HH:<base64 of key || le32 CRC-32 of key>:", the retained
 * PSK, the PSK identity (versions 0 and 1) and the TLS PSK.
 *
 * libnvme before 1.16 (nvme-cli 2.16's --compat) laid out HkdfLabel
 * without RFC 8446's length prefixes and with a little-endian length; keys
 * inserted by those versions only match with @compat set.  Every function
 * returns 0 or a -errno and, on failure, says why in nvmefs_errmsg(),
 * never quoting a key.
 */
#ifndef NVMEFS_TLS_KEY_H
#define NVMEFS_TLS_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include "secret.h"

/* The interchange form's length for a 48-byte key, its NUL included. */
#define NVMEFS_TLS_KEY_TEXT_MAX 90

/*
 * Parse a configured PSK "NVMeTLSkey-1:HH:...:" (the final colon may be
 * left out).  HH is 00 (used as the retained PSK), 01 (SHA-256, a 32-byte
 * key) or 02 (SHA-384, 48 bytes); with 00 the key is 32 or 48 bytes.  The
 * errors are nvmefs_secret_parse()'s, and -EMSGSIZE too for a length that
 * does not match HH.  (*keyp)->hash is HH.
 */
int nvmefs_tls_key_parse(const char *text, struct nvmefs_auth_key **keyp);

/*
 * @key's interchange form into @out (NVMEFS_TLS_KEY_TEXT_MAX bytes will
 * do), with HH @hash: -EINVAL for a combination parsing would refuse.
 */
int nvmefs_tls_key_format(unsigned int hash, const uint8_t *key, size_t len, char *out,
			  size_t size);

/*
 * The hash of the cipher suite the PSK goes with (1: TLS_AES_128_GCM_SHA256,
 * 2: TLS_AES_256_GCM_SHA384): HH, or for HH 00 the one of the key's length.
 */
unsigned int nvmefs_tls_key_cipher(const struct nvmefs_auth_key *configured);

/*
 * The retained PSK: for HH 00 the configured PSK, otherwise
 * HKDF-Expand-Label(HKDF-Extract(0, PSK), "HostNQN", @hostnqn, its length)
 * with HH's hash.
 */
int nvmefs_tls_retained(const struct nvmefs_auth_key *configured, const char *hostnqn,
			bool compat, struct nvmefs_auth_key **retainedp);

/* What one connection presents: the identity and the TLS PSK behind it. */
struct nvmefs_tls_psk {
	char *identity;			/* "NVMe<v>R<hh> <hostnqn> <subnqn>[ <digest>]" */
	struct nvmefs_auth_key *key;	/* the TLS PSK; ->hash is the suite's hash */
};

/*
 * Derive the identity of @version (0, or 1 with the PSK digest: base64 of
 * HMAC(retained PSK, hostnqn " " subnqn " NVMe-over-Fabrics")) and the TLS
 * PSK HKDF-Expand-Label(HKDF-Extract(0, retained PSK), "nvme-tls-psk",
 * context, length) whose context is the identity (version 0) or "hh
 * <digest>" (version 1).  -EMSGSIZE where RFC 8446's one-byte lengths
 * cannot hold the host NQN or the context (a version 0 identity past 255
 * bytes: use version 1).  Free with nvmefs_tls_psk_clear().
 */
int nvmefs_tls_psk_derive(const struct nvmefs_auth_key *configured, const char *hostnqn,
			  const char *subnqn, unsigned int version, bool compat,
			  struct nvmefs_tls_psk *psk);
void nvmefs_tls_psk_clear(struct nvmefs_tls_psk *psk);

/*
 * Secure concatenation's key (NVMe Base 2.1, 8.3.5.5.9; TCP transport
 * 3.6.1.3): the generated PSK HMAC_@hash(@sess, @c1 || @c2), each
 * challenge @hl bytes, then as nvmefs_tls_psk_derive() does for version 1
 * with the generated PSK in the retained PSK's place, under the identity
 * "NVMe1G<hh> <hostnqn> <subnqn> <digest>".  @hash 1 (SHA-256) or 2
 * (SHA-384): TLS has no suite for another.  Free with
 * nvmefs_tls_psk_free().
 */
int nvmefs_tls_psk_generated(unsigned int hash, const struct nvmefs_auth_key *sess,
			     const uint8_t *c1, const uint8_t *c2, size_t hl, const char *hostnqn,
			     const char *subnqn, struct nvmefs_tls_psk **pskp);

/* A connection's identity and TLS PSK from the configured PSK's text, in
 * memory of its own: nvmefs_tls_psk_derive() on what it parses.  Free with
 * nvmefs_tls_psk_free(). */
int nvmefs_tls_psk_new(const char *text, const char *hostnqn, const char *subnqn,
		       unsigned int version, bool compat, struct nvmefs_tls_psk **pskp);
void nvmefs_tls_psk_free(struct nvmefs_tls_psk *psk);

#endif /* NVMEFS_TLS_KEY_H */
