/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decision of how a command's data travels over NVMe/RDMA
 * (rdma_sgl.c), free of verbs calls and of verbs.h, so that the scripted
 * target of the unit tests describes data as rdma.c does without the RDMA
 * libraries.
 */
#ifndef NVMEFS_RDMA_SGL_H
#define NVMEFS_RDMA_SGL_H

#include <stdbool.h>
#include <stdint.h>

#include "nvmefs/wire_rdma.h"
#include "../types/transport_ops.h"

/* The capsule's data SGE, as struct ibv_sge has it: rdma.c copies it into
 * its send. */
struct nvmefs_rdma_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* Whether @req's data travels by the target's RDMA READ or WRITE (a keyed
 * SGL), not in the capsule: small writes ride in it, saving the target a
 * read; the admin queue has no in-capsule data (inline_size 0). */
static inline bool nvmefs_rdma_keyed(const struct nvmefs_req *req, uint32_t inline_size)
{
	return req->len && !(req->dir == NVMEFS_DIR_TO_CTRL && req->len <= inline_size);
}

/*
 * Describe @req's data in its command: no data (a null keyed SGL), in the
 * capsule (a data block at offset 0, and @data_sge filled for the send) when
 * it is a write of at most @inline_size bytes, else a keyed SGL for the
 * target's RDMA READ or WRITE.  Keys come from req->mr, or are the slot
 * buffer's @slot_lkey/@slot_rkey; with @io_rkey, the request's own key
 * instead, for the target to invalidate with its response.  Returns how
 * many SGEs to add to the send (0 or 1), or -errno.
 */
int nvmefs_rdma_map_data(struct nvmefs_req *req, uint32_t inline_size, uint32_t slot_lkey,
			 uint32_t slot_rkey, const uint32_t *io_rkey, struct nvmefs_rdma_sge *data_sge);

#endif /* NVMEFS_RDMA_SGL_H */
