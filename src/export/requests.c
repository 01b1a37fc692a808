/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A request's NVMe commands: at most three sub-I/Os (the two partial edge
 * blocks, read for read-modify-write, and the whole blocks between), sent
 * on the worker's own queue and held on its retry list when the queue is
 * full.  Workers share nothing on the I/O path but a table of write
 * reservations: overlapping writes are serialized, so that the
 * read-modify-write of an unaligned edge never loses another writer's data.
 * A write that finds its blocks taken waits on its own worker's list and is
 * retried there; no thread blocks.  The front end hears of each request
 * once, through its ops, when all of it has ended.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include <nvme/types.h>
#include <nvme/util.h>

#include "export_priv.h"
#include "../common/histogram.h"
#include "../common/status.h"

/* ---------------------------------------------------------------------- */
/* Errors                                                                   */
/* ---------------------------------------------------------------------- */

/* An errno for the front end from a completion status; each NVMe status is logged
 * once, with what it hit. */
static int status_errno(struct exp *e, struct exp_req *f, int status)
{
	int err;

	if (status < 0)
		err = -status == ENOENT ? EIO : -status;
	else
		err = nvme_status_to_errno(status, false);
	/* What the transport or an outage says is, to a file's user, an I/O
	 * error, as the kernel initiator's block device reports it. */
	if (!err || err == ETIMEDOUT || err == ECONNRESET || err == ENOTCONN || err == EPROTO ||
	    err == ENODEV)
		err = EIO;
	pthread_mutex_lock(&e->log_lock);
	for (unsigned int i = 0; i < e->nr_logged; i++) {
		if (e->logged[i] == status)
			goto out;
	}
	if (e->nr_logged < sizeof(e->logged) / sizeof(e->logged[0]))
		e->logged[e->nr_logged++] = status;
	exp_log("%s, %s at byte %" PRIu64 " (%zu bytes): %s; returning %s (logged once)",
		f->ns ? f->ns->name : "?",
		f->op == EXP_READ ? "read" : f->op == EXP_WRITE ? "write" : f->op == EXP_FLUSH ? "flush"
		: "fallocate", f->off, f->size,
		status > 0 ? status_text(status) : nvmefs_errmsg(), strerror(err));
out:
	pthread_mutex_unlock(&e->log_lock);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Write reservations                                                       */
/* ---------------------------------------------------------------------- */

/* Reserves blocks @first..@last of @nsid for a write of @w; -1 when another
 * write holds some of them: @w is woken when a reservation is released. */
static int reserve(struct exp_worker *w, uint32_t nsid, uint64_t first, uint64_t last)
{
	struct exp *e = w->e;
	int free_slot = -1;

	pthread_mutex_lock(&e->resv_lock);
	for (unsigned int i = 0; i < e->nr_resv; i++) {
		struct resv *r = &e->resv[i];

		if (!r->used) {
			if (free_slot < 0)
				free_slot = (int)i;
		} else if (r->nsid == nsid && r->first <= last && first <= r->last) {
			free_slot = -1;
			w->resv_waiting = true;
			goto out;
		}
	}
	if (free_slot >= 0)
		e->resv[free_slot] = (struct resv){ true, nsid, first, last };
out:
	pthread_mutex_unlock(&e->resv_lock);
	return free_slot;
}

static void release_resv(struct exp *e, int idx)
{
	if (idx < 0)
		return;
	pthread_mutex_lock(&e->resv_lock);
	e->resv[idx].used = false;
	for (unsigned int i = 0; i < e->opts.workers; i++) {
		struct exp_worker *w = &e->workers[i];

		if (w->resv_waiting) {
			w->resv_waiting = false;
			eventfd_write(w->wake_fd, 1);
		}
	}
	pthread_mutex_unlock(&e->resv_lock);
}

/* ---------------------------------------------------------------------- */
/* Requests                                                                 */
/* ---------------------------------------------------------------------- */

static void retry_push(struct exp_worker *w, struct exp_req *f)
{
	if (f->listed)
		return;
	f->listed = true;
	f->next = NULL;
	if (w->retry_tail)
		w->retry_tail->next = f;
	else
		w->retry_head = f;
	w->retry_tail = f;
}

struct exp_req *exp_req_take(struct exp_worker *w)
{
	struct exp_req *f = w->free;

	w->free = f->next;
	w->busy++;
	if (!w->free)
		atomic_fetch_sub(&w->e->workers_with_free, 1);
	return f;
}

void exp_req_put(struct exp_worker *w, struct exp_req *f)
{
	f->busy = false;
	f->cookie = NULL;
	if (!w->free)
		atomic_fetch_add(&w->e->workers_with_free, 1);
	f->next = w->free;
	w->free = f;
	w->busy--;
}

static void count_done(struct exp_worker *w, struct exp_req *f)
{
	struct exp_stats *s = &w->stats;

	hist_add(&s->lat, hist_now_ns() - f->start_ns);
	if (f->error) {
		atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
		return;
	}
	switch (f->op) {
	case EXP_READ:
		atomic_fetch_add_explicit(&s->reads, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->read_bytes, f->size, memory_order_relaxed);
		break;
	case EXP_WRITE:
		atomic_fetch_add_explicit(&s->writes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->write_bytes, f->size, memory_order_relaxed);
		break;
	case EXP_FLUSH:
		atomic_fetch_add_explicit(&s->flushes, 1, memory_order_relaxed);
		break;
	default:
		break;
	}
}

static void finish(struct exp_req *f)
{
	struct exp_worker *w = f->w;
	const struct exp_ops *ops = w->e->ops;

	release_resv(w->e, f->resv);
	f->resv = -1;
	count_done(w, f);
	if (f->op == EXP_WRITE)
		atomic_fetch_sub_explicit(&w->e->writes_inflight, 1, memory_order_relaxed);
	if (!f->error && f->op == EXP_READ)
		ops->complete_read(f->cookie, f->rbuf + (f->off & (f->ns->lba_size - 1)), f->size);
	else
		ops->complete(f->cookie, (enum exp_op)f->op, f->error,
			      !f->error && f->op == EXP_WRITE ? f->size : 0);
	exp_req_put(w, f);
}

static void sub_done(void *arg, int status);

/* What the stats count for zeroing or punching @nlb blocks of @ns: the
 * commands the library splits them into. */
static uint64_t zeroes_commands(const struct exp_ns *ns, uint64_t nlb)
{
	return nlb / ns->max_zeroes_nlb + (nlb % ns->max_zeroes_nlb != 0);
}

/*
 * Submits sub-I/O @i of @f; a full queue only postpones it.  A request's
 * first submit asks the queue not to hold it: a namespace without a usable
 * path refuses it (f->held) before any of it is sent, once per request,
 * and it is parked rather than kept in its buffer.
 */
static void sub_submit(struct exp_req *f, unsigned int i)
{
	static const enum nvmefs_io_kind kinds[] = {
		[SUB_READ] = NVMEFS_IO_READ, [SUB_WRITE] = NVMEFS_IO_WRITE,
		[SUB_ZEROES] = NVMEFS_IO_WRITE_ZEROES, [SUB_PUNCH] = NVMEFS_IO_PUNCH,
		[SUB_FLUSH] = NVMEFS_IO_FLUSH,
	};
	struct exp_worker *w = f->w;
	struct sub_io *s = &f->sub[i];
	struct exp_stats *st = &w->stats;
	unsigned int flags = f->may_park ? NVMEFS_MPQ_NO_HOLD : 0;
	int ret;

	f->may_park = false;
	ret = nvmefs_mpq_submit(w->mpq, kinds[s->kind], f->ns->nsid, s->slba, s->nlb, s->buf, flags,
				sub_done, f);
	if (ret == NVMEFS_MPQ_HELD) {
		f->held = true;
		return;
	}
	if (!ret && s->kind == SUB_ZEROES)
		atomic_fetch_add_explicit(&st->write_zeroes, zeroes_commands(f->ns, s->nlb),
					  memory_order_relaxed);
	else if (!ret && s->kind == SUB_PUNCH)
		atomic_fetch_add_explicit(&st->deallocates, zeroes_commands(f->ns, s->nlb),
					  memory_order_relaxed);
	s->waiting = ret == -EAGAIN;
	if (ret == 0) {
		f->pending++;
	} else if (ret == -EAGAIN) {
		retry_push(w, f);
	} else if (!f->error) {
		f->error = status_errno(w->e, f, ret);
	}
}

static void sub_add(struct exp_req *f, unsigned int i, enum sub_kind kind, uint64_t slba,
		    uint64_t nlb, uint8_t *buf)
{
	f->sub[i] = (struct sub_io){ .kind = (uint8_t)kind, .slba = slba, .nlb = nlb, .buf = buf };
	sub_submit(f, i);
}

static bool subs_waiting(const struct exp_req *f)
{
	return f->sub[0].waiting || f->sub[1].waiting || f->sub[2].waiting;
}

static void write_phase(struct exp_req *f);

/* What to do once nothing of @f is in flight or waiting. */
static void step(struct exp_req *f)
{
	if (f->pending || subs_waiting(f))
		return;
	if (f->phase == 0 && (f->op == EXP_WRITE || f->op == EXP_ZERO || f->op == EXP_PUNCH) &&
	    !f->error) {
		write_phase(f);
		if (f->pending || subs_waiting(f))
			return;
	}
	finish(f);
}

static void sub_done(void *arg, int status)
{
	struct exp_req *f = arg;

	f->pending--;
	if (status && !f->error)
		f->error = status_errno(f->w->e, f, status);
	step(f);
}

/*
 * Writes (and zeroing) in two phases.  Phase 0 reads the partial blocks at
 * the edges while the whole blocks in the middle are already written
 * (they are ours: the range is reserved).  Phase 1 lays the new bytes over
 * the edge blocks and writes them back.
 */
static void write_phase(struct exp_req *f)
{
	uint32_t lba = f->ns->lba_size, mask = lba - 1;
	uint8_t shift = f->ns->lba_shift;
	uint64_t a = f->off, b = f->off + f->size;
	uint64_t first = a >> shift, last = (b - 1) >> shift;
	bool head = a & mask, tail = b & mask;

	f->phase = 1;
	if (head || tail) {
		uint8_t *blk0 = f->edge, *blk1 = f->edge + EXP_MAX_LBA_SIZE;

		if (first == last) {
			/* Phase 0 read the one block into the slot of its partial edge. */
			uint8_t *blk = head ? blk0 : blk1;

			if (f->data)
				memcpy(blk + (a & mask), f->data, f->size);
			else
				memset(blk + (a & mask), 0, f->size);
			sub_add(f, 0, SUB_WRITE, first, 1, blk);
			return;
		}
		if (head) {
			size_t n = lba - (a & mask);

			if (f->data)
				memcpy(blk0 + (a & mask), f->data, n);
			else
				memset(blk0 + (a & mask), 0, n);
			sub_add(f, 0, SUB_WRITE, first, 1, blk0);
		}
		if (tail) {
			size_t n = b & mask;

			if (f->data)
				memcpy(blk1, f->data + ((last << shift) - a), n);
			else
				memset(blk1, 0, n);
			sub_add(f, 1, SUB_WRITE, last, 1, blk1);
		}
	}
}

/* Starts a write or zeroing: reserve, read the edges, write the middle. */
static bool write_start(struct exp_req *f)
{
	struct exp_worker *w = f->w;
	uint32_t mask = f->ns->lba_size - 1;
	uint8_t shift = f->ns->lba_shift;
	uint64_t a = f->off, b = f->off + f->size;
	uint64_t first = a >> shift, last = (b - 1) >> shift, mfirst, mend;
	bool head = a & mask, tail = b & mask;

	f->resv = reserve(w, f->ns->nsid, first, last);
	if (f->resv < 0)
		return false;
	f->phase = 0;
	if (head)
		sub_add(f, 0, SUB_READ, first, 1, f->edge);
	if (tail && (last != first || !head) && !f->held)
		sub_add(f, 1, SUB_READ, last, 1, f->edge + EXP_MAX_LBA_SIZE);
	/* The whole blocks between the edges: [mfirst, mend). */
	mfirst = head ? first + 1 : first;
	mend = tail ? last : last + 1;
	if (mfirst < mend && !f->held) {
		uint64_t nlb = mend - mfirst;

		if (f->op == EXP_WRITE)
			sub_add(f, 2, SUB_WRITE, mfirst, nlb, (uint8_t *)f->data + ((mfirst << shift) - a));
		else if (f->op == EXP_PUNCH)
			sub_add(f, 2, SUB_PUNCH, mfirst, nlb, NULL);
		else
			sub_add(f, 2, SUB_ZEROES, mfirst, nlb, NULL);
	}
	if (f->held) {
		/* Refused before any of it went: nothing to wait for. */
		release_resv(w->e, f->resv);
		f->resv = -1;
		return true;
	}
	step(f);
	return true;
}

/* Writes that found their blocks reserved, and sub-I/Os a full queue refused.
 * Returns whether any of them got on: what still waits (on another write,
 * on an outage) is not worth spinning for. */
bool exp_run_retries(struct exp_worker *w)
{
	struct exp_req *f = w->retry_head, *next;
	unsigned int before = w->busy;
	bool moved = false;

	w->retry_head = w->retry_tail = NULL;
	for (; f; f = next) {
		next = f->next;
		f->listed = false;
		if (f->resv < 0 && f->op != EXP_READ && f->op != EXP_FLUSH) {
			if (write_start(f))
				moved = true;
			else
				retry_push(w, f);
			continue;
		}
		for (unsigned int i = 0; i < 3; i++) {
			if (f->sub[i].waiting)
				sub_submit(f, i);
		}
		moved = moved || !subs_waiting(f);
		step(f);
	}
	return moved || w->busy != before;
}

/* The most writes in flight at once: whether writes to one file overlap
 * (FUSE's parallel direct writes) shows in the stats. */
static void count_write_start(struct exp *e)
{
	unsigned int n = atomic_fetch_add_explicit(&e->writes_inflight, 1, memory_order_relaxed) + 1;
	unsigned int max = atomic_load_explicit(&e->writes_inflight_max, memory_order_relaxed);

	while (n > max && !atomic_compare_exchange_weak_explicit(&e->writes_inflight_max, &max, n,
								 memory_order_relaxed,
								 memory_order_relaxed))
		;
}

bool exp_park_held(struct exp_req *f, struct exp_post *post)
{
	struct exp_worker *w = f->w;
	atomic_size_t *total = &w->e->parked_bytes;
	int ret = -ENOSPC;

	if (park_room(total)) {
		if (post) {
			ret = park_add_post(&w->held, total, f->ns->nsid, post);
		} else {
			struct exp_post copy = {
				.cookie = f->cookie, .ns = f->ns, .op = (enum exp_op)f->op,
				.off = f->off, .size = f->size, .data = f->data,
				.start_ns = f->start_ns,
			};

			ret = park_add_copy(&w->held, total, f->ns->nsid, &copy);
		}
	}
	if (ret < 0) {
		exp_start_req(f, f->cookie, f->ns, (enum exp_op)f->op, f->off, f->size, f->data,
			      f->rbuf == f->buf ? NULL : f->rbuf, false);
		return false;
	}
	exp_req_put(w, f);
	return true;
}

void exp_submit(struct exp_req *r, void *cookie, struct exp_ns *ns, enum exp_op op, uint64_t off,
		size_t size, const void *data)
{
	if (!exp_start_req(r, cookie, ns, op, off, size, data, NULL, true))
		exp_park_held(r, NULL);
}

bool exp_start_req(struct exp_req *f, void *cookie, struct exp_ns *ns, enum exp_op op,
		   uint64_t off, size_t size, const void *data, uint8_t *rbuf, bool may_park)
{
	uint64_t first, last;

	f->busy = true;
	f->taken = true;
	f->cookie = cookie;
	f->ns = ns;
	f->op = (uint8_t)op;
	f->off = off;
	f->size = size;
	/* A write's payload lies in f->buf, which is registered: sent from there. */
	f->data = data;
	f->pending = 0;
	f->error = 0;
	f->phase = 0;
	f->resv = -1;
	f->rbuf = rbuf ? rbuf : f->buf;
	f->may_park = may_park;
	f->held = false;
	memset(f->sub, 0, sizeof(f->sub));
	if (op == EXP_WRITE)
		count_write_start(f->w->e);
	switch (op) {
	case EXP_READ:
		first = off >> ns->lba_shift;
		last = (off + size - 1) >> ns->lba_shift;
		sub_add(f, 0, SUB_READ, first, (uint32_t)(last - first + 1), f->rbuf);
		break;
	case EXP_FLUSH:
		sub_add(f, 0, SUB_FLUSH, 0, 0, NULL);
		break;
	default:
		if (!write_start(f)) {
			/* Waiting for another write's blocks: the queue holds
			 * it, if it must, when it goes. */
			f->may_park = false;
			retry_push(f->w, f);
		}
		break;
	}
	if (f->held) {
		if (op == EXP_WRITE)
			atomic_fetch_sub_explicit(&f->w->e->writes_inflight, 1,
						  memory_order_relaxed);
		return false;
	}
	if (op == EXP_READ || op == EXP_FLUSH)
		step(f);
	return true;
}
