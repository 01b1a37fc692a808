/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The export's workers.  Each owns one NVMe I/O queue and many requests in
 * flight: it waits on the front end's source (shared, non-blocking) and on
 * its queue's descriptor, reads requests into its registered buffers, and
 * completes them when the target does, from the same thread.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "export_priv.h"
#include "../common/histogram.h"

/* The export's controllers: each path's. */
static unsigned int nr_ctrls(const struct exp *e)
{
	return nvmefs_subsys_path_count(e->subsys);
}

static struct nvmefs_ctrl *ctrl_at(const struct exp *e, unsigned int i)
{
	return nvmefs_subsys_path(e->subsys, i);
}

void exp_stop_reconnecting(struct exp *e)
{
	for (unsigned int i = 0; i < nr_ctrls(e); i++) {
		struct nvmefs_ctrl *ctrl = ctrl_at(e, i);

		if (nvmefs_ctrl_failed(ctrl))
			nvmefs_ctrl_stop_reconnect(ctrl);
	}
}

int exp_failed(const struct exp *e)
{
	int err = 0;

	for (unsigned int i = 0; i < nr_ctrls(e); i++) {
		err = nvmefs_ctrl_failed(ctrl_at(e, i));
		if (!err)
			return 0;
	}
	return err;
}

/* Hands the request of @n bytes in @f's buffer to the front end. */
static void dispatch(struct exp_worker *w, struct exp_req *f, size_t n)
{
	struct exp *e = w->e;
	bool spare = f == &w->spare;

	if (!spare)
		exp_req_take(w);
	f->busy = false;
	f->taken = false;
	f->start_ns = hist_now_ns();
	exp_cur_req = f;
	e->ops->dispatch(e->arg, f->buf, n);
	exp_cur_req = NULL;
	/* Answered on the spot (lookup, getattr, ...): the buffer is free again.  A
	 * request exp_submit() claimed is returned by exp_req_put(), even when it
	 * finished before dispatch returned (a submission that failed). */
	if (!spare && !f->taken)
		exp_req_put(w, f);
}

void exp_dispatch(struct exp_worker *w, size_t n)
{
	dispatch(w, w->free, n);
}

/* Whether the worker's queue would hold I/O to @nsid now (park_release's
 * question). */
static bool ns_held(void *arg, uint32_t nsid)
{
	struct exp_worker *w = arg;

	return nvmefs_mpq_ns_held(w->mpq, nsid);
}

/* Copies the I/O request of @n bytes just read at @buf out, onto @l. */
static void park(struct exp_worker *w, struct park_list *l, uint32_t nsid, const uint8_t *buf,
		 size_t n)
{
	if (park_add(l, &w->e->parked_bytes, nsid, buf, n) < 0)
		w->e->ops->refuse(w->e->arg, buf, ENOMEM);
}

/* Held requests whose namespace can go now join the ready ones (all of
 * them once the export goes: the queue then fails them); ready ones get the
 * buffers that came free, oldest first, unless their namespace lost its
 * paths meanwhile.  Returns whether any went. */
static bool unpark(struct exp_worker *w, bool force)
{
	struct exp *e = w->e;
	bool any = false;

	if (w->held.head) {
		uint64_t now = hist_now_ns();

		if (force || now - w->held_checked_ns >= PARK_RECHECK_MS * 1000000ull) {
			w->held_checked_ns = now;
			park_release(&w->held, &w->ready, ns_held, w, force);
		}
	}
	while (w->free && w->ready.head) {
		struct parked *p = park_pop(&w->ready);

		if (!force && ns_held(w, p->nsid)) {
			park_append(&w->held, p);
			continue;
		}
		if (p->post) {
			exp_post_start(w, p->post);
		} else {
			memcpy(w->free->buf, p->bytes, p->len);
			dispatch(w, w->free, p->len);
		}
		park_free(p, &e->parked_bytes);
		any = true;
	}
	return any;
}

/* Whether every buffer @w has taken holds I/O its queue holds (taken
 * before the namespace lost its paths, or the controller failed): none
 * comes free before a path does. */
static bool buffers_stuck(struct exp_worker *w)
{
	for (unsigned int k = 0; k < w->e->opts.depth; k++) {
		const struct exp_req *f = &w->reqs[k];

		if (f->busy && !ns_held(w, f->ns->nsid))
			return false;
	}
	return true;
}

/*
 * Whether @w reads the source: with a buffer free, or into its spare once
 * no worker has one, so that the front end answers while its buffers are
 * taken.  Not into the spare while I/O it read there waits for a buffer
 * that will come free (the rest waits in the kernel), nor once the export
 * has parked all it may.
 */
