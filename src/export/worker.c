/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The export's workers, as the front end drives them.  Each owns one NVMe
 * I/O queue and many requests in flight: the front end reads requests into
 * its registered buffers, the worker starts their I/O and completes them
 * when the target does, all on the thread serving it.  What a held
 * namespace or a full set of buffers cannot take yet is parked here.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

void exp_going(struct exp *e)
{
	atomic_store(&e->going, true);
	exp_stop_reconnecting(e);
	/* And what the head holds itself: I/O a path gave back (an ANA state)
	 * while no path can carry it, which exp_stop_reconnecting() does not
	 * reach since the controllers are live. */
	nvmefs_subsys_give_up(e->subsys);
	for (unsigned int i = 0; i < e->opts.workers; i++)
		eventfd_write(e->workers[i].wake_fd, 1);
}

void exp_ns_give_up(struct exp *e, uint32_t nsid)
{
	nvmefs_subsys_give_up_ns(e->subsys, nsid);
	/* Each worker unparks what it holds for @nsid, which then fails. */
	for (unsigned int i = 0; i < e->opts.workers; i++)
		eventfd_write(e->workers[i].wake_fd, 1);
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

int exp_lost(const struct exp *e)
{
	struct nvmefs_ctrl_status st;

	for (unsigned int i = 0; i < nr_ctrls(e); i++) {
		nvmefs_ctrl_status(ctrl_at(e, i), &st);
		if (st.state != NVMEFS_CTRL_DELETED)
			return 0;
	}
	return exp_failed(e);
}

unsigned int exp_nr_workers(const struct exp *e)
{
	return e->opts.workers;
}

struct exp_worker *exp_worker(struct exp *e, unsigned int i)
{
	return &e->workers[i];
}

size_t exp_req_size(const struct exp *e)
{
	return e->bufsize;
}

void *exp_req_buf(struct exp_req *r)
{
	return r->buf;
}

/* ---------------------------------------------------------------------- */
/* Requests coming in                                                       */
/* ---------------------------------------------------------------------- */

/* Whether the worker's queue would hold I/O to @nsid now (park_release's
 * question). */
static bool ns_held(void *arg, uint32_t nsid)
{
	struct exp_worker *w = arg;

	return nvmefs_mpq_ns_held(w->mpq, nsid);
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
 * A free buffer, or the spare once no worker has one, so that the front
 * end answers while its buffers are taken.  Not the spare while I/O read
 * there waits for a buffer that will come free (the rest waits with the
 * front end), nor once the export has parked all it may.
 */
struct exp_req *exp_worker_req(struct exp_worker *w)
{
	if (w->free)
		return w->free;
	if (!atomic_load(&w->e->workers_with_free) && park_room(&w->e->parked_bytes) &&
	    (!w->ready.head || buffers_stuck(w)))
		return &w->spare;
	return NULL;
}

/* Copies the I/O request of @n bytes just read at @buf out, onto @l. */
static void park(struct exp_worker *w, struct park_list *l, uint32_t nsid, const uint8_t *buf,
		 size_t n)
{
	if (park_add(l, &w->e->parked_bytes, nsid, buf, n) < 0)
		w->e->ops->refuse(w->e->arg, buf, ENOMEM);
}

/* @f, the free buffer at the head of its worker's list or the spare, is
 * the front end's now. */
static void admit(struct exp_req *f)
{
	struct exp_worker *w = f->w;

	if (f != &w->spare)
		exp_req_take(w);
	f->busy = false;
	f->taken = false;
	f->start_ns = hist_now_ns();
}

/* I/O that came into the spare waits for a buffer.  I/O the queue would
 * hold is parked by its submit (exp_park_held()), which asks the queue. */
bool exp_req_admit(struct exp_req *r, size_t len, uint32_t nsid)
{
	struct exp_worker *w = r->w;

	if (nsid && r == &w->spare) {
		park(w, &w->ready, nsid, r->buf, len);
		return false;
	}
	admit(r);
	return true;
}

/* Answered on the spot (lookup, getattr, ...): the buffer is free again.  A
 * request exp_submit() claimed is returned by exp_req_put(), even when it
 * finished before the front end was done with it (a submission that failed). */
void exp_req_handled(struct exp_req *r)
{
	if (r != &r->w->spare && !r->taken)
		exp_req_put(r->w, r);
}

struct exp_req *exp_worker_resumed(struct exp_worker *w, size_t *len)
{
	struct exp_req *f = w->resumed_head;

	if (!f)
		return NULL;
	w->resumed_head = f->next;
	if (!w->resumed_head)
		w->resumed_tail = NULL;
	f->next = NULL;
	*len = f->size;
	return f;
}

/* @p's bytes into the free buffer at the head of @w's list, admitted and
 * queued for exp_worker_resumed(). */
static void resume(struct exp_worker *w, const struct parked *p)
{
	struct exp_req *f = w->free;

	memcpy(f->buf, p->bytes, p->len);
	admit(f);
	/* The length until the front end takes it; exp_submit() sets the I/O's. */
	f->size = p->len;
	f->next = NULL;
	if (w->resumed_tail)
		w->resumed_tail->next = f;
	else
		w->resumed_head = f;
	w->resumed_tail = f;
}

/* Parked request @p, taken off its list, fails with @err. */
static void fail_parked(struct exp_worker *w, struct parked *p, int err)
{
	struct exp *e = w->e;

	if (p->post)
		e->ops->complete(p->post->cookie, p->post->op, err, 0);
	else
		e->ops->refuse(e->arg, p->bytes, err);
	park_free(p, &e->parked_bytes);
}

/* The export is going: a controller that failed since exp_going() gives
 * up too, and what is held for a namespace fails rather than waiting for
 * a path that may never come (ANA), which would hold the front end's stop
 * forever.  Whether any failed. */
static bool fail_held(struct exp_worker *w)
{
	bool any = false;

	exp_stop_reconnecting(w->e);
	for (struct parked *p; (p = park_pop(&w->held));) {
		fail_parked(w, p, EIO);
		any = true;
	}
	return any;
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
		/* Not parked again should its namespace have lost its
		 * path since: a copy's record goes here. */
		if (p->post)
			exp_post_start(w, p->post, false);
		else
			resume(w, p);
		park_free(p, &e->parked_bytes);
		any = true;
	}
	return any;
}

/* ---------------------------------------------------------------------- */
/* The worker's turn and its sleep                                          */
/* ---------------------------------------------------------------------- */

bool exp_worker_run(struct exp_worker *w)
{
	bool busy = false;

	/* Anything in flight on the queue, its own or I/O it carries for
	 * another worker's queue (fewer queues granted): a worker woken for it
	 * takes what came, whatever arm says. */
	if ((w->busy || worker_inflight(w)) && worker_poll(w, 0) > 0) {
		/* The next request's wait is a round trip of its own. */
		w->spin_since_ns = 0;
		w->done_ns = hist_now_ns();
		busy = true;
	}
	if (w->retry_head && exp_run_retries(w))
		busy = true;
	if (atomic_load_explicit(&w->e->going, memory_order_relaxed) && fail_held(w))
		busy = true;
	if ((w->ready.head || w->held.head) && unpark(w, false))
		busy = true;
	return busy;
}

/*
 * With one request in flight, what the worker waits for is that request's
 * round trip, and the wake from a sleep on it (the completion channel, then
 * the front end's epoll or io_uring, then the thread) costs about as much
 * again: ublk's 4k QD1 latency was 554 us where nvmefs perf, which polls at
 * depth 1, took 212 and a null ublk server 116.  So the worker polls for it
 * instead, yielding the CPU each time round (soft-RoCE's and the target's
 * work may be what it waits for), for up to SPIN_NS; past that, or with
 * more in flight, sleeping loses nothing and spares the CPU.
 *
 * With none in flight just after a completion, the same holds for the next
 * request: a program at depth 1 sends it as soon as it has the answer, and
 * often on the worker's own CPU, where the one it woke runs only once the
 * worker gives way.  Arming and sleeping first put both a sleep and the
 * arm's system calls between the two (a ublk QD1 request's timeline on
 * 6.12: fio ran about 110 us after its wake-up, the worker arming meanwhile).
 * So for up to SPIN_NS after its last completion the worker polls for new
 * work too, yielding each time round.
 */
#define SPIN_NS 1000000ull

static bool worker_spins(struct exp_worker *w)
{
	unsigned int inflight = worker_inflight(w);
	uint64_t now;

	if (!inflight) {
		w->spin_since_ns = 0;
		if (!w->done_ns || hist_now_ns() - w->done_ns >= SPIN_NS)
			return false;
		sched_yield();
		return true;
	}
	if (inflight != 1) {
		w->spin_since_ns = 0;
		return false;
	}
	now = hist_now_ns();
	if (!w->spin_since_ns)
		w->spin_since_ns = now;
	if (now - w->spin_since_ns >= SPIN_NS)
		return false;
	sched_yield();
	return true;
}

bool exp_worker_arm(struct exp_worker *w, int *wait_ms)
{
	int wait;

	if (worker_spins(w))
		return false;

	/* Arm even when idle: arming also takes the completion channel's pending
	 * event, which would otherwise keep epoll_wait() returning at once. */
	if (worker_arm(w) > 0) {
		/* Completions, or an outage: a worker with nothing in flight must
		 * still stop its queue for the controller to recover. */
		worker_poll(w, 0);
		return false;
	}
	/* What waits on the retry list is woken by a completion (room on the
	 * queue) or by wake_fd (a reservation released); the library says how
	 * long a command's retry delay has left.  The second's beat notices a
	 * request past its timeout. */
	wait = worker_wait_ms(w);
	if (w->held.head && (wait < 0 || wait > PARK_RECHECK_MS))
		wait = PARK_RECHECK_MS;
	*wait_ms = wait >= 0 && wait < 1000 ? wait : 1000;
	return true;
}

int exp_worker_watch(struct exp_worker *w, int epfd)
{
	struct epoll_event cq = { .events = EPOLLIN, .data.ptr = &w->ev_queue };
	struct epoll_event wake = { .events = EPOLLIN, .data.ptr = &w->ev_wake };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, worker_fd(w), &cq) ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, w->wake_fd, &wake))
		return exp_error(-errno, "setting up epoll for worker %u failed: %s", w->idx,
				 strerror(errno));
	return 0;
}

