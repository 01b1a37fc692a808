/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file wire_auth.h
 * @brief In-band authentication's own wire formats: the DH-HMAC-CHAP
 * messages that AUTH_Send and AUTH_Receive carry (NVMe Base 2.0, 8.13.5).
 *
 * The commands themselves (struct nvmefs_auth_cmd) are fabrics capsules,
 * in <nvmefs/wire.h> with the others; only what travels in their data is
 * here.  The header compiles alone as C99 and C11.
 */
#ifndef NVMEFS_WIRE_AUTH_H
#define NVMEFS_WIRE_AUTH_H

#include <nvmefs/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The messages AUTH_Send and AUTH_Receive carry; libnvme 1.3 has none of
 * them.  Each starts with AUTH-Type and AUTH-Id; the variable parts (the
 * challenge, response and DH values) follow the fixed header, their lengths
 * in the header, as the comments say.
 */

/** SECP of DH-HMAC-CHAP's AUTH_Send/Receive, with SPSP0 = SPSP1 = 1. */
#define NVMEFS_AUTH_SECP_DHCHAP		0xe9
#define NVMEFS_AUTH_SPSP_DHCHAP		0x01

/** AUTH-Type. */
enum nvmefs_auth_type {
	NVMEFS_AUTH_COMMON_MESSAGES	= 0x00,
	NVMEFS_AUTH_DHCHAP_MESSAGES	= 0x01,
};

/** AUTH-Id. */
enum nvmefs_dhchap_msg {
	NVMEFS_DHCHAP_NEGOTIATE		= 0x00,
	NVMEFS_DHCHAP_CHALLENGE		= 0x01,
	NVMEFS_DHCHAP_REPLY		= 0x02,
	NVMEFS_DHCHAP_SUCCESS1		= 0x03,
	NVMEFS_DHCHAP_SUCCESS2		= 0x04,
	NVMEFS_DHCHAP_FAILURE2		= 0xf0,
	NVMEFS_DHCHAP_FAILURE1		= 0xf1,
};

/** The DH-HMAC-CHAP protocol descriptor of a Negotiate message. */
struct nvmefs_dhchap_protocol_desc {
	uint8_t			authid;		/**< 1: DH-HMAC-CHAP */
	uint8_t			rsvd1;
	uint8_t			halen;		/**< hash ids in idlist[0..] */
	uint8_t			dhlen;		/**< DH group ids in idlist[30..] */
	uint8_t			idlist[60];
};
#define NVMEFS_DHCHAP_AUTH_ID		0x01
#define NVMEFS_DHCHAP_IDLIST_DH		30
/** AUTH_Negotiate's SC_C: none, or a new TLS PSK generated (secure
 *  channel concatenation on a connection without TLS yet; 01h is a
 *  secure channel already, 03h a TLS PSK replaced). */
#define NVMEFS_AUTH_SECP_NOSC		0x00
#define NVMEFS_AUTH_SECP_NEWTLSPSK	0x02

/** AUTH_Negotiate: the host offers one protocol. */
struct nvmefs_dhchap_negotiate {
	uint8_t			auth_type;	/**< NVMEFS_AUTH_COMMON_MESSAGES */
	uint8_t			auth_id;	/**< NVMEFS_DHCHAP_NEGOTIATE */
	nvmefs_le16		rsvd2;
	nvmefs_le16		tid;		/**< transaction identifier */
	uint8_t			sc_c;		/**< NVMEFS_AUTH_SECP_* */
	uint8_t			napd;		/**< descriptors that follow: 1 */
	struct nvmefs_dhchap_protocol_desc desc;
};

/** DH-HMAC-CHAP_Challenge; then HL bytes of challenge C1 and DHVLEN bytes
 *  of the controller's DH value. */
struct nvmefs_dhchap_challenge {
	uint8_t			auth_type;	/**< NVMEFS_AUTH_DHCHAP_MESSAGES */
	uint8_t			auth_id;	/**< NVMEFS_DHCHAP_CHALLENGE */
	nvmefs_le16		rsvd2;
	nvmefs_le16		tid;
	uint8_t			hl;		/**< hash length */
	uint8_t			rsvd7;
	uint8_t			hashid;
	uint8_t			dhgid;
	nvmefs_le16		dhvlen;
	nvmefs_le32		seqnum;		/**< S1 */
};

