/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An I/O queue's owner polling it: the mailbox of queues that share a
 * connection, the controller's outage, request timeouts and connection
 * events, and the descriptor a caller sleeps on.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/eventfd.h>

#include "io_cmd.h"
#include "io_forward.h"
#include "ioq.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/queue.h"

/* Takes this queue's mail: others' I/O onto the pending list, its own
 * I/O back to the callers.  Only the queue's owner calls it. */
static void nvmefs_io_take_mail(struct nvmefs_ioq *ioq)
{
	struct nvmefs_io *in, *back, *next;
	eventfd_t v;

	pthread_mutex_lock(&ioq->mail_lock);
	in = ioq->inbox_head;
	back = ioq->returned_head;
	ioq->inbox_head = ioq->inbox_tail = NULL;
	ioq->returned_head = ioq->returned_tail = NULL;
	atomic_store(&ioq->mail, 0);
	eventfd_read(ioq->wake_fd, &v);
	pthread_mutex_unlock(&ioq->mail_lock);
	for (; in; in = next) {
		next = in->next;
		ioq->nr_carried++;
		nvmefs_io_pending_push(ioq, in);
	}
	for (; back; back = next) {
		next = back->next;
		nvmefs_io_complete(ioq, back);
	}
}

/* Waits up to @ms for the controller's next state change. */
static void wait_wake(struct nvmefs_ioq *ioq, int ms)
{
	struct pollfd pfd = { .fd = ioq->wake_fd, .events = POLLIN };
	eventfd_t v;

	if (poll(&pfd, 1, ms) > 0)
		eventfd_read(ioq->wake_fd, &v);
}

/*
 * The controller is not live (or this queue failed first).  Stop the queue
 * once per failure, its requests coming back to be sent again; while I/O
 * fails (fast_io_fail_tmo, deleted), end what is held.  Returns the I/Os
 * completed.
 */
static int ioq_outage(struct nvmefs_ioq *ioq, int failed, int timeout_ms)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	unsigned int before = ioq->completed, gen;
	struct nvmefs_io *io;

	if (!failed) {
		/* This queue saw the failure first: the controller recovers. */
		nvmefs_ctrl_fail(ctrl, ioq->q.failed, nvmefs_errmsg());
		failed = atomic_load(&ctrl->failed);
		if (!failed)
			return 0;
	}
	gen = atomic_load(&ctrl->gen);
	if (atomic_load_explicit(&ioq->stopped_gen, memory_order_relaxed) != gen) {
		/* A queue without a connection of its own has nothing to stop. */
		if (ioq->q.tp)
			nvmefs_queue_stop(&ioq->q, failed);
		atomic_store(&ioq->stopped_gen, gen);
		nvmefs_ctrl_queue_stopped(ctrl);
	}
	/* The queue is stopped: the target can no longer reach the buffers,
	 * and a path of a multipath set hands its I/O to another path. */
	if (ctrl->failover || atomic_load(&ctrl->io_failing)) {
		/* Ending held writes releases the flushes after them: they end too. */
		while (ioq->pending_head) {
			for (io = ioq->pending_head; io; io = io->next) {
				if (!io->status)
					io->status = ctrl->failover ? -ENOLINK : failed;
				io->nlb_left = 0;
				io->started = true;
			}
			nvmefs_io_pump_pending(ioq);
		}
	} else if (ioq->pending_head) {
		nvmefs_io_fail_given_up(ioq);
	}
	if (timeout_ms && !atomic_load(&ctrl->io_failing) && ioq->completed == before)
		wait_wake(ioq, timeout_ms < 0 || timeout_ms > 100 ? 100 : timeout_ms);
	return (int)(ioq->completed - before);
}

/* A request past its deadline fails the whole controller, as Linux resets it:
 * a target that lost one command cannot be trusted with the others.  The
 * transport's connection events are looked at on the same beat, so that a
 * queue the target closed is noticed by a poller that never sleeps. */
static void housekeeping(struct nvmefs_ioq *ioq, int64_t now)
{
	const struct nvmefs_transport_ops *ops = ioq->ctrl->ops;
	struct nvmefs_queue *q = &ioq->q;
	char msg[256];
	uint16_t i;
	int ret;

	if (now < ioq->next_timeout_check)
		return;
	ioq->next_timeout_check = now + 100;
	ret = ops->queue_check ? ops->queue_check(q) : 0;
	if (ret < 0) {
		nvmefs_ctrl_fail(ioq->ctrl, ret, nvmefs_errmsg());
		return;
	}
	if (!q->timeout_ms || !q->nr_inflight)
		return;
	for (i = 0; i < q->nr_reqs; i++) {
		if (q->reqs[i].inflight && q->reqs[i].deadline_ms && now > q->reqs[i].deadline_ms) {
			snprintf(msg, sizeof(msg), "command %#x (opcode %#x) on I/O queue %u got no answer "
				 "within %u ms: the target stopped responding", q->reqs[i].cid,
				 q->reqs[i].cmd->sqe.opcode, q->qid, q->timeout_ms);
			nvmefs_ctrl_fail(ioq->ctrl, -ETIMEDOUT, msg);
			return;
		}
	}
}

