/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subsystem head's I/O: one subsystem through one or more controllers,
 * its paths, as the Linux host's native multipath
 * (drivers/nvme/host/multipath.c) does it.  Every caller's I/O comes here.
 *
 * A head's queue does one of two things, chosen when the head is made
 * (struct mpq_ops), as Linux gives a disk nvme_ns_head_submit_bio() or a
 * plain namespace's submit.  A head that is not multipath
 * (nvmefs_subsys_create_single()) has one path and passes each call
 * straight to that path's queue (io.c), which holds I/O through an outage
 * and fails it past fast_io_fail_tmo or ctrl_loss_tmo itself, as a Linux
 * controller without a multipath head keeps its requests in its quiesced
 * queues: no record, no second descriptor, nothing per I/O but the call
 * through the table.  A second path makes it multipath, before any I/O.
 *
 * A multipath head's queue is one thread's: it drives I/O queue idx of every path
 * and keeps a record per caller's I/O, so that an I/O a path gives back
 * can be sent again along another.  A path gives I/O back (-ENOLINK, from
 * io.c in failover mode) when its controller fails, only once its queue is
 * stopped and the target can no longer reach the buffer, and when the
 * controller answers with a path error; ANA statuses also update the
 * path's state at once.  What no path can take now is held, in order,
 * while some path may come back (not past fast_io_fail_tmo or
 * ctrl_loss_tmo), and fails once none can, as Linux's requeue list does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <nvme/types.h>

#include "mpath_priv.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../io/flush_order.h"
#include "../io/io_priv.h"
#include "../io/ioq.h"
#include "../io/namespaces.h"
#include "../types/ctrl_types.h"

/* Sent, held until a path is usable, or failed (a -errno). */
#define MP_HELD 1

/* No path takes an I/O now (mp_gate()): one may come back, or none can. */
enum { MP_GATE_HOLD = -1, MP_GATE_NO_PATH = -2 };

static const char *const policy_names[] = {
	[NVMEFS_IOPOLICY_NUMA] = "numa",
	[NVMEFS_IOPOLICY_ROUND_ROBIN] = "round-robin",
	[NVMEFS_IOPOLICY_QUEUE_DEPTH] = "queue-depth",
};

const char *nvmefs_iopolicy_name(enum nvmefs_iopolicy policy)
{
	return (unsigned int)policy < sizeof(policy_names) / sizeof(policy_names[0])
		? policy_names[policy] : "unknown";
}

int nvmefs_iopolicy_parse(const char *name, enum nvmefs_iopolicy *policy)
{
	for (unsigned int i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++) {
		if (!strcmp(name, policy_names[i])) {
			*policy = (enum nvmefs_iopolicy)i;
			return 0;
		}
	}
	return nvmefs_error(-EINVAL, "'%s' is not an I/O policy: give numa, round-robin or "
			    "queue-depth", name);
}

/* ---------------------------------------------------------------------- */
/* Choosing a path                                                          */
/* ---------------------------------------------------------------------- */

/* How path @ctrl reaches @nsid now: its ANA state, or 0 when it cannot
 * take I/O (not live, the namespace not there or another one). */
static uint8_t path_state(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns;

	if (atomic_load_explicit(&((struct nvmefs_ctrl *)ctrl)->failed, memory_order_relaxed))
		return 0;
	ns = nvmefs_io_find_ns(ctrl, nsid);
	if (!ns || atomic_load_explicit(&ns->gone, memory_order_relaxed))
		return 0;
	return atomic_load_explicit(&((struct nvmefs_ns_cache *)ns)->ana_state, memory_order_relaxed);
}

/* Whether path @ctrl may still carry @nsid's I/O later: it is not past its
 * timeouts, and, while live, has the namespace. */
static bool path_may_return(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns;

	if (atomic_load(&((struct nvmefs_ctrl *)ctrl)->io_failing))
		return false;
	if (atomic_load(&((struct nvmefs_ctrl *)ctrl)->failed))
		return true;
	ns = nvmefs_io_find_ns(ctrl, nsid);
	return ns && !atomic_load(&ns->gone);
}

