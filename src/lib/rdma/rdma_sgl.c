/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a command's data travels over NVMe/RDMA (rdma_sgl.h): no data, in
 * the capsule, or a keyed SGL.  Apart from the rdma*.c files that make the
 * verbs calls, and in the library's transport-neutral part (Makefile.am),
 * so that unit tests link it with a scripted transport and no RDMA library.
 */
#include <errno.h>

#include "rdma_sgl.h"
#include "../base/error.h"
#include "../transport/mr.h"
#include "../types/transport_ops.h"

int nvmefs_rdma_map_data(struct nvmefs_req *req, uint32_t inline_size, uint32_t slot_lkey,
			 uint32_t slot_rkey, const uint32_t *io_rkey,
			 struct nvmefs_rdma_sge *data_sge)
{
	uint32_t lkey = req->mr ? req->mr->lkey : slot_lkey;
	uint32_t rkey = req->mr ? req->mr->rkey : slot_rkey;
	int ret;

	req->cmd->sqe.flags = (uint8_t)((req->cmd->sqe.flags & ~NVMEFS_SQE_PSDT_MASK) |
					NVMEFS_SQE_PSDT_SGL_MPTR_CONTIG);
	if (!req->len) {
		nvmefs_sgl_null(&req->cmd->sqe.dptr.sgl);
		return 0;
	}
	if (!nvmefs_rdma_keyed(req, inline_size)) {
		nvmefs_sgl_inline(&req->cmd->sqe.dptr.sgl, 0, req->len);
		data_sge->addr = (uintptr_t)req->data;
		data_sge->length = req->len;
		data_sge->lkey = lkey;
		return 1;
	}
	/* A key of its own is the target's to invalidate with its response. */
	if (io_rkey)
		ret = nvmefs_sgl_keyed_invalidate(&req->cmd->sqe.dptr.sgl, (uintptr_t)req->data,
						  req->len, *io_rkey);
	else
		ret = nvmefs_sgl_keyed(&req->cmd->sqe.dptr.sgl, (uintptr_t)req->data, req->len, rkey);
	if (ret < 0)
		return nvmefs_error(ret, "queue %u: %u bytes do not fit one keyed SGL", req->q->qid,
				    req->len);
	return 0;
}
