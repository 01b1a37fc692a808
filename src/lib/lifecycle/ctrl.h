/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A controller made, connected and freed (ctrl.c). */
#ifndef NVMEFS_CTRL_H
#define NVMEFS_CTRL_H

#include "nvmefs/nvmefs.h"

struct nvmefs_transport_ops;

/* The connect path with the transport chosen: unit tests pass a scripted one. */
int nvmefs_ctrl_connect_with(const struct nvmefs_transport_ops *ops,
			     const struct nvmefs_connect_opts *opts,
			     struct nvmefs_ctrl **ctrlp);

/* The current nvmefs_ctrl_connect(), bound at NVMEFS_0.2 (connect_opts.h). */
int nvmefs_ctrl_connect_0_2(const struct nvmefs_connect_opts *opts, struct nvmefs_ctrl **ctrlp);

#endif /* NVMEFS_CTRL_H */