/* Whether @nsid's user gave up waiting for a path (nvmefs_subsys_give_up()
 * or nvmefs_subsys_give_up_ns()). */
static bool ns_given_up(const struct nvmefs_subsys *s, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(s->paths[0], nsid);

	return atomic_load(&((struct nvmefs_subsys *)s)->given_up) ||
	       (ns && atomic_load(&((struct nvmefs_ns_cache *)ns)->given_up));
}

/* Whether some path may carry @nsid's I/O later (mp_gate()'s question
 * once none can now). */
static bool ns_may_come_back(const struct nvmefs_subsys *s, uint32_t nsid)
{
	if (ns_given_up(s, nsid))
		return false;
	for (unsigned int p = 0; p < s->nr_paths; p++)
		if (path_may_return(s->paths[p], nsid))
			return true;
	return false;
}

/* The path for @nsid's next I/O, not one in @skip: optimized ones first,
 * else non-optimized, by the policy; -1 if none can take it now.  Only a
 * look: the sender moves round-robin on. */
static int choose(const struct nvmefs_mpq *mpq, uint32_t nsid, unsigned int skip)
{
	const struct nvmefs_subsys *s = mpq->subsys;
	unsigned int n = s->nr_paths, start = 0;
	int best = -1, fallback = -1;

	if (s->policy == NVMEFS_IOPOLICY_ROUND_ROBIN)
		start = mpq->rr_next % n;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int p = (start + i) % n;
		uint8_t state;
		int *pick;

		if (skip & (1u << p))
			continue;
		state = path_state(s->paths[p], nsid);
		if (state == NVME_ANA_STATE_OPTIMIZED)
			pick = &best;
		else if (state == NVME_ANA_STATE_NONOPTIMIZED)
			pick = &fallback;
		else
			continue;
		if (s->policy == NVMEFS_IOPOLICY_QUEUE_DEPTH) {
			if (*pick < 0 || mpq->ioqs[p]->nr_ios_inflight < mpq->ioqs[*pick]->nr_ios_inflight)
				*pick = (int)p;
		} else if (*pick < 0) {
			*pick = (int)p;
			if (pick == &best)
				break;
		}
	}
	return best < 0 ? fallback : best;
}

/* The multipath head's one rule for @nsid's next I/O, which sending and
 * nvmefs_mpq_ns_held() both follow: the path it goes along (>= 0, not
 * one in @skip); else held while some path may come back (MP_GATE_HOLD),
 * failed once none can (MP_GATE_NO_PATH). */
static int mp_gate(const struct nvmefs_mpq *mpq, uint32_t nsid, unsigned int skip)
{
	int p = choose(mpq, nsid, skip);

	if (p >= 0)
		return p;
	return ns_may_come_back(mpq->subsys, nsid) ? MP_GATE_HOLD : MP_GATE_NO_PATH;
}

/* Whether the path @nsid's next I/O would take can take it now: its
 * queue has a record free and nothing waiting for slots before it. */
static bool path_has_room(const struct nvmefs_mpq *mpq, uint32_t nsid)
{
	int p = choose(mpq, nsid, 0);

	return p >= 0 && nvmefs_ioq_can_take(mpq->ioqs[p]);
}

/* ---------------------------------------------------------------------- */
/* Sending and completing                                                   */
/* ---------------------------------------------------------------------- */

static void mp_done(void *arg, int status);

/* Why no path can ever take @nsid's I/O again. */
static int no_path(struct nvmefs_mpq *mpq, uint32_t nsid)
{
	const struct nvmefs_subsys *s = mpq->subsys;
	const struct nvmefs_ctrl *first = s->paths[0];
	int err = atomic_load(&((struct nvmefs_ctrl *)first)->failed);

	if (ns_given_up(s, nsid))
		return nvmefs_error(-EIO, "no path of %s can carry namespace %u's I/O now, and its "
				    "user gave up waiting for one", first->subnqn, nsid);
	return nvmefs_error(err ? err : -ENODEV, "no path of %s can carry namespace %u's I/O any "
			    "more: every one of the %u failed for good (past fast_io_fail_tmo or "
			    "ctrl_loss_tmo) or lost the namespace; the first failed with: %s",
			    first->subnqn, nsid, s->nr_paths, err ? first->fail_msg : "no error");
}

