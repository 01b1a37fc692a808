/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An I/O's commands and the queue's pending list (io_cmd.c), for the
 * submission (io.c) and the poll loop (io_poll.c). */
#ifndef NVMEFS_IO_CMD_H
#define NVMEFS_IO_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include <nvme/types.h>

#include "ioq.h"

enum io_op {
	IO_READ = nvme_cmd_read,
	IO_WRITE = nvme_cmd_write,
	IO_FLUSH = nvme_cmd_flush,
	IO_WRITE_ZEROES = nvme_cmd_write_zeroes,
	IO_DEALLOCATE = nvme_cmd_dsm,
	/* Write Zeroes, deallocating where the namespace says it can (not an opcode). */
	IO_PUNCH = 0x100,
};

/* Whether @io writes: it orders the flushes after it. */
bool nvmefs_io_writes(const struct nvmefs_io *io);
/* Completes @io, which @ioq owns, to its caller. */
void nvmefs_io_complete(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* Send as much of @io as free slots allow: 0, -EAGAIN, or the queue's failure. */
int nvmefs_io_pump(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* Appends @io to the I/O waiting for slots. */
void nvmefs_io_pending_push(struct nvmefs_ioq *ioq, struct nvmefs_io *io);
/* The retry delay the oldest waiting I/O must sit out, or 0. */
int64_t nvmefs_io_pending_not_before(const struct nvmefs_ioq *ioq);
/* Whether nvmefs_io_pump_pending() can send something now. */
bool nvmefs_io_pending_can_go(struct nvmefs_ioq *ioq);
/* Sends more of the I/Os that waited for slots, oldest first. */
void nvmefs_io_pump_pending(struct nvmefs_ioq *ioq);
/* Why I/O to @nsid fails while @ctrl is not live: its user gave up
 * waiting (nvmefs_subsys_give_up_ns()).  -EIO. */
int nvmefs_io_given_up_error(const struct nvmefs_ctrl *ctrl, uint32_t nsid);
/* Whether I/O held in the stopped @ioq is for a namespace given up. */
bool nvmefs_io_pending_given_up(const struct nvmefs_ioq *ioq);
/* In an outage, with @ioq stopped: the I/O it holds for a namespace given
 * up fails; the rest stays held. */
void nvmefs_io_fail_given_up(struct nvmefs_ioq *ioq);

#endif /* NVMEFS_IO_CMD_H */
