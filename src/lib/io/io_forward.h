/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mailbox between I/O queues that share a connection (io_forward.c),
 * for io.c, io_cmd.c and io_poll.c, which send, complete and take the mail. */
#ifndef NVMEFS_IO_FORWARD_H
#define NVMEFS_IO_FORWARD_H

#include "ioq.h"

/* Hands @io, which its owner cannot send, to @host to send. */
void nvmefs_io_forward(struct nvmefs_ioq *host, struct nvmefs_io *io);
/* Hands @io, completed on another queue, back to its owner. */
void nvmefs_io_return(struct nvmefs_io *io);
/* Hands every I/O @ioq holds to @host, oldest first. */
void nvmefs_io_forward_held(struct nvmefs_ioq *ioq, struct nvmefs_ioq *host);

#endif
