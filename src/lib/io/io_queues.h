/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A controller's I/O queues created, reconnected and deleted (io_queues.c),
 * for the controller's files. */
#ifndef NVMEFS_IO_QUEUES_H
#define NVMEFS_IO_QUEUES_H

#include <stdbool.h>

#include <nvme/types.h>

struct nvmefs_ctrl;

/* The I/O limits Identify Controller @id gives (MDTS, IOCCSZ,
 * ICDOFF), taken before any I/O goes on new queues, at the first connect
 * and at every reconnect. */
void nvmefs_io_take_limits(struct nvmefs_ctrl *ctrl, const struct nvme_id_ctrl *id);

/* For recovery: bring every I/O queue back with the same geometry and
 * check the namespaces; tear their transports down. */
int nvmefs_io_reconnect(struct nvmefs_ctrl *ctrl);
void nvmefs_io_disconnect(struct nvmefs_ctrl *ctrl);
/* Whether every I/O queue's owner has stopped it for failure @gen. */
bool nvmefs_io_all_stopped(struct nvmefs_ctrl *ctrl, unsigned int gen);

#endif /* NVMEFS_IO_QUEUES_H */
