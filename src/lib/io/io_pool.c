/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Each I/O queue's registered buffer pool (io_queues.c makes it), for
 * callers that have no registered memory of their own. */
#include <stddef.h>
#include <stdint.h>

#include "ioq.h"

void *nvmefs_ioq_buf_get(struct nvmefs_ioq *ioq)
{
	return ioq->nr_free_bufs ? ioq->free_bufs[--ioq->nr_free_bufs] : NULL;
}

void nvmefs_ioq_buf_put(struct nvmefs_ioq *ioq, void *buf)
{
	uint8_t *p = buf;

	/* A buffer not from this pool, or one put back twice, is ignored
	 * rather than written past the end of the free list. */
	if (!p || ioq->nr_free_bufs == ioq->nr_bufs || p < ioq->pool ||
	    p >= ioq->pool + ioq->buf_size * ioq->nr_bufs || (size_t)(p - ioq->pool) % ioq->buf_size)
		return;
	ioq->free_bufs[ioq->nr_free_bufs++] = buf;
}

size_t nvmefs_ioq_buf_size(const struct nvmefs_ioq *ioq)
{
	return ioq->buf_size;
}
