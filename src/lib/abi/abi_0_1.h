/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* 0.1's symbols (abi_0_1.c). */
#ifndef NVMEFS_ABI_0_1_H
#define NVMEFS_ABI_0_1_H

#include "nvmefs/nvmefs.h"

/* The 0.1 versions, for tests with a copy of that layout of their own. */
struct nvmefs_connect_opts_0_1;
void nvmefs_connect_opts_init_0_1(struct nvmefs_connect_opts_0_1 *old);
int nvmefs_ctrl_connect_0_1(const struct nvmefs_connect_opts_0_1 *old, struct nvmefs_ctrl **ctrlp);
typedef int (*nvmefs_discovery_cb_0_1)(const struct nvmefs_connect_opts_0_1 *where,
				       const struct nvmf_discovery_log *log, int depth, void *arg);
int nvmefs_discover_0_1(const struct nvmefs_connect_opts_0_1 *old, int max_depth,
			nvmefs_discovery_cb_0_1 cb, void *arg);

#endif /* NVMEFS_ABI_0_1_H */