/* Sends @io along the best path that takes it.  0, MP_HELD (no path can
 * now, one may later), -EAGAIN (the chosen path's queue is full) or -errno. */
static int mp_send(struct nvmefs_mpq *mpq, struct mp_io *io)
{
	unsigned int skip = 0;
	int p, ret;

	while ((p = mp_gate(mpq, io->nsid, skip)) >= 0) {
		if (mpq->subsys->policy == NVMEFS_IOPOLICY_ROUND_ROBIN)
			mpq->rr_next = (unsigned int)p + 1;
		ret = nvmefs_io_submit(mpq->ioqs[p], (enum io_op)io->op, io->nsid, io->slba, io->nlb,
				       io->buf, 0, mp_done, io);
		if (ret == 0) {
			io->path = (uint8_t)p;
			return 0;
		}
		/* Down, or lost the namespace, since it was looked at. */
		if (ret != -ENOLINK && ret != -ENODEV && ret != -ENOENT)
			return ret;
		skip |= 1u << p;
	}
	return p == MP_GATE_HOLD ? MP_HELD : no_path(mpq, io->nsid);
}

static void hold(struct nvmefs_mpq *mpq, struct mp_io *io)
{
	io->next = NULL;
	if (mpq->held_tail)
		mpq->held_tail->next = io;
	else
		mpq->held_head = io;
	mpq->held_tail = io;
}

static bool mp_writes(const struct mp_io *io)
{
	return io->op == IO_WRITE || io->op == IO_WRITE_ZEROES || io->op == IO_PUNCH ||
	       io->op == IO_DEALLOCATE;
}

static struct mp_io *mp_io_of_order(struct flush_order_entry *e)
{
	return (struct mp_io *)((char *)e - offsetof(struct mp_io, order));
}

static void finish(struct nvmefs_mpq *mpq, struct mp_io *io, int status)
{
	nvmefs_io_cb cb = io->cb;
	void *arg = io->arg;
	struct flush_order_entry *ready;

	if (mp_writes(io)) {
		flush_order_write_done(&mpq->order, &io->order);
		/* Flushes after it go at the next look at the paths, once
		 * nothing before them is left. */
		while ((ready = flush_order_ready(&mpq->order)))
			hold(mpq, mp_io_of_order(ready));
	}
	io->next = mpq->free_ios;
	mpq->free_ios = io;
	mpq->inflight--;
	mpq->completed++;
	cb(arg, status);
}