/** DH-HMAC-CHAP_Reply; then HL bytes of response R1, HL bytes of the
 *  host's challenge C2 (zero without one) and DHVLEN bytes of the host's
 *  DH value. */
struct nvmefs_dhchap_reply {
	uint8_t			auth_type;
	uint8_t			auth_id;	/**< NVMEFS_DHCHAP_REPLY */
	nvmefs_le16		rsvd2;
	nvmefs_le16		tid;
	uint8_t			hl;
	uint8_t			rsvd7;
	uint8_t			cvalid;		/**< 1: C2 is a challenge */
	uint8_t			rsvd9;
	nvmefs_le16		dhvlen;
	nvmefs_le32		seqnum;		/**< S2, 0 without a challenge */
};

/** DH-HMAC-CHAP_Success1; then HL bytes of response R2 when RVALID. */
struct nvmefs_dhchap_success1 {
	uint8_t			auth_type;
	uint8_t			auth_id;	/**< NVMEFS_DHCHAP_SUCCESS1 */
	nvmefs_le16		rsvd2;
	nvmefs_le16		tid;
	uint8_t			hl;
	uint8_t			rsvd7;
	uint8_t			rvalid;
	uint8_t			rsvd9[7];
};

/** DH-HMAC-CHAP_Success2. */
struct nvmefs_dhchap_success2 {
	uint8_t			auth_type;
	uint8_t			auth_id;	/**< NVMEFS_DHCHAP_SUCCESS2 */
	nvmefs_le16		rsvd2;
	nvmefs_le16		tid;
	uint8_t			rsvd6[10];
};

/** AUTH_Failure1 (from the controller) and AUTH_Failure2 (from the host). */
struct nvmefs_dhchap_failure {
	uint8_t			auth_type;	/**< NVMEFS_AUTH_COMMON_MESSAGES */
	uint8_t			auth_id;	/**< NVMEFS_DHCHAP_FAILURE1/2 */
	nvmefs_le16		rsvd2;
	nvmefs_le16		tid;
	uint8_t			rescode;	/**< 1: authentication failure */
	uint8_t			rescode_exp;	/**< enum nvmefs_dhchap_failure_exp */
};

/** Reason code explanations of a failure message. */
enum nvmefs_dhchap_failure_exp {
	NVMEFS_DHCHAP_FAILURE_FAILED		= 0x01,
	NVMEFS_DHCHAP_FAILURE_NOT_USABLE	= 0x02,
	NVMEFS_DHCHAP_FAILURE_CONCAT_MISMATCH	= 0x03,
	NVMEFS_DHCHAP_FAILURE_HASH_UNUSABLE	= 0x04,
	NVMEFS_DHCHAP_FAILURE_DHGROUP_UNUSABLE	= 0x05,
	NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD	= 0x06,
	NVMEFS_DHCHAP_FAILURE_INCORRECT_MESSAGE	= 0x07,
};
#define NVMEFS_DHCHAP_RESCODE_FAILED	0x01

NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_protocol_desc) == 64, "DH-HMAC-CHAP descriptor is 64 bytes");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_negotiate) == 72, "Negotiate with one descriptor is 72 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_negotiate, tid) == 4, "Negotiate T_ID at 4");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_negotiate, desc) == 8, "Negotiate descriptors at 8");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_challenge) == 16, "Challenge header is 16 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_challenge, hashid) == 8, "Challenge HashID at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_challenge, dhvlen) == 10, "Challenge DHVLEN at 10");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_challenge, seqnum) == 12, "Challenge SEQNUM at 12");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_reply) == 16, "Reply header is 16 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_reply, cvalid) == 8, "Reply CVALID at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_reply, seqnum) == 12, "Reply SEQNUM at 12");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_success1) == 16, "Success1 header is 16 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_dhchap_success1, rvalid) == 8, "Success1 RVALID at 8");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_success2) == 16, "Success2 is 16 bytes");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_dhchap_failure) == 8, "Failure is 8 bytes");

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_WIRE_AUTH_H */
