/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading discovery logs (discovery.c). */
#ifndef NVMEFS_DISCOVERY_H
#define NVMEFS_DISCOVERY_H

#include "nvmefs/nvmefs.h"

/* The current nvmefs_discover(), bound at NVMEFS_0.2 (connect_opts.h). */
int nvmefs_discover_0_2(const struct nvmefs_connect_opts *opts, int max_depth,
			nvmefs_discovery_cb cb, void *arg);

#endif /* NVMEFS_DISCOVERY_H */