static void count(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* From a path's poll: the I/O is back.  One the path gave back waits on the
 * held list for the next look at the paths, not sent from inside the
 * path's poll. */
static void mp_done(void *arg, int status)
{
	struct mp_io *io = arg;
	struct nvmefs_mpq *mpq = io->mpq;
	struct path_counts *c = &mpq->counts[io->path];

	if (status == -ENOLINK || status == -ENODEV) {
		count(&c->failovers);
		hold(mpq, io);
		return;
	}
	count(&c->ios);
	if (status)
		count(&c->errors);
	finish(mpq, io, status);
}

/* Whether an I/O of @nsid is held before @upto (NULL: at all).  The held
 * list is short and only walked while a namespace has no usable path. */
static bool held_before(const struct nvmefs_mpq *mpq, uint32_t nsid, const struct mp_io *upto)
{
	for (const struct mp_io *io = mpq->held_head; io != upto; io = io->next)
		if (io->nsid == nsid)
			return true;
	return false;
}

/* Sends what is held, oldest first within each namespace, while paths take
 * it: as Linux keeps a requeue list per namespace, a namespace without a
 * usable path holds up only its own I/O. */
static void pump_held(struct nvmefs_mpq *mpq)
{
	struct mp_io *io, *prev = NULL, *next;

	for (io = mpq->held_head; io; io = next) {
		int ret;

		next = io->next;
		ret = held_before(mpq, io->nsid, io) ? MP_HELD : mp_send(mpq, io);
		if (ret == -EAGAIN)
			return;
		if (ret == MP_HELD) {
			prev = io;
			continue;
		}
		if (prev)
			prev->next = next;
		else
			mpq->held_head = next;
		if (mpq->held_tail == io)
			mpq->held_tail = prev;
		if (ret < 0)
			finish(mpq, io, ret);
	}
}

static int mp_submit(struct nvmefs_mpq *mpq, enum io_op op, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, void *buf, unsigned int flags, nvmefs_io_cb cb, void *arg)
{
	struct mp_io *io = mpq->free_ios;
	bool refused;
	int ret;

	if (!io)
		return -EAGAIN;
	io->cb = cb;
	io->arg = arg;
	io->op = (uint16_t)op;
	io->nsid = nsid;
	io->slba = slba;
	io->nlb = nlb;
	io->buf = buf;
	if (op == IO_FLUSH && flush_order_flush_waits(&mpq->order, &io->order)) {
		/* Sent once every write before it, on whichever path, has completed. */
		mpq->free_ios = io->next;
		mpq->inflight++;
		return 0;
	}
	if (mp_writes(io))
		flush_order_write_start(&mpq->order, &io->order);
	/* Nothing overtakes what is held for its namespace.  What waits there
	 * only for the next poll (its namespace has a path now) is sent then,
	 * not handed back to a caller that would rather not have it held. */
	if (mpq->held_head && held_before(mpq, nsid, NULL)) {
		ret = MP_HELD;
		refused = (flags & NVMEFS_MPQ_NO_HOLD) && mp_gate(mpq, nsid, 0) == MP_GATE_HOLD;
	} else {
		ret = mp_send(mpq, io);
		refused = ret == MP_HELD && (flags & NVMEFS_MPQ_NO_HOLD);
	}
	if (ret < 0 || refused) {
		if (mp_writes(io))
			flush_order_write_done(&mpq->order, &io->order);
		return refused ? NVMEFS_MPQ_HELD : ret;
	}
	mpq->free_ios = io->next;
	mpq->inflight++;
	if (ret == MP_HELD)
		hold(mpq, io);
	return 0;
}

static int mp_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid)
{
	/* What is held for a namespace with a usable path goes at the next
	 * poll: new I/O then waits only behind it. */
	return mp_gate(mpq, nsid, 0) == MP_GATE_HOLD;
}

/* Whether any path may carry I/O now or later. */
static bool any_path_left(const struct nvmefs_mpq *mpq)
{
	for (unsigned int i = 0; i < mpq->subsys->nr_paths; i++)
		if (!atomic_load(&mpq->subsys->paths[i]->io_failing))
			return true;
	return false;
}

static unsigned int mp_inflight(const struct nvmefs_mpq *mpq)
{
	unsigned int n = mpq->inflight;

	for (unsigned int p = 0; p < mpq->subsys->nr_paths; p++)
		n += mpq->ioqs[p]->nr_carried;
	return n;
}

static int mp_arm(struct nvmefs_mpq *mpq)
{
	int n = 0;

	for (unsigned int p = 0; p < mpq->subsys->nr_paths; p++) {
		int ret = nvmefs_ioq_arm(mpq->ioqs[p]);

		if (ret > 0)
			n += ret;
	}
	/* Held I/O a path can take now, or that must fail now: poll does it.
	 * Otherwise a path's state change, or a completion that frees room on
	 * the path it goes to, wakes that queue's descriptor. */
	for (const struct mp_io *io = mpq->held_head; io; io = io->next) {
		if (!any_path_left(mpq) || ns_given_up(mpq->subsys, io->nsid) ||
		    path_has_room(mpq, io->nsid)) {
			n++;
			break;
		}
	}
	return n;
}