static bool reads_source(struct exp_worker *w)
{
	return w->free || (!atomic_load(&w->e->workers_with_free) &&
			   park_room(&w->e->parked_bytes) && (!w->ready.head || buffers_stuck(w)));
}

/* Reads one request into a free buffer, else into the spare, and dispatches
 * it.  I/O the queue would hold is parked, keeping the buffer free for I/O
 * that can go; so is I/O that came into the spare.  Returns whether one
 * came. */
static bool receive(struct exp_worker *w)
{
	struct exp *e = w->e;
	struct exp_req *f = w->free ? w->free : &w->spare;
	uint32_t nsid;
	ssize_t n;

	n = e->ops->read(e->arg, f->buf, e->bufsize);
	if (n <= 0) {
		if (n == -ENODEV)
			atomic_store(&e->source_ended, true);
		w->source_ready = false;
		atomic_store_explicit(&e->source_unread, false, memory_order_relaxed);
		return false;
	}
	w->source_ready = true;
	nsid = e->ops->io_nsid(e->arg, f->buf, (size_t)n);
	if (exp_parks(w, nsid))
		park(w, &w->held, nsid, f->buf, (size_t)n);
	else if (nsid && f == &w->spare)
		park(w, &w->ready, nsid, f->buf, (size_t)n);
	else
		dispatch(w, f, (size_t)n);
	return true;
}

/* Whether a read of the source may find a request: not after one found it
 * empty, until epoll says otherwise. */
static bool may_be_readable(const struct exp_worker *w)
{
	return w->source_ready ||
	       atomic_load_explicit(&w->e->source_unread, memory_order_relaxed);
}

/*
 * The source (/dev/fuse) is shared by every worker: watched with
 * EPOLLEXCLUSIVE, a request wakes one of them, not all (who would then
 * mostly read EAGAIN).
 * A worker with no buffer free stops watching while another has one, so
 * that requests go there.
 */
static void watch_source(struct exp_worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = WORKER_EV_SOURCE };
	bool on = !atomic_load(&w->e->source_ended) && reads_source(w);

	if (on != w->source_watched && epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
					       w->e->source_fd, on ? &ev : NULL) == 0)
		w->source_watched = on;
}

