/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests posted from threads other than the workers (exp_post()): FUSE
 * over io_uring hands requests to libfuse's ring threads, not to the
 * workers that read /dev/fuse.  A worker owns its queue, so a ring thread
 * only puts the request in a worker's inbox and wakes it; the worker
 * starts it on its queue as one it read itself, and completes it.  A
 * front end whose requests come in on the worker's own thread (FUSE over
 * io_uring served by the worker) starts them with exp_worker_post(), with
 * no inbox.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>

#include "export_priv.h"

void exp_set_io_uring(struct exp *e, bool on)
{
	atomic_store(&e->io_uring, on);
}

void exp_post(struct exp *e, struct exp_post *p)
{
	unsigned int i = atomic_fetch_add_explicit(&e->post_next, 1, memory_order_relaxed);
	struct exp_worker *w = &e->workers[i % e->opts.workers];
	bool wake, closed;

	p->next = NULL;
	pthread_mutex_lock(&w->inbox_lock);
	closed = w->inbox_closed;
	/* A worker empties its inbox each time round, and is woken when
	 * it was empty; what waits for a buffer waits for a completion, which
	 * wakes the worker anyway. */
	wake = !w->inbox_head;
	if (!closed) {
		if (w->inbox_tail)
			w->inbox_tail->next = p;
		else
			w->inbox_head = p;
		w->inbox_tail = p;
		atomic_fetch_add_explicit(&w->inbox_len, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&w->inbox_lock);
	if (closed)
		e->ops->complete(p->cookie, p->op, ENOTCONN, 0);
	else if (wake)
		eventfd_write(w->wake_fd, 1);
}

static struct exp_post *inbox_pop(struct exp_worker *w)
{
	struct exp_post *p;

	pthread_mutex_lock(&w->inbox_lock);
	p = w->inbox_head;
	if (p) {
		w->inbox_head = p->next;
		if (!w->inbox_head)
			w->inbox_tail = NULL;
		atomic_fetch_sub_explicit(&w->inbox_len, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&w->inbox_lock);
	return p;
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

void exp_post_start(struct exp_worker *w, struct exp_post *p)
{
	struct exp_req *f = exp_req_take(w);
	const void *data = p->data;

	f->start_ns = p->start_ns;
	if (p->op == EXP_WRITE && p->copy) {
		memcpy(f->buf, p->data, p->size);
		data = f->buf;
	}
	exp_start_req(f, p->cookie, p->ns, p->op, p->off, p->size, data,
		      read_in_place(p) ? p->read_buf : NULL);
}

bool exp_worker_can_post(const struct exp_worker *w)
{
	return w->free != NULL;
}

int exp_worker_post(struct exp_worker *w, struct exp_post *p)
{
	if (!exp_parks(w, p->ns->nsid)) {
		exp_post_start(w, p);
		return 1;
	}
	if (park_add_post(&w->held, &w->e->parked_bytes, p->ns->nsid, p) < 0) {
		w->e->ops->complete(p->cookie, p->op, ENOMEM, 0);
		return -ENOMEM;
	}
	return 0;
}

bool exp_inbox_run(struct exp_worker *w)
{
	bool any = false;
	struct exp_post *p;

	/* A post that races this look is followed by a wake. */
	if (!atomic_load_explicit(&w->inbox_len, memory_order_relaxed))
		return false;
	while (w->free && (p = inbox_pop(w))) {
		any = true;
		exp_worker_post(w, p);
	}
	return any;
}

void exp_inbox_close(struct exp_worker *w)
{
	pthread_mutex_lock(&w->inbox_lock);
	w->inbox_closed = true;
	pthread_mutex_unlock(&w->inbox_lock);
}

void exp_inbox_fail(struct exp_worker *w, int err)
{
	for (struct exp_post *p; (p = inbox_pop(w));)
		w->e->ops->complete(p->cookie, p->op, err, 0);
}