static int mp_poll(struct nvmefs_mpq *mpq, int timeout_ms)
{
	unsigned int before = mpq->completed, n = mpq->subsys->nr_paths;
	int64_t start = timeout_ms > 0 ? nvmefs_now_ms() : 0;
	struct epoll_event ev;

	for (;;) {
		int wait = 100;

		/* A path that failed for good fails its poll; the others go on. */
		for (unsigned int p = 0; p < n; p++)
			nvmefs_ioq_poll(mpq->ioqs[p], 0);
		pump_held(mpq);
		if (mpq->completed != before || timeout_ms == 0 || !mp_inflight(mpq))
			break;
		if (timeout_ms > 0) {
			int64_t left = start + timeout_ms - nvmefs_now_ms();

			if (left <= 0)
				break;
			wait = left < wait ? (int)left : wait;
		}
		if (mp_arm(mpq) == 0)
			epoll_wait(mpq->epfd, &ev, 1, wait);
	}
	if (!any_path_left(mpq))
		return nvmefs_error(atomic_load(&mpq->subsys->paths[0]->failed) ?: -EIO,
				    "every path of %s failed for good: %s",
				    mpq->subsys->paths[0]->subnqn, mpq->subsys->paths[0]->fail_msg);
	return (int)(mpq->completed - before);
}

static int mp_fd(const struct nvmefs_mpq *mpq)
{
	return mpq->epfd;
}

static int mp_wait_ms(const struct nvmefs_mpq *mpq)
{
	int wait = -1;

	for (unsigned int p = 0; p < mpq->subsys->nr_paths; p++) {
		int w = nvmefs_ioq_wait_ms(mpq->ioqs[p]);

		if (w >= 0 && (wait < 0 || w < wait))
			wait = w;
	}
	return wait;
}

const struct mpq_ops nvmefs_mpq_multipath_ops = {
	.submit = mp_submit,
	.ns_held = mp_ns_held,
	.poll = mp_poll,
	.fd = mp_fd,
	.arm = mp_arm,
	.wait_ms = mp_wait_ms,
	.inflight = mp_inflight,
};

/* ---------------------------------------------------------------------- */
/* A head of one path: the path's queue itself                             */
/* ---------------------------------------------------------------------- */

/* Held or not is io.c's io_gate(), which the path's submit follows too. */
static int single_submit(struct nvmefs_mpq *mpq, enum io_op op, uint32_t nsid, uint64_t slba,
			 uint64_t nlb, void *buf, unsigned int flags, nvmefs_io_cb cb, void *arg)
{
	return nvmefs_io_submit(mpq->ioqs[0], op, nsid, slba, nlb, buf, flags, cb, arg);
}

static int single_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid)
{
	return nvmefs_ioq_ns_held(mpq->ioqs[0], nsid);
}

static int single_poll(struct nvmefs_mpq *mpq, int timeout_ms)
{
	return nvmefs_ioq_poll(mpq->ioqs[0], timeout_ms);
}

/* The path's descriptor itself: no nested epoll to wake through. */
static int single_fd(const struct nvmefs_mpq *mpq)
{
	return nvmefs_ioq_fd(mpq->ioqs[0]);
}

static int single_arm(struct nvmefs_mpq *mpq)
{
	return nvmefs_ioq_arm(mpq->ioqs[0]);
}

static int single_wait_ms(const struct nvmefs_mpq *mpq)
{
	return nvmefs_ioq_wait_ms(mpq->ioqs[0]);
}

static unsigned int single_inflight(const struct nvmefs_mpq *mpq)
{
	return nvmefs_ioq_inflight(mpq->ioqs[0]);
}

const struct mpq_ops nvmefs_mpq_single_ops = {
	.submit = single_submit,
	.ns_held = single_ns_held,
	.poll = single_poll,
	.fd = single_fd,
	.arm = single_arm,
	.wait_ms = single_wait_ms,
	.inflight = single_inflight,
};

/* ---------------------------------------------------------------------- */
/* The queue's calls, through the set chosen for its head                   */
/* ---------------------------------------------------------------------- */

int nvmefs_mpq_read(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba, uint32_t nlb,
		    void *buf, nvmefs_io_cb cb, void *arg)
{
	return mpq->ops->submit(mpq, IO_READ, nsid, slba, nlb, buf, 0, cb, arg);
}