int nvmefs_ioq_poll(struct nvmefs_ioq *ioq, int timeout_ms)
{
	const struct nvmefs_transport_ops *ops = ioq->ctrl->ops;
	unsigned int before = ioq->completed;
	int64_t start = timeout_ms > 0 ? nvmefs_now_ms() : 0;
	int ret, failed;

	for (;;) {
		struct nvmefs_ioq *host;
		int wait = 0;

		if (atomic_load_explicit(&ioq->mail, memory_order_relaxed))
			nvmefs_io_take_mail(ioq);
		failed = atomic_load(&ioq->ctrl->failed);
		if (!failed && ioq->q.failed && (host = atomic_load(&ioq->host))) {
			/* Live, through another queue: what was held goes there. */
			nvmefs_io_forward_held(ioq, host);
			if (timeout_ms && ioq->completed == before && ioq->nr_ios_inflight &&
			    !atomic_load(&ioq->mail))
				wait_wake(ioq, timeout_ms < 0 || timeout_ms > 100 ? 100 : timeout_ms);
			goto next;
		}
		if (failed || ioq->q.failed) {
			ioq_outage(ioq, failed, timeout_ms);
			/* Once I/O fails, so does polling, after every callback. */
			if (atomic_load(&ioq->ctrl->io_failing))
				return nvmefs_error(atomic_load(&ioq->ctrl->failed) ?: -EIO,
						    "I/O queue %u failed: %s", ioq->q.qid,
						    ioq->ctrl->fail_msg);
			goto next;
		}
		ret = ops->process(&ioq->q, 0);
		if (ret == 0 && timeout_ms != 0 && ioq->q.nr_inflight) {
			/* Sleep in slices, to notice timeouts and a failed controller. */
			wait = 100;
			if (timeout_ms > 0) {
				int64_t left = start + timeout_ms - nvmefs_now_ms();

				wait = left < wait ? (int)left : wait;
			}
			if (wait > 0)
				ret = ops->process(&ioq->q, wait);
		}
		if (ret < 0) {
			nvmefs_queue_fail(&ioq->q, ret);
			nvmefs_ctrl_fail(ioq->ctrl, ret, nvmefs_errmsg());
			continue;
		}
		housekeeping(ioq, nvmefs_now_ms());
		nvmefs_io_pump_pending(ioq);
		if (timeout_ms != 0 && ioq->completed == before && !ioq->q.nr_inflight &&
		    nvmefs_io_pending_not_before(ioq)) {
			/* Nothing on the wire to wait for: sleep out the retry delay. */
			int64_t now = nvmefs_now_ms(), left = nvmefs_io_pending_not_before(ioq) - now;

			if (timeout_ms > 0 && start + timeout_ms - now < left)
				left = start + timeout_ms - now;
			if (left > 0)
				wait_wake(ioq, left > 100 ? 100 : (int)left);
		}
next:
		if (ioq->completed != before || timeout_ms == 0 ||
		    !(ioq->nr_ios_inflight + ioq->nr_carried))
			break;
		if (timeout_ms > 0 && nvmefs_now_ms() - start >= timeout_ms)
			break;
	}
	return (int)(ioq->completed - before);
}

int nvmefs_ioq_fd(const struct nvmefs_ioq *ioq)
{
	return ioq->epfd;
}

int nvmefs_ioq_arm(struct nvmefs_ioq *ioq)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	unsigned int seq = atomic_load(&ctrl->wake_seq);
	eventfd_t v;
	int ret;

	/* Taken before the state is looked at, so that a change after it wakes
	 * us; and only after a change, so that arming costs no system call. */
	if (seq != ioq->wake_seen) {
		eventfd_read(ioq->wake_fd, &v);
		ioq->wake_seen = seq;
	}
	/* I/O to send for another queue, or ours back from one. */
	if (atomic_load_explicit(&ioq->mail, memory_order_relaxed))
		return 1;
	if (!atomic_load(&ctrl->failed) && ioq->q.failed && atomic_load(&ioq->host))
		return ioq->pending_head ? 1 : 0;
	if (atomic_load(&ctrl->failed) || ioq->q.failed) {
		/* Something for poll to do: stop the queue, or end held I/O. */
		if (atomic_load_explicit(&ioq->stopped_gen, memory_order_relaxed) !=
		    atomic_load(&ctrl->gen) || (atomic_load(&ctrl->io_failing) && ioq->pending_head) ||
		    !atomic_load(&ctrl->failed) || nvmefs_io_pending_given_up(ioq))
			return 1;
		return 0;
	}
	/* Reconnected with I/O held, or slots free for I/O that waited: poll
	 * sends it.  I/O that waits for a slot or a retry delay is no work yet. */
	if (nvmefs_io_pending_can_go(ioq))
		return 1;
	/* Connection events on the beat of poll's, not a system call per arm:
	 * a worker woken by one finds it within 100 ms. */
	housekeeping(ioq, nvmefs_now_ms());
	if (atomic_load(&ctrl->failed))
		return 1;
	ret = ctrl->ops->queue_arm(&ioq->q);
	if (ret < 0) {
		/* As a failed poll: the controller recovers, and poll has the
		 * outage to act on. */
		nvmefs_queue_fail(&ioq->q, ret);
		nvmefs_ctrl_fail(ctrl, ret, nvmefs_errmsg());
		return 1;
	}
	return ret;
}

int nvmefs_ioq_wait_ms(const struct nvmefs_ioq *ioq)
{
	int64_t due = nvmefs_io_pending_not_before(ioq), left;

	if (!due || atomic_load(&ioq->ctrl->failed) || ioq->q.failed)
		return -1;
	left = due - nvmefs_now_ms();
	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

unsigned int nvmefs_ioq_inflight(const struct nvmefs_ioq *ioq)
{
	return ioq->nr_ios_inflight + ioq->nr_carried;
}
