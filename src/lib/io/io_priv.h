/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Submitting to an I/O queue (io.c), for the sync forms and the subsystem
 * head; the queue itself is ioq.h. */
#ifndef NVMEFS_IO_PRIV_H
#define NVMEFS_IO_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "io_cmd.h"
#include "ioq.h"

/* Submits @op: 0, or -EAGAIN (no record free, or I/O waiting ahead), or
 * -errno with a message; @cb is called once for an I/O taken.  @flags
 * NVMEFS_MPQ_NO_HOLD: NVMEFS_MPQ_HELD, nothing taken, for I/O it would
 * hold. */
int nvmefs_io_submit(struct nvmefs_ioq *ioq, enum io_op op, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, void *buf, unsigned int flags, nvmefs_io_cb cb, void *arg);
/* Whether a submission to @ioq would be taken now rather than refused with
 * -EAGAIN (a free record, nothing waiting for slots). */
bool nvmefs_ioq_can_take(const struct nvmefs_ioq *ioq);

#endif /* NVMEFS_IO_PRIV_H */