bool exp_worker_event(struct exp_worker *w, const struct epoll_event *ev)
{
	eventfd_t v;

	if (ev->data.ptr == &w->ev_wake) {
		eventfd_read(w->wake_fd, &v);
		return true;
	}
	return ev->data.ptr == &w->ev_queue;
}

/* ---------------------------------------------------------------------- */
/* The end                                                                  */
/* ---------------------------------------------------------------------- */

/* Left only when the queue failed with every buffer unanswered: what is
 * still parked or resumed fails. */
static void fail_left(struct exp_worker *w)
{
	struct exp *e = w->e;
	struct exp_req *f;
	size_t len;

	park_release(&w->held, &w->ready, ns_held, w, true);
	for (struct parked *p; (p = park_pop(&w->ready));)
		fail_parked(w, p, EIO);
	while ((f = exp_worker_resumed(w, &len))) {
		e->ops->refuse(e->arg, f->buf, EIO);
		exp_req_put(w, f);
	}
	if (!w->drained) {
		w->drained = true;
		atomic_fetch_sub(&e->workers_left, 1);
	}
}

/* Let what is in flight finish; a dead target fails it within the I/O
 * timeout, and I/O held by an outage fails as the export goes. */
bool exp_worker_drain(struct exp_worker *w)
{
	struct exp *e = w->e;
	int ret;

	/* Resumed requests hold buffers: busy counts them. */
	if (!(w->busy || w->ready.head || w->held.head || worker_inflight(w) ||
	      atomic_load(&e->workers_left))) {
		fail_left(w);
		return true;
	}
	unpark(w, true);
	if (!w->busy && !worker_inflight(w) && !w->drained) {
		w->drained = true;
		atomic_fetch_sub(&e->workers_left, 1);
	}
	/* Going away ends an outage's wait: what it holds fails now rather than
	 * at ctrl_loss_tmo, as 'nvme disconnect' does while reconnecting. */
	exp_stop_reconnecting(e);
	ret = worker_poll(w, w->resumed_head ? 0 : 100);
	exp_run_retries(w);
	/* A failed queue has ended all its I/O: what is left waits on nothing. */
	if (ret < 0) {
		if (w->busy)
			exp_log("worker %u: %u requests unanswered after the queue failed", w->idx,
				w->busy);
		fail_left(w);
		return true;
	}
	return false;
}

void exp_worker_abandon(struct exp_worker *w)
{
	if (!w->drained) {
		w->drained = true;
		atomic_fetch_sub(&w->e->workers_left, 1);
	}
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
		e->workers[i].wake_fd = -1;
	for (unsigned int i = 0; i < e->opts.workers; i++) {
		struct exp_worker *w = &e->workers[i];
		size_t len = per_req * e->opts.depth;

		w->e = e;
		w->idx = i;
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
	atomic_init(&e->workers_left, opts->workers);
	pthread_mutex_init(&e->resv_lock, NULL);
	pthread_mutex_init(&e->log_lock, NULL);
	e->bufsize = opts->max_io + EXP_BUF_SLACK;
	e->nr_resv = opts->workers * opts->depth;
	e->resv = calloc(e->nr_resv, sizeof(*e->resv));
	if (!e->resv) {
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

		if (w->wake_fd >= 0)
			close(w->wake_fd);
		nvmefs_subsys_mr_dereg(w->smr);
		free(w->region);
		free(w->reqs);
		free(w->spare.buf);
	}
	free(e->workers);
	pthread_mutex_destroy(&e->resv_lock);
	pthread_mutex_destroy(&e->log_lock);
	free(e->resv);
	free(e);
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
