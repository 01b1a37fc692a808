/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The synchronous forms of an I/O queue's reads, writes and flushes. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <nvme/util.h>

#include "io_cmd.h"
#include "io_priv.h"
#include "../base/error.h"

struct sync_wait {
	bool done;
	int status;
};

static void sync_done(void *arg, int status)
{
	struct sync_wait *w = arg;

	w->done = true;
	w->status = status;
}

static int sync_io(struct nvmefs_ioq *ioq, enum io_op op, uint32_t nsid, uint64_t slba,
		   uint32_t nlb, void *buf)
{
	struct sync_wait w = { 0 };
	int ret;

	while ((ret = nvmefs_io_submit(ioq, op, nsid, slba, nlb, buf, 0, sync_done, &w)) == -EAGAIN) {
		ret = nvmefs_ioq_poll(ioq, -1);
		if (ret < 0)
			return ret;
	}
	if (ret < 0)
		return ret;
	while (!w.done)
		nvmefs_ioq_poll(ioq, -1);
	if (w.status > 0)
		nvmefs_set_error("namespace %u, blocks %llu+%u: %s", nsid, (unsigned long long)slba,
				 nlb, nvme_status_to_string(w.status, false));
	return w.status;
}

int nvmefs_ioq_read_sync(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb,
			 void *buf)
{
	return sync_io(ioq, IO_READ, nsid, slba, nlb, buf);
}

int nvmefs_ioq_write_sync(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb,
			  const void *buf)
{
	return sync_io(ioq, IO_WRITE, nsid, slba, nlb, (void *)buf);
}

int nvmefs_ioq_flush_sync(struct nvmefs_ioq *ioq, uint32_t nsid)
{
	return sync_io(ioq, IO_FLUSH, nsid, 0, 0, NULL);
}
