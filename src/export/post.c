/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests a front end keeps in memory of its own and starts on the thread
 * serving a worker (exp_worker_post()): FUSE over io_uring's ring entries,
 * which the workers serve themselves.  A read that starts on a block goes
 * straight into the entry's registered payload; the rest is copied through
 * a worker's buffer.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "export_priv.h"

void exp_set_io_uring(struct exp *e, bool on)
{
	atomic_store(&e->io_uring, on);
}

/* Whether @p's read goes to its own buffer: whole blocks from its start,
 * so that the data is completed from the buffer's first byte (where FUSE
 * over io_uring replies from without a copy); else the worker's buffer,
 * which has room for the blocks around an unaligned read. */
static bool read_in_place(const struct exp_post *p)
{
	uint32_t mask = p->ns->lba_size - 1;

	return p->op == EXP_READ && p->read_buf && !(p->off & mask) &&
	       ((p->size + mask) & ~(size_t)mask) <= p->read_room;
}

int exp_post_start(struct exp_worker *w, struct exp_post *p, bool may_park)
{
	struct exp_req *f = exp_req_take(w);
	const void *data = p->data;

	f->start_ns = p->start_ns;
	if (p->op == EXP_WRITE && p->copy) {
		memcpy(f->buf, p->data, p->size);
		data = f->buf;
	}
	if (exp_start_req(f, p->cookie, p->ns, p->op, p->off, p->size, data,
			  read_in_place(p) ? p->read_buf : NULL, may_park))
		return 1;
	return !exp_park_held(f, p);
}

bool exp_worker_can_post(const struct exp_worker *w)
{
	return w->free != NULL;
}

int exp_worker_post(struct exp_worker *w, struct exp_post *p)
{
	return exp_post_start(w, p, true);
}
