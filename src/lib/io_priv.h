/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The I/O path's functions that io.c, io_queues.c, io_forward.c,
 * namespaces.c, mpath.c and subsys.c share; the queue itself is ioq.h. */
#ifndef NVMEFS_IO_PRIV_H
#define NVMEFS_IO_PRIV_H

#include "internal.h"
#include "ioq.h"

/* io.c */
void nvmefs_io_pending_push(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* Completes @io, which @ioq owns, to its caller. */
void nvmefs_io_complete(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* Whether a submission to @ioq would be taken now rather than refused with
 * -EAGAIN (a free record, nothing waiting for slots). */
bool nvmefs_ioq_can_take(const struct nvmefs_ioq *ioq);

/* namespaces.c */
/* Identifies every active namespace into ctrl->ns (I/O queue creation). */
int nvmefs_io_scan_namespaces(struct nvmefs_ctrl *ctrl);
/* After a reconnect: sizes followed, other identities gone. */
int nvmefs_io_recheck_namespaces(struct nvmefs_ctrl *ctrl);

/* The cached namespace @nsid, or NULL; on every submission. */
static inline const struct nvmefs_ns_cache *nvmefs_io_find_ns(const struct nvmefs_ctrl *ctrl,
							      uint32_t nsid)
{
	unsigned int i;

	for (i = 0; i < ctrl->nr_ns; i++)
		if (ctrl->ns[i].nsid == nsid)
			return &ctrl->ns[i];
	return NULL;
}

/* Blocks one Write Zeroes carries on @ctrl's namespaces of 2^@lba_shift-byte
 * blocks.  A limit under one block still lets one through: a command carries
 * whole blocks, and the controller's answer is then the caller's error. */
static inline uint32_t nvmefs_io_zeroes_nlb(const struct nvmefs_ctrl *ctrl, uint8_t lba_shift)
{
	uint64_t by_limit = ctrl->max_zeroes_bytes >> lba_shift;

	if (!ctrl->max_zeroes_bytes || by_limit >= NVMEFS_MAX_ZEROES_BLOCKS)
		return NVMEFS_MAX_ZEROES_BLOCKS;
	return by_limit ? (uint32_t)by_limit : 1;
}

/* io_forward.c */
/* Hands @io, which its owner cannot send, to @host to send. */
void nvmefs_io_forward(struct nvmefs_ioq *host, struct nvmefs_io *io);
/* Hands @io, completed on another queue, back to its owner. */
void nvmefs_io_return(struct nvmefs_io *io);
/* Hands every I/O @ioq holds to @host, oldest first. */
void nvmefs_io_forward_held(struct nvmefs_ioq *ioq, struct nvmefs_ioq *host);

#endif /* NVMEFS_IO_PRIV_H */