int nvmefs_mpq_write(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba, uint32_t nlb,
		     const void *buf, nvmefs_io_cb cb, void *arg)
{
	return mpq->ops->submit(mpq, IO_WRITE, nsid, slba, nlb, (void *)buf, 0, cb, arg);
}

int nvmefs_mpq_flush(struct nvmefs_mpq *mpq, uint32_t nsid, nvmefs_io_cb cb, void *arg)
{
	return mpq->ops->submit(mpq, IO_FLUSH, nsid, 0, 0, NULL, 0, cb, arg);
}

int nvmefs_mpq_write_zeroes(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			    nvmefs_io_cb cb, void *arg)
{
	return mpq->ops->submit(mpq, IO_WRITE_ZEROES, nsid, slba, nlb, NULL, 0, cb, arg);
}

int nvmefs_mpq_punch(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba, uint64_t nlb,
		     nvmefs_io_cb cb, void *arg)
{
	return mpq->ops->submit(mpq, IO_PUNCH, nsid, slba, nlb, NULL, 0, cb, arg);
}

int nvmefs_mpq_deallocate(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			  nvmefs_io_cb cb, void *arg)
{
	return mpq->ops->submit(mpq, IO_DEALLOCATE, nsid, slba, nlb, NULL, 0, cb, arg);
}

int nvmefs_mpq_submit(struct nvmefs_mpq *mpq, enum nvmefs_io_kind kind, uint32_t nsid,
		      uint64_t slba, uint64_t nlb, void *buf, unsigned int flags,
		      nvmefs_io_cb cb, void *arg)
{
	static const enum io_op ops[] = {
		[NVMEFS_IO_READ] = IO_READ,
		[NVMEFS_IO_WRITE] = IO_WRITE,
		[NVMEFS_IO_FLUSH] = IO_FLUSH,
		[NVMEFS_IO_WRITE_ZEROES] = IO_WRITE_ZEROES,
		[NVMEFS_IO_PUNCH] = IO_PUNCH,
		[NVMEFS_IO_DEALLOCATE] = IO_DEALLOCATE,
	};

	if ((unsigned int)kind >= sizeof(ops) / sizeof(ops[0]))
		return nvmefs_error(-EINVAL, "no I/O of kind %d", (int)kind);
	if ((kind == NVMEFS_IO_READ || kind == NVMEFS_IO_WRITE) && nlb > UINT32_MAX)
		return nvmefs_error(-EINVAL, "a read or write of %" PRIu64 " blocks: at most %u",
				    nlb, UINT32_MAX);
	if (kind == NVMEFS_IO_FLUSH)
		slba = nlb = 0;
	if (kind != NVMEFS_IO_READ && kind != NVMEFS_IO_WRITE)
		buf = NULL;
	return mpq->ops->submit(mpq, ops[kind], nsid, slba, nlb, buf, flags, cb, arg);
}

int nvmefs_mpq_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid)
{
	return mpq->ops->ns_held(mpq, nsid);
}

int nvmefs_mpq_poll(struct nvmefs_mpq *mpq, int timeout_ms)
{
	return mpq->ops->poll(mpq, timeout_ms);
}

int nvmefs_mpq_fd(const struct nvmefs_mpq *mpq)
{
	return mpq->ops->fd(mpq);
}

int nvmefs_mpq_arm(struct nvmefs_mpq *mpq)
{
	return mpq->ops->arm(mpq);
}

int nvmefs_mpq_wait_ms(const struct nvmefs_mpq *mpq)
{
	return mpq->ops->wait_ms(mpq);
}

unsigned int nvmefs_mpq_inflight(const struct nvmefs_mpq *mpq)
{
	return mpq->ops->inflight(mpq);
}

void *nvmefs_mpq_buf_get(struct nvmefs_mpq *mpq)
{
	return nvmefs_ioq_buf_get(mpq->ioqs[0]);
}

void nvmefs_mpq_buf_put(struct nvmefs_mpq *mpq, void *buf)
{
	nvmefs_ioq_buf_put(mpq->ioqs[0], buf);
}