static void *worker_main(void *arg)
{
	struct exp_worker *w = arg;
	struct exp *e = w->e;

	while (!atomic_load(&e->serve_done)) {
		struct epoll_event ev[4];
		bool busy = false;
		int wait, n;

		/* Anything in flight on the queue, its own or I/O it carries for
		 * another worker's queue (fewer queues granted): a worker woken
		 * for it takes what came, whatever arm says. */
		if ((w->busy || worker_inflight(w)) && worker_poll(w, 0) > 0)
			busy = true;
		if (w->retry_head && exp_run_retries(w))
			busy = true;
		if ((w->ready.head || w->held.head) && unpark(w, false))
			busy = true;
		if (exp_inbox_run(w))
			busy = true;
		/* Take what has queued up. */
		while (!atomic_load(&e->source_ended) && may_be_readable(w) && reads_source(w) &&
		       receive(w))
			busy = true;
		if (w->source_ready && !atomic_load(&e->source_ended))
			atomic_store_explicit(&e->source_unread, true, memory_order_relaxed);
		watch_source(w);
		if (busy)
			continue;
		/* Nothing to do: sleep until a request, a completion or the end.  Arm
		 * even when idle: arming also takes the completion channel's pending
		 * event, which would otherwise keep epoll_wait() returning at once. */
		if (worker_arm(w) > 0) {
			/* Completions, or an outage: a worker with nothing in flight
			 * must still stop its queue for the controller to recover. */
			worker_poll(w, 0);
			continue;
		}
		/* What waits on the retry list is woken by a completion (room on
		 * the queue) or by wake_fd (a reservation released); the library
		 * says how long a command's retry delay has left.  The second's
		 * beat notices a request past its timeout. */
		wait = worker_wait_ms(w);
		if (w->held.head && (wait < 0 || wait > PARK_RECHECK_MS))
			wait = PARK_RECHECK_MS;
		n = epoll_wait(w->epfd, ev, 4, wait >= 0 && wait < 1000 ? wait : 1000);
		for (int i = 0; i < n; i++) {
			eventfd_t v;

			if (ev[i].data.u32 == WORKER_EV_WAKE)
				eventfd_read(w->wake_fd, &v);
			else if (ev[i].data.u32 == WORKER_EV_SOURCE)
				w->source_ready = true;
		}
	}
	/* Let what is in flight finish; a dead target fails it within the I/O
	 * timeout, and I/O held by an outage fails as the export goes. */
	exp_inbox_close(w);
	while (w->busy || w->ready.head || w->held.head || atomic_load(&w->inbox_len) ||
	       worker_inflight(w) || atomic_load(&e->workers_left)) {
		int ret;

		unpark(w, true);
		exp_inbox_run(w);
		if (!w->busy && !worker_inflight(w) && !w->drained) {
			w->drained = true;
			atomic_fetch_sub(&e->workers_left, 1);
		}

		/* Going away ends an outage's wait: what it holds fails now rather
		 * than at ctrl_loss_tmo, as 'nvme disconnect' does while reconnecting. */
		exp_stop_reconnecting(e);
		ret = worker_poll(w, 100);

		exp_run_retries(w);
		/* A failed queue has ended all its I/O: what is left waits on nothing. */
		if (ret < 0) {
			if (w->busy)
				exp_log("worker %u: %u requests unanswered after the queue failed", w->idx,
					w->busy);
			break;
		}
	}
	/* Left only when the queue failed with every buffer unanswered. */
	park_release(&w->held, &w->ready, ns_held, w, true);
	for (struct parked *p; (p = park_pop(&w->ready));) {
		if (p->post)
			e->ops->complete(p->post->cookie, p->post->op, EIO, 0);
		else
			e->ops->refuse(e->arg, p->bytes, EIO);
		park_free(p, &e->parked_bytes);
	}
	exp_inbox_fail(w, EIO);
	if (!w->drained)
		atomic_fetch_sub(&e->workers_left, 1);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* The engine's life                                                        */
/* ---------------------------------------------------------------------- */

/* The workers, each with its queue and its requests' buffers, registered once. */
static int setup_workers(struct exp *e)
{
	size_t per_req = exp_req_bytes(e->opts.max_io);
	int ret;

	e->workers = calloc(e->opts.workers, sizeof(*e->workers));
	if (!e->workers)
		return exp_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < e->opts.workers; i++)
		e->workers[i].epfd = e->workers[i].wake_fd = -1;
	for (unsigned int i = 0; i < e->opts.workers; i++) {
		struct exp_worker *w = &e->workers[i];
		size_t len = per_req * e->opts.depth;

		w->e = e;
		w->idx = i;
		w->source_ready = true;
		pthread_mutex_init(&w->inbox_lock, NULL);
		w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->wake_fd < 0)
			return exp_error(-errno, "creating worker %u's eventfd failed: %s", i,
					 strerror(errno));
		w->mpq = nvmefs_subsys_queue(e->subsys, i);
		w->reqs = calloc(e->opts.depth, sizeof(*w->reqs));
		w->spare.w = w;
		w->spare.resv = -1;
		w->spare.buf = malloc(e->bufsize);
		if (!w->reqs || !w->spare.buf || posix_memalign((void **)&w->region, 4096, len))
			return exp_error(-ENOMEM, "out of memory for %zu MiB of request buffers",
					 len >> 20);
		/* Registered once (on every path): requests arrive here and data
		 * moves from here. */
		ret = nvmefs_subsys_mr_reg(e->subsys, w->region, len, &w->smr);
		if (ret < 0)
			return exp_lib_error(ret);
		for (unsigned int k = 0; k < e->opts.depth; k++) {
			struct exp_req *f = &w->reqs[k];

			f->w = w;
			f->buf = w->region + k * per_req;
			f->edge = f->buf + e->bufsize;
			f->resv = -1;
			f->next = w->free;
			w->free = f;
		}
		atomic_fetch_add(&e->workers_with_free, 1);
	}
	return 0;
}

int exp_create(struct nvmefs_subsys *head, const struct exp_opts *opts, const struct exp_ops *ops,
	       void *arg, struct exp **out)
{
	struct exp *e = calloc(1, sizeof(*e));
	int ret;

	*out = NULL;
	if (!e)
		return exp_error(-ENOMEM, "out of memory");
	e->ctrl = nvmefs_subsys_path(head, 0);
	e->subsys = head;
	e->opts = *opts;
	e->ops = ops;
	e->arg = arg;
	e->source_fd = -1;
	pthread_mutex_init(&e->resv_lock, NULL);
	pthread_mutex_init(&e->log_lock, NULL);
	e->bufsize = opts->max_io + EXP_BUF_SLACK;
	e->nr_resv = opts->workers * opts->depth;
	e->resv = calloc(e->nr_resv, sizeof(*e->resv));
	e->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!e->resv || e->stop_fd < 0) {
		exp_destroy(e);
		return exp_error(-ENOMEM, "out of memory");
	}
	ret = setup_workers(e);
	if (ret < 0) {
		exp_destroy(e);
		return ret;
	}
	*out = e;
	return 0;
}

