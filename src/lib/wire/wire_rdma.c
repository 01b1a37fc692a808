/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Encoders and decoders for the RDMA-CM private data of <nvmefs/wire_rdma.h>.
 *
 * What came from the target is parsed from raw bytes with explicit
 * lengths, never by casting a buffer of unknown size and alignment.
 */
#include <errno.h>
#include <string.h>

#include "nvmefs/wire_rdma.h"

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

void nvmefs_rdma_cm_req_encode(struct nvmefs_rdma_cm_req *req,
			       const struct nvmefs_rdma_cm_params *p)
{
	memset(req, 0, sizeof(*req));
	req->recfmt = nvmefs_cpu_to_le16(NVMEFS_RDMA_CM_RECFMT);
	req->qid = nvmefs_cpu_to_le16(p->qid);
	req->hrqsize = nvmefs_cpu_to_le16(p->hrqsize);
	req->hsqsize = nvmefs_cpu_to_le16(p->hsqsize);
	req->cntlid = nvmefs_cpu_to_le16(p->cntlid);
}

int nvmefs_rdma_cm_req_parse(const void *buf, size_t len,
			     struct nvmefs_rdma_cm_params *p)
{
	const uint8_t *b = buf;

	if (!b || len < sizeof(struct nvmefs_rdma_cm_req))
		return -EINVAL;
	if (get_le16(b + offsetof(struct nvmefs_rdma_cm_req, recfmt)) !=
	    NVMEFS_RDMA_CM_RECFMT)
		return -EINVAL;
	p->qid = get_le16(b + offsetof(struct nvmefs_rdma_cm_req, qid));
	p->hrqsize = get_le16(b + offsetof(struct nvmefs_rdma_cm_req, hrqsize));
	p->hsqsize = get_le16(b + offsetof(struct nvmefs_rdma_cm_req, hsqsize));
	p->cntlid = get_le16(b + offsetof(struct nvmefs_rdma_cm_req, cntlid));
	return 0;
}

void nvmefs_rdma_cm_rep_encode(struct nvmefs_rdma_cm_rep *rep, uint16_t crqsize)
{
	memset(rep, 0, sizeof(*rep));
	rep->recfmt = nvmefs_cpu_to_le16(NVMEFS_RDMA_CM_RECFMT);
	rep->crqsize = nvmefs_cpu_to_le16(crqsize);
}

int nvmefs_rdma_cm_rep_parse(const void *buf, size_t len, uint16_t *crqsize)
{
	const uint8_t *b = buf;

	if (!b || len < 4)
		return -EINVAL;
	if (get_le16(b + offsetof(struct nvmefs_rdma_cm_rep, recfmt)) !=
	    NVMEFS_RDMA_CM_RECFMT)
		return -EINVAL;
	*crqsize = get_le16(b + offsetof(struct nvmefs_rdma_cm_rep, crqsize));
	return 0;
}

void nvmefs_rdma_cm_rej_encode(struct nvmefs_rdma_cm_rej *rej, uint16_t sts)
{
	rej->recfmt = nvmefs_cpu_to_le16(NVMEFS_RDMA_CM_RECFMT);
	rej->sts = nvmefs_cpu_to_le16(sts);
}

int nvmefs_rdma_cm_rej_parse(const void *buf, size_t len, uint16_t *sts)
{
	const uint8_t *b = buf;

	if (!b || len < sizeof(struct nvmefs_rdma_cm_rej))
		return -EINVAL;
	if (get_le16(b + offsetof(struct nvmefs_rdma_cm_rej, recfmt)) !=
	    NVMEFS_RDMA_CM_RECFMT)
		return -EINVAL;
	*sts = get_le16(b + offsetof(struct nvmefs_rdma_cm_rej, sts));
	return 0;
}

const char *nvmefs_rdma_cm_reject_str(uint16_t sts)
{
	switch (sts) {
	case NVMEFS_RDMA_CM_INVALID_LEN:
		return "invalid private data length";
	case NVMEFS_RDMA_CM_INVALID_RECFMT:
		return "invalid private data record format";
	case NVMEFS_RDMA_CM_INVALID_QID:
		return "invalid queue ID";
	case NVMEFS_RDMA_CM_INVALID_HSQSIZE:
		return "invalid host send queue size";
	case NVMEFS_RDMA_CM_INVALID_HRQSIZE:
		return "invalid host receive queue size";
	case NVMEFS_RDMA_CM_NO_RSC:
		return "controller out of resources";
	case NVMEFS_RDMA_CM_INVALID_IRD:
		return "invalid IRD (inbound RDMA read depth)";
	case NVMEFS_RDMA_CM_INVALID_ORD:
		return "invalid ORD (outbound RDMA read depth)";
	case NVMEFS_RDMA_CM_INVALID_CNTLID:
		return "invalid controller ID";
	default:
		return "unknown NVMe/RDMA reject status";
	}
}
