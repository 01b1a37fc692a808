/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Fabrics commands: Connect and properties (fabrics.c). */
#ifndef NVMEFS_FABRICS_H
#define NVMEFS_FABRICS_H

#include <stdint.h>

struct nvmefs_ctrl;
struct nvmefs_queue;

int nvmefs_fabrics_connect(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q,
			   uint32_t kato_ms);
int nvmefs_prop_get(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t *value);
int nvmefs_prop_set(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t value);

#endif /* NVMEFS_FABRICS_H */