void exp_destroy(struct exp *e)
{
	if (!e)
		return;
	for (unsigned int i = 0; e->workers && i < e->opts.workers; i++) {
		struct exp_worker *w = &e->workers[i];

		if (w->epfd >= 0)
			close(w->epfd);
		if (w->wake_fd >= 0)
			close(w->wake_fd);
		nvmefs_subsys_mr_dereg(w->smr);
		if (w->e)
			pthread_mutex_destroy(&w->inbox_lock);
		free(w->region);
		free(w->reqs);
		free(w->spare.buf);
	}
	free(e->workers);
	if (e->stop_fd >= 0)
		close(e->stop_fd);
	pthread_mutex_destroy(&e->resv_lock);
	pthread_mutex_destroy(&e->log_lock);
	free(e->resv);
	free(e);
}

/* What every worker sleeps on besides the source: the end, its queue, and
 * released reservations. */
static int watch_worker_fds(struct exp *e)
{
	for (unsigned int i = 0; i < e->opts.workers; i++) {
		struct exp_worker *w = &e->workers[i];
		struct epoll_event stop = { .events = EPOLLIN, .data.u32 = WORKER_EV_STOP };
		struct epoll_event cq = { .events = EPOLLIN, .data.u32 = WORKER_EV_QUEUE };
		struct epoll_event wake = { .events = EPOLLIN, .data.u32 = WORKER_EV_WAKE };

		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, e->stop_fd, &stop) ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, worker_fd(w), &cq) ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wake_fd, &wake))
			return exp_error(-errno, "setting up epoll for worker %u failed: %s", i,
					 strerror(errno));
	}
	return 0;
}

/* The workers that never started take no posts: what was posted to them
 * is answered as the mount's end answers it, and so is what comes after. */
static int start_failed(struct exp *e, int ret)
{
	for (unsigned int i = e->started; i < e->opts.workers; i++) {
		exp_inbox_close(&e->workers[i]);
		exp_inbox_fail(&e->workers[i], ENOTCONN);
	}
	return ret;
}

int exp_start(struct exp *e, int source_fd)
{
	int ret;

	e->source_fd = source_fd;
	ret = watch_worker_fds(e);
	if (ret < 0)
		return start_failed(e, ret);
	atomic_store(&e->workers_left, e->opts.workers);
	for (e->started = 0; e->started < e->opts.workers; e->started++) {
		struct exp_worker *w = &e->workers[e->started];

		ret = pthread_create(&w->thread, NULL, worker_main, w);
		if (ret) {
			atomic_fetch_sub(&e->workers_left, e->opts.workers - e->started);
			return start_failed(e, exp_error(-ret, "starting worker %u failed: %s",
							 e->started, strerror(ret)));
		}
		/* For top -H and the tests that count what the workers cost. */
		pthread_setname_np(w->thread, "nvmefs-worker");
	}
	return 0;
}

void exp_stop(struct exp *e)
{
	atomic_store(&e->serve_done, true);
	eventfd_write(e->stop_fd, 1);
	for (unsigned int i = 0; i < e->started; i++)
		pthread_join(e->workers[i].thread, NULL);
	e->started = 0;
}

/* ---------------------------------------------------------------------- */
/* Flushing at the end                                                      */
/* ---------------------------------------------------------------------- */

struct flush_wait {
	bool done;
	int status;
};

static void flush_done(void *arg, int status)
{
	struct flush_wait *fw = arg;

	fw->done = true;
	fw->status = status;
}

/* Polls the first worker's queue for up to 100 ms.  The export is going
 * away: a controller that fails meanwhile is given up, and what it holds
 * fails, rather than waiting out ctrl_loss_tmo. */
static int flush_poll(struct exp *e, struct nvmefs_mpq *mpq)
{
	exp_stop_reconnecting(e);
	return nvmefs_mpq_poll(mpq, 100);
}

int exp_flush_sync(struct exp *e, uint32_t nsid)
{
	struct nvmefs_mpq *mpq = e->workers[0].mpq;
	struct flush_wait fw = { 0 };
	int ret;

	/* No queue: nothing went through one. */
	if (!mpq)
		return 0;
	while ((ret = nvmefs_mpq_flush(mpq, nsid, flush_done, &fw)) == -EAGAIN)
		if ((ret = flush_poll(e, mpq)) < 0)
			return ret;
	while (ret >= 0 && !fw.done)
		ret = flush_poll(e, mpq);
	/* A poll that failed has run every callback first. */
	return fw.done ? fw.status : ret;
}
