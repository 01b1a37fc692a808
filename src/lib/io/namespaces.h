/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The active namespaces of an I/O controller (namespaces.c), cached in
 * ctrl->ns for the I/O path. */
#ifndef NVMEFS_NAMESPACES_H
#define NVMEFS_NAMESPACES_H

#include <stdint.h>

#include "../types/ctrl_types.h"

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

/* After a Namespace Attribute Changed event: new sizes, new namespaces,
 * and the ones gone or replaced.  A namespace without a definite answer
 * stays as it was, and the rescan is due again at ctrl->rescan_at_ms. */
int nvmefs_io_rescan(struct nvmefs_ctrl *ctrl);

#endif /* NVMEFS_NAMESPACES_H */
