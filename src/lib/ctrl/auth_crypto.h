/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libnvmefs: the cryptography of NVMe in-band authentication,
 * DH-HMAC-CHAP (NVMe Base Specification 2.0, 8.13, with the protocol in
 * 8.13.5), host side.  The messages that carry these values (AUTH_Send,
 * AUTH_Receive) are not here.
 *
 * Byte layouts are the Linux kernel's (drivers/nvme/common/auth.c and
 * drivers/nvme/host/auth.c), the peer every target we meet was tested with;
 * secrets are in the form nvme-cli's gen-dhchap-key writes.  Every function
 * returns 0 or a -errno and, on failure, says why in nvmefs_errmsg().
 */
#ifndef NVMEFS_AUTH_CRYPTO_H
#define NVMEFS_AUTH_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include "secret.h"

/* Hash function identifiers (HashID); in a secret, 0 means "not transformed". */
enum nvmefs_auth_hash {
	NVMEFS_AUTH_HASH_NONE = 0,
	NVMEFS_AUTH_HASH_SHA256 = 1,
	NVMEFS_AUTH_HASH_SHA384 = 2,
	NVMEFS_AUTH_HASH_SHA512 = 3,
};

/* Diffie-Hellman group identifiers (DHgroupID): RFC 7919's FFDHE groups. */
enum nvmefs_auth_dhgroup {
	NVMEFS_AUTH_DHGROUP_NULL = 0,
	NVMEFS_AUTH_DHGROUP_2048 = 1,
	NVMEFS_AUTH_DHGROUP_3072 = 2,
	NVMEFS_AUTH_DHGROUP_4096 = 3,
	NVMEFS_AUTH_DHGROUP_6144 = 4,
	NVMEFS_AUTH_DHGROUP_8192 = 5,
};

/* The largest hash output and DH value, for buffers. */
#define NVMEFS_AUTH_MAX_HASH_LEN 64
#define NVMEFS_AUTH_MAX_DH_LEN 1024

/* "SHA-256", ...; NULL for an id the specification does not define (0 too). */
const char *nvmefs_auth_hash_name(unsigned int hash);
/* The hash's output length in bytes (also its challenge and response
 * length); 0 for an undefined id. */
size_t nvmefs_auth_hash_len(unsigned int hash);
/* "null", "ffdhe2048", ...; NULL for an undefined id. */
const char *nvmefs_auth_dhgroup_name(unsigned int group);
/* The size of the group's public values and shared secret in bytes; 0 for
 * the null group and undefined ids. */
size_t nvmefs_auth_dhgroup_len(unsigned int group);

/*
 * Parse a secret "DHHC-1:NN:<base64 of key || le32 CRC-32 of key>:" (the
 * final colon may be left out, as the kernel allows).  The key is 32, 48 or
 * 64 bytes whatever NN (00 to 03) says, as the kernel accepts (nvme-cli only
 * generates the hash's own size).  The errors are nvmefs_secret_parse()'s.
 */
int nvmefs_auth_key_parse(const char *secret, struct nvmefs_auth_key **keyp);

/* A piece of what an HMAC is computed over. */
struct nvmefs_auth_chunk {
	const void *p;
	size_t len;
};

/* HMAC_@hash(@key, the chunks one after the other) into @out, the hash's
 * length; @hash is a defined id (not 0). */
int nvmefs_auth_hmac(unsigned int hash, const uint8_t *key, size_t key_len,
		     const struct nvmefs_auth_chunk *in, size_t n, uint8_t *out);

/*
 * The key the responses are computed with: HMAC_NN(key, @nqn ||
 * "NVMe-over-Fabrics"), NN the secret's own hash; for NN 00 the key as is.
 * The host's key is transformed with the host's NQN, the controller's with
 * the subsystem's.  The response functions below do this themselves.
 */
int nvmefs_auth_key_transform(const struct nvmefs_auth_key *key, const char *nqn,
			      struct nvmefs_auth_key **outp);

/*
 * The augmented challenge: HMAC_H(H(@sess), @c), the hash H's length of
 * bytes at @c and @out.
 */
int nvmefs_auth_augment_challenge(unsigned int hash, const struct nvmefs_auth_key *sess,
				  const uint8_t *c, uint8_t *out);

/* What both responses of one transaction are computed over. */
struct nvmefs_auth_exchange {
	unsigned int hash;	/* HashID of the controller's challenge */
	uint16_t tid;		/* transaction identifier */
	/* AUTH_Negotiate's SC_C: 0, or secure concatenation's (NVMe/TCP only). */
	uint8_t sc_c;
	const char *hostnqn;
	const char *subsysnqn;
	/* The DH session key (nvmefs_auth_dh_derive), or NULL with the null
	 * group: with one, the challenges are augmented first. */
	const struct nvmefs_auth_key *sess;
};

/*
 * The host's response R1 to the controller's challenge @c1 with sequence
 * number @s1, proving @host_key (as parsed: it is transformed here):
 * HMAC_H(Kh', C1 || le32(S1) || le16(TID) || SC_C || "HostHost" || NQNh ||
 * 00h || NQNc), SC_C the negotiated secure channel concatenation (x->sc_c,
 * which only NVMe/TCP has).  @c1 and @r1 are the hash's length.
 */
int nvmefs_auth_host_response(const struct nvmefs_auth_exchange *x,
			      const struct nvmefs_auth_key *host_key,
			      const uint8_t *c1, uint32_t s1, uint8_t *r1);

/*
 * The response R2 the controller must send for the host's challenge @c2
 * with sequence number @s2 if it holds @ctrl_key: HMAC_H(Kc', C2 ||
 * le32(S2) || le16(TID) || SC_C || "Controller" || NQNc || 00h || NQNh).
 * Compare it with the controller's in constant time (CRYPTO_memcmp).
 */
int nvmefs_auth_ctrl_response(const struct nvmefs_auth_exchange *x,
			      const struct nvmefs_auth_key *ctrl_key,
			      const uint8_t *c2, uint32_t s2, uint8_t *r2);

/* The host's ephemeral Diffie-Hellman key pair for one transaction. */
struct nvmefs_auth_dh;

/* A new key pair in FFDHE group @group (not the null group). */
int nvmefs_auth_dh_new(unsigned int group, struct nvmefs_auth_dh **dhp);
void nvmefs_auth_dh_free(struct nvmefs_auth_dh *dh);
/* The host's public value, big-endian and zero-padded to the group's size,
 * as the DH-HMAC-CHAP_Reply carries it; -EINVAL unless @len is that size. */
int nvmefs_auth_dh_public(const struct nvmefs_auth_dh *dh, uint8_t *buf, size_t len);
/*
 * The session key from the controller's public value @peer: the shared
 * secret, big-endian and zero-padded to the group's size as the kernel's
 * is.  -EMSGSIZE if @len is not the group's size, -EPROTO if the value is
 * not a valid public value of the group (0, 1, p - 1, not below p, or
 * outside the prime-order subgroup).
 */
int nvmefs_auth_dh_derive(struct nvmefs_auth_dh *dh, const uint8_t *peer, size_t len,
			  struct nvmefs_auth_key **sessp);

#endif /* NVMEFS_AUTH_CRYPTO_H */
