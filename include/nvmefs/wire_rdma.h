/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file wire_rdma.h
 * @brief The NVMe/RDMA transport's own wire formats: the RDMA-CM private
 * data of a queue's connection (NVMe/RDMA transport spec).
 *
 * Only the RDMA transport uses them; <nvmefs/wire.h> holds what every
 * NVMe-oF transport shares.
 */
#ifndef NVMEFS_WIRE_RDMA_H
#define NVMEFS_WIRE_RDMA_H

#include <nvmefs/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/** RDMA-CM private data record format 1.0, the only one defined. */
#define NVMEFS_RDMA_CM_RECFMT		0

/** RDMA_CM_REQUEST private data, sent by the host. */
struct nvmefs_rdma_cm_req {
	nvmefs_le16	recfmt;
	nvmefs_le16	qid;
	nvmefs_le16	hrqsize;	/**< host receive queue entries, 1's based */
	nvmefs_le16	hsqsize;	/**< host send queue size, 0's based */
	nvmefs_le16	cntlid;		/**< I/O queues: the admin Connect's cntlid */
	uint8_t		rsvd10[22];
};

/** RDMA_CM_ACCEPT private data, sent by the controller. */
struct nvmefs_rdma_cm_rep {
	nvmefs_le16	recfmt;
	nvmefs_le16	crqsize;	/**< controller receive queue entries */
	uint8_t		rsvd4[28];
};

/**
 * RDMA_CM_REJECT private data.  Linux's target sends just these 4 bytes;
 * the IB CM pads what arrives to its own size, so parse with
 * nvmefs_rdma_cm_rej_parse(), which takes whatever length came.
 */
struct nvmefs_rdma_cm_rej {
	nvmefs_le16	recfmt;
	nvmefs_le16	sts;		/**< enum nvmefs_rdma_cm_status */
};

NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_rdma_cm_req) == 32, "CM request is 32 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_rdma_cm_req, qid) == 2, "CM req qid at 2");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_rdma_cm_req, hrqsize) == 4, "CM req hrqsize at 4");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_rdma_cm_req, hsqsize) == 6, "CM req hsqsize at 6");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_rdma_cm_req, cntlid) == 8, "CM req cntlid at 8");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_rdma_cm_rep) == 32, "CM accept is 32 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_rdma_cm_rep, crqsize) == 2, "CM rep crqsize at 2");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_rdma_cm_rej) == 4, "CM reject is 4 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_rdma_cm_rej, sts) == 2, "CM rej sts at 2");

/** Why a controller rejected an RDMA-CM connection request. */
enum nvmefs_rdma_cm_status {
	NVMEFS_RDMA_CM_INVALID_LEN	= 0x01,
	NVMEFS_RDMA_CM_INVALID_RECFMT	= 0x02,
	NVMEFS_RDMA_CM_INVALID_QID	= 0x03,
	NVMEFS_RDMA_CM_INVALID_HSQSIZE	= 0x04,
	NVMEFS_RDMA_CM_INVALID_HRQSIZE	= 0x05,
	NVMEFS_RDMA_CM_NO_RSC		= 0x06,
	NVMEFS_RDMA_CM_INVALID_IRD	= 0x07,
	NVMEFS_RDMA_CM_INVALID_ORD	= 0x08,
	NVMEFS_RDMA_CM_INVALID_CNTLID	= 0x09,
};

/** The host's connection parameters, in host byte order. */
struct nvmefs_rdma_cm_params {
	uint16_t	qid;
	uint16_t	hrqsize;
	uint16_t	hsqsize;
	uint16_t	cntlid;
};

/**
 * Encode the request private data.  Linux hosts send cntlid 0 for the
 * admin queue and the admin Connect's cntlid for I/O queues; do the same.
 */
void nvmefs_rdma_cm_req_encode(struct nvmefs_rdma_cm_req *req,
			       const struct nvmefs_rdma_cm_params *p);
/**
 * Parse request private data of @len bytes (a target's view; used by
 * tests).  Returns -EINVAL if shorter than 32 bytes or of an unknown record
 * format.
 */
int nvmefs_rdma_cm_req_parse(const void *buf, size_t len,
			     struct nvmefs_rdma_cm_params *p);
/** Encode accept private data. */
void nvmefs_rdma_cm_rep_encode(struct nvmefs_rdma_cm_rep *rep, uint16_t crqsize);
/**
 * Parse accept private data.  Only the first 4 bytes matter and transports
 * pad, so any @len >= 4 is accepted.  Returns -EINVAL if shorter or of an
 * unknown record format.
 */
int nvmefs_rdma_cm_rep_parse(const void *buf, size_t len, uint16_t *crqsize);
/** Encode reject private data. */
void nvmefs_rdma_cm_rej_encode(struct nvmefs_rdma_cm_rej *rej, uint16_t sts);
/**
 * Parse reject private data of any length >= 4 (@buf may be unaligned).
 * Returns -EINVAL if shorter (or @buf is NULL) or of an unknown record
 * format: the reject then did not come from an NVMe/RDMA controller.
 */
int nvmefs_rdma_cm_rej_parse(const void *buf, size_t len, uint16_t *sts);
/** Human text for a reject status; never NULL. */
const char *nvmefs_rdma_cm_reject_str(uint16_t sts);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_WIRE_RDMA_H */
