/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Asymmetric Namespace Access (ana.c). */
#ifndef NVMEFS_ANA_H
#define NVMEFS_ANA_H

#include <stdbool.h>

struct nvmefs_ctrl;

/* Read the ANA log and set every cached namespace's state from its
 * group's (all optimized on a controller without ANA reporting); logs each
 * change through the event callback unless @quiet.  Takes io_lock.  Returns
 * how many namespaces changed state: the caller wakes the I/O queues'
 * owners, whose held I/O may now have a path. */
int nvmefs_ana_update(struct nvmefs_ctrl *ctrl, bool quiet);
/* Whether the controller reports ANA (CMIC bit 3). */
bool nvmefs_ana_reporting(const struct nvmefs_ctrl *ctrl);

#endif /* NVMEFS_ANA_H */
