/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file wire_tcp.h
 * @brief The NVMe/TCP transport's own wire formats: its PDUs (NVMe/TCP
 * Transport Specification 1.0, "PDU Formats").
 *
 * libnvme 1.3 has none of them (only the discovery log's TCP fields,
 * which stay libnvme's).  Every PDU starts with the 8-byte common header;
 * the header digest, when enabled, is a CRC32C of the HLEN header bytes
 * that follows them, the data digest one of the data that follows the data.
 * Fields the specification does not align naturally are byte arrays, so no
 * structure is packed.
 */
#ifndef NVMEFS_WIRE_TCP_H
#define NVMEFS_WIRE_TCP_H

#include <nvmefs/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/** PDU types (common header PDU-Type). */
enum nvmefs_tcp_pdu_type {
	NVMEFS_TCP_ICREQ	= 0x00,
	NVMEFS_TCP_ICRESP	= 0x01,
	NVMEFS_TCP_H2C_TERM	= 0x02,
	NVMEFS_TCP_C2H_TERM	= 0x03,
	NVMEFS_TCP_CMD		= 0x04,
	NVMEFS_TCP_RSP		= 0x05,
	NVMEFS_TCP_H2C_DATA	= 0x06,
	NVMEFS_TCP_C2H_DATA	= 0x07,
	NVMEFS_TCP_R2T		= 0x09,
};

/** Common header FLAGS. */
enum nvmefs_tcp_pdu_flags {
	NVMEFS_TCP_F_HDGST		= 1 << 0,
	NVMEFS_TCP_F_DDGST		= 1 << 1,
	NVMEFS_TCP_F_DATA_LAST		= 1 << 2,
	NVMEFS_TCP_F_DATA_SUCCESS	= 1 << 3,
};

/** ICReq/ICResp DGST field. */
enum nvmefs_tcp_digest_option {
	NVMEFS_TCP_HDR_DIGEST_ENABLE	= 1 << 0,
	NVMEFS_TCP_DATA_DIGEST_ENABLE	= 1 << 1,
};

/** The only PDU format version (PFV) defined, 1.0. */
#define NVMEFS_TCP_PFV_1_0		0
/** The smallest MAXH2CDATA a controller may give. */
#define NVMEFS_TCP_MIN_MAXH2CDATA	4096
/** Bytes of a header or data digest. */
#define NVMEFS_TCP_DIGEST_LEN		4
/** The largest PDU data alignment (CPDA/HPDA 31: 128 bytes). */
#define NVMEFS_TCP_MAX_PDA		31
/** The largest termination request: its header and up to 128 bytes of the
 *  offending PDU's header. */
#define NVMEFS_TCP_TERM_MAX_PLEN	152

/** Termination request FES: why the sender ends the connection. */
enum nvmefs_tcp_fatal_error_status {
	NVMEFS_TCP_FES_INVALID_PDU_HDR		= 0x01,
	NVMEFS_TCP_FES_PDU_SEQ_ERR		= 0x02,
	NVMEFS_TCP_FES_HDR_DIGEST_ERR		= 0x03,
	NVMEFS_TCP_FES_DATA_OUT_OF_RANGE	= 0x04,
	NVMEFS_TCP_FES_R2T_LIMIT_EXCEEDED	= 0x05,
	NVMEFS_TCP_FES_DATA_LIMIT_EXCEEDED	= 0x05,
	NVMEFS_TCP_FES_UNSUPPORTED_PARAM	= 0x06,
};

/** The common header of every PDU. */
struct nvmefs_tcp_hdr {
	uint8_t		type;		/**< enum nvmefs_tcp_pdu_type */
	uint8_t		flags;		/**< enum nvmefs_tcp_pdu_flags */
	uint8_t		hlen;		/**< header length, without its digest */
	uint8_t		pdo;		/**< PDU data offset; 0 without data */
	nvmefs_le32	plen;		/**< the whole PDU, digests included */
};

/** Initialize Connection Request, host to controller. */
struct nvmefs_tcp_icreq {
	struct nvmefs_tcp_hdr	hdr;
	nvmefs_le16	pfv;
	uint8_t		hpda;		/**< host PDU data alignment, 0's based dwords */
	uint8_t		digest;		/**< enum nvmefs_tcp_digest_option asked for */
	nvmefs_le32	maxr2t;		/**< R2Ts outstanding per command, 0's based */
	uint8_t		rsvd[112];
};

/** Initialize Connection Response, controller to host. */
struct nvmefs_tcp_icresp {
	struct nvmefs_tcp_hdr	hdr;
	nvmefs_le16	pfv;
	uint8_t		cpda;		/**< controller PDU data alignment */
	uint8_t		digest;		/**< the digests enabled */
	nvmefs_le32	maxdata;	/**< MAXH2CDATA: bytes of one H2CData PDU */
	uint8_t		rsvd[112];
};

/** H2CTermReq and C2HTermReq; the offending PDU header follows as data. */
struct nvmefs_tcp_term {
	struct nvmefs_tcp_hdr	hdr;
	nvmefs_le16	fes;		/**< enum nvmefs_tcp_fatal_error_status */
	uint8_t		fei[4];		/**< fatal error information, LE */
	uint8_t		rsvd[10];
};

/** Command capsule: the SQE, then in-capsule data at PDO. */
struct nvmefs_tcp_cmd {
	struct nvmefs_tcp_hdr	hdr;
	struct nvmefs_sqe	sqe;
};

/** Response capsule. */
struct nvmefs_tcp_rsp {
	struct nvmefs_tcp_hdr	hdr;
	struct nvmefs_cqe	cqe;
};

/** H2CData and C2HData. */
struct nvmefs_tcp_data {
	struct nvmefs_tcp_hdr	hdr;
	nvmefs_le16	command_id;
	nvmefs_le16	ttag;		/**< H2CData: the R2T's transfer tag */
	nvmefs_le32	data_offset;
	nvmefs_le32	data_length;
	uint8_t		rsvd[4];
};

/** Ready to Transfer, controller to host. */
struct nvmefs_tcp_r2t {
	struct nvmefs_tcp_hdr	hdr;
	nvmefs_le16	command_id;
	nvmefs_le16	ttag;
	nvmefs_le32	r2t_offset;
	nvmefs_le32	r2t_length;
	uint8_t		rsvd[4];
};

NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_hdr) == 8, "TCP common header is 8 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_hdr, plen) == 4, "TCP PLEN at 4");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_icreq) == 128, "ICReq is 128 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_icreq, hpda) == 10, "ICReq HPDA at 10");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_icreq, digest) == 11, "ICReq DGST at 11");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_icreq, maxr2t) == 12, "ICReq MAXR2T at 12");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_icresp) == 128, "ICResp is 128 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_icresp, cpda) == 10, "ICResp CPDA at 10");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_icresp, maxdata) == 12, "ICResp MAXH2CDATA at 12");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_term) == 24, "TermReq header is 24 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_term, fes) == 8, "TermReq FES at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_term, fei) == 10, "TermReq FEI at 10");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_cmd) == 72, "CapsuleCmd header is 72 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_cmd, sqe) == 8, "CapsuleCmd SQE at 8");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_rsp) == 24, "CapsuleResp is 24 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_rsp, cqe) == 8, "CapsuleResp CQE at 8");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_data) == 24, "H2C/C2HData header is 24 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_data, command_id) == 8, "data CCCID at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_data, ttag) == 10, "data TTAG at 10");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_data, data_offset) == 12, "DATAO at 12");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_data, data_length) == 16, "DATAL at 16");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_tcp_r2t) == 24, "R2T is 24 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_r2t, ttag) == 10, "R2T TTAG at 10");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_r2t, r2t_offset) == 12, "R2TO at 12");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_tcp_r2t, r2t_length) == 16, "R2TL at 16");

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_WIRE_TCP_H */
