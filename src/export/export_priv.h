/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to the export engine (and the harnesses that drive its parts):
 * requests.c turns a request into NVMe commands with write reservations and
 * retries; worker.c is the workers' calls, their buffers and parked
 * requests; post.c the requests a front end keeps in its own memory.
 */
#ifndef NVMEFS_EXPORT_PRIV_H
#define NVMEFS_EXPORT_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "parking.h"

enum sub_kind { SUB_READ, SUB_WRITE, SUB_ZEROES, SUB_PUNCH, SUB_FLUSH };

/* One command a request needs, kept so that a full queue only delays it. */
struct sub_io {
	uint8_t kind;		/* enum sub_kind */
	bool waiting;		/* refused with -EAGAIN: submit again after a poll */
	/* Past 2^32 only for zeroing and punching: a read or write is at most
	 * one request's max_io. */
	uint64_t nlb;
	uint64_t slba;
	uint8_t *buf;
};

/* A request in flight, and its buffers. */
struct exp_req {
	struct exp_worker *w;
	void *cookie;
	uint8_t *buf;		/* the request as received; a read's data after */
	uint8_t *rbuf;		/* where a read's blocks go: buf, or a posted read's own */
	uint8_t *edge;		/* two blocks for read-modify-write */
	struct exp_ns *ns;
	uint8_t op;		/* enum exp_op */
	uint8_t phase;		/* 0: edges being read, 1: writing */
	bool busy;		/* owned by an asynchronous operation */
	bool taken;		/* claimed by exp_submit(): exp_req_put() returns it, not exp_req_handled() */
	bool listed;		/* on the worker's retry list */
	bool may_park;		/* its first submit: refused if its namespace is held */
	bool held;		/* refused so: none of it went, and it is parked */
	uint64_t off;
	size_t size;
	const uint8_t *data;	/* a write's payload, inside buf */
	unsigned int pending;
	int error;		/* first errno */
	int resv;		/* write reservation, or -1 */
	uint64_t start_ns;
	struct sub_io sub[3];
	struct exp_req *next;
};

struct exp_worker {
	struct exp *e;
	unsigned int idx;
	/* Their addresses tag the worker's events in the front end's epoll
	 * (exp_worker_watch()): the queue's, and wake_fd's. */
	char ev_queue, ev_wake;
	/* Its queue of the subsystem head, over one path or several. */
	struct nvmefs_mpq *mpq;
	struct nvmefs_subsys_mr *smr;
	uint8_t *region;
	struct exp_req *reqs;
	struct exp_req *free;
	unsigned int busy;
	bool drained;		/* counted out of e->workers_left */
	/* Written when a write reservation this worker waits for is released
	 * (by any worker); in epfd. */
	int wake_fd;
	bool resv_waiting;	/* under e->resv_lock */
	struct exp_req *retry_head, *retry_tail;	/* deferred writes and waiting sub-I/Os */
	/* Read into when every buffer is taken, so that the front end answers
	 * while its I/O is held: not registered, never taken by I/O. */
	struct exp_req spare;
	/* I/O read into the spare, waiting for one of this worker's buffers. */
	struct park_list ready;
	/* Parked requests given a buffer again, for exp_worker_resumed(). */
	struct exp_req *resumed_head, *resumed_tail;
	/* I/O to namespaces the queue would hold (no usable path, an outage):
	 * it takes no buffer until it can go. */
	struct park_list held;
	uint64_t held_checked_ns;
	/* Since when the worker has polled for its one request in flight
	 * rather than sleep (0: it is not polling). */
	uint64_t spin_since_ns;
	/* When the worker last took completions (0: never). */
	uint64_t done_ns;
	struct exp_stats stats;
};

struct resv {
	bool used;
	uint32_t nsid;
	uint64_t first, last;
};

struct exp {
	/* The head over the paths, which all I/O goes through, and its first
	 * path's controller. */
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_subsys *subsys;
	struct exp_opts opts;
	const struct exp_ops *ops;
	void *arg;
	/* Workers still with I/O of their own at the end: until none is, every
	 * worker keeps polling its queue, which may carry another's I/O while
	 * the target grants fewer queues. */
	atomic_uint workers_left;
	/* A request's buffer: the request, or the blocks around an unaligned
	 * read of max_io bytes. */
	size_t bufsize;
	struct exp_worker *workers;
	/* Workers with a buffer free: while there is one, a worker without
	 * reads nothing into its spare, leaving the requests to that one. */
	atomic_uint workers_with_free;
	/* What the workers' parked requests take, bounded by PARK_MAX_BYTES. */
	atomic_size_t parked_bytes;
	pthread_mutex_t resv_lock;
	struct resv *resv;
	unsigned int nr_resv;
	/* The front end takes requests from an io_uring. */
	atomic_bool io_uring;
	/* exp_going(): held I/O fails rather than waiting for a path. */
	atomic_bool going;
	/* Writes in flight in all workers, and the most there were at once. */
	atomic_uint writes_inflight, writes_inflight_max;
	/* Statuses already logged: each is logged once. */
	pthread_mutex_t log_lock;
	int logged[32];
	unsigned int nr_logged;
};

/* requests.c */
/* Takes a free buffer of @w for a request, as reading one does. */
struct exp_req *exp_req_take(struct exp_worker *w);
/* Gives @f back to @w's free list. */
void exp_req_put(struct exp_worker *w, struct exp_req *f);
/* Writes and sub-I/Os that waited: whether any of them got on. */
bool exp_run_retries(struct exp_worker *w);

/* Starts the request in @f, which the worker took from its free list,
 * as exp_submit() does, its read's blocks going to @rbuf (NULL: f->buf).
 * With @may_park, false when its namespace is held: none of it went, and
 * the caller parks it (exp_park_held()). */
bool exp_start_req(struct exp_req *f, void *cookie, struct exp_ns *ns, enum exp_op op,
		   uint64_t off, size_t size, const void *data, uint8_t *rbuf, bool may_park);

/* @f, refused by its queue as held, waits parked and gives its buffer
 * back: @post where it was posted, else a copy of @f's request.  Past the
 * parking's bound the queue holds it in @f after all.  Whether it parked. */
bool exp_park_held(struct exp_req *f, struct exp_post *post);

/* post.c */
/* Starts the posted request @p in one of @w's free buffers, or with
 * @may_park parks it while its namespace is held (0; else 1). */
int exp_post_start(struct exp_worker *w, struct exp_post *p, bool may_park);

/* A worker's queue of the head. */
static inline int worker_poll(struct exp_worker *w, int timeout_ms)
{
	return nvmefs_mpq_poll(w->mpq, timeout_ms);
}

static inline int worker_arm(struct exp_worker *w)
{
	return nvmefs_mpq_arm(w->mpq);
}

static inline unsigned int worker_inflight(const struct exp_worker *w)
{
	return nvmefs_mpq_inflight(w->mpq);
}

static inline int worker_wait_ms(const struct exp_worker *w)
{
	return nvmefs_mpq_wait_ms(w->mpq);
}

static inline int worker_fd(const struct exp_worker *w)
{
	return nvmefs_mpq_fd(w->mpq);
}

#endif /* NVMEFS_EXPORT_PRIV_H */
