/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The I/O path's functions (io.c) that the other I/O files share; the
 * queue itself is ioq.h. */
#ifndef NVMEFS_IO_PRIV_H
#define NVMEFS_IO_PRIV_H

#include <stdbool.h>

#include "ioq.h"

void nvmefs_io_pending_push(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* Completes @io, which @ioq owns, to its caller. */
void nvmefs_io_complete(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* Whether a submission to @ioq would be taken now rather than refused with
 * -EAGAIN (a free record, nothing waiting for slots). */
bool nvmefs_ioq_can_take(const struct nvmefs_ioq *ioq);

#endif /* NVMEFS_IO_PRIV_H */
