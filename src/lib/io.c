/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The I/O path over a controller's I/O queues (io_queues.c creates them).
 *
 * Everything an I/O needs is allocated and registered when its queue is
 * created: request slots and capsules (queue.c, the transport), a pool of
 * data buffers, and one tracking record per I/O a caller may have in
 * flight.  Submitting and completing an I/O allocates nothing, registers
 * nothing and copies no payload: the transport moves data between the
 * target and the caller's registered buffer (by RDMA, or through the
 * socket, which the kernel copies from and into), or it rides in the
 * capsule itself for small writes.
 *
 * A caller's I/O may need several commands (MDTS, the 16-bit block count):
 * its record counts the commands in flight and completes the caller once
 * the last one is back.  When request slots run out half-way, the record
 * waits on the queue's pending list and the rest is sent as slots free up.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nvme/util.h>

#include "admin_cmds.h"
#include "clock.h"
#include "ctrl_state.h"
#include "ctrl_types.h"
#include "error.h"
#include "ioq.h"
#include "mr.h"
#include "namespaces.h"
#include "queue.h"
#include "transport_ops.h"
#include "io_priv.h"
#include "io_forward.h"

/* As Linux's nvme_max_retries: a status without DNR is tried this often more. */
#define MAX_RETRIES 5
/* A path error is tried again this much later (unless the controller asks
 * for a Command Retry Delay): the namespace list is read meanwhile. */
#define PATH_RETRY_MS 100
/* NVMe status field bits above SCT/SC (the 15-bit form without the phase). */
#define STATUS_DNR 0x4000

enum io_op {
	IO_READ = nvme_cmd_read,
	IO_WRITE = nvme_cmd_write,
	IO_FLUSH = nvme_cmd_flush,
	IO_WRITE_ZEROES = nvme_cmd_write_zeroes,
	IO_DEALLOCATE = nvme_cmd_dsm,
	/* Write Zeroes, deallocating where the namespace says it can (not an opcode). */
	IO_PUNCH = 0x100,
};

/* ---------------------------------------------------------------------- */
/* Registered memory                                                       */
/* ---------------------------------------------------------------------- */

static struct nvmefs_mr *find_mr(struct nvmefs_ioq *ioq, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	struct nvmefs_mr *mr = ioq->pool_mr;

	if (mr && p >= mr->addr && p + len <= mr->addr + mr->len)
		return mr;
	return nvmefs_mr_find(ioq->ctrl, buf, len);
}

/* ---------------------------------------------------------------------- */
/* The buffer pool                                                          */
/* ---------------------------------------------------------------------- */

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

/* ---------------------------------------------------------------------- */
/* Submission and completion                                                */
/* ---------------------------------------------------------------------- */

static bool io_writes(const struct nvmefs_io *io)
{
	return io->op == IO_WRITE || io->op == IO_WRITE_ZEROES || io->op == IO_DEALLOCATE;
}

static struct nvmefs_io *io_of_order(struct flush_order_entry *e)
{
	return (struct nvmefs_io *)((char *)e - offsetof(struct nvmefs_io, order));
}

void nvmefs_io_complete(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
{
	nvmefs_io_cb cb = io->cb;
	void *arg = io->arg;
	int status = io->status;
	struct flush_order_entry *ready;

	if (io_writes(io)) {
		flush_order_write_done(&ioq->order, &io->order);
		/* Flushes after it go out once nothing before them is left. */
		while ((ready = flush_order_ready(&ioq->order)))
			nvmefs_io_pending_push(ioq, io_of_order(ready));
	}
	io->next = ioq->free_ios;
	ioq->free_ios = io;
	ioq->nr_ios_inflight--;
	ioq->completed++;
	cb(arg, status);
}

static void io_finish(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
{
	if (io->owner == ioq) {
		nvmefs_io_complete(ioq, io);
		return;
	}
	ioq->nr_carried--;
	nvmefs_io_return(io);
}

/* Back to the start: the whole I/O goes out again (reads and writes may be
 * replayed), after the others already waiting. */
static void io_again(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
{
	io->again = false;
	io->started = false;
	io->status = 0;
	io->slba = io->first_slba;
	io->nlb_left = io->total_nlb;
	io->buf = io->first_buf;
	if (!io->pending)
		nvmefs_io_pending_push(ioq, io);
}

/* Linux retries a status without DNR, after the Command Retry Delay the
 * controller asks for. */
static bool retryable(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw)
{
	int64_t delay = nvmefs_crd_delay_ms(ioq->ctrl, raw);

	if ((raw & STATUS_DNR) || io->retries >= MAX_RETRIES)
		return false;
	if (!delay && nvme_status_code_type(raw) == NVME_SCT_PATH)
		delay = PATH_RETRY_MS;
	io->retries++;
	io->not_before_ms = delay ? nvmefs_now_ms() + delay : 0;
	return true;
}

/*
 * A path related status (SCT 3h).  An ANA one says how this controller now
 * reaches the namespace: taken at once, so that no path choice sends I/O
 * the same way again, and the log is read again to be sure.  Returns
 * whether another path should take the I/O (a path of a multipath set, and
 * the controller did not say Do Not Retry).
 */
static bool path_error(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	struct nvmefs_ns_cache *ns = (struct nvmefs_ns_cache *)nvmefs_io_find_ns(ctrl, io->nsid);
	static const uint8_t ana_state[] = {
		[NVME_SC_ANA_PERSISTENT_LOSS] = NVME_ANA_STATE_PERSISTENT_LOSS,
		[NVME_SC_ANA_INACCESSIBLE] = NVME_ANA_STATE_INACCESSIBLE,
		[NVME_SC_ANA_TRANSITION] = NVME_ANA_STATE_CHANGE,
	};
	unsigned int sc = raw & 0xff;

	if (sc >= NVME_SC_ANA_PERSISTENT_LOSS && sc <= NVME_SC_ANA_TRANSITION) {
		if (ns)
			atomic_store(&ns->ana_state, ana_state[sc]);
		atomic_store(&ctrl->ana_stale, true);
	} else if (!ctrl->failover) {
		/* nvmet answers Internal Path Error for a namespace disabled
		 * on it.  With no other path Linux sends the I/O again until
		 * a rescan finds the namespace gone (then EIO): the namespace
		 * list is read again, the retries wait for it, and an I/O
		 * that fails says what the target answered. */
		io->path_status = raw & 0x7ff;
		atomic_store(&ctrl->ns_stale, true);
	}
	return ctrl->failover && !(raw & STATUS_DNR);
}

static void cmd_done(struct nvmefs_req *req)
{
	struct nvmefs_io *io = req->done_arg;
	struct nvmefs_ioq *ioq = (struct nvmefs_ioq *)req->q;
	uint16_t raw = req->error ? 0 : nvmefs_cqe_status(&req->cqe);
	int status = req->error ? req->error : raw & 0x7ff;
	bool aborted = req->aborted;

	nvmefs_req_put(req);
	if (status > 0 && (status >> 8) == NVME_SCT_PATH && path_error(ioq, io, raw))
		status = -ENOLINK;
	if (aborted || (status > 0 && !io->status && retryable(ioq, io, raw))) {
		/* Stopped by an outage, or a retryable status: the rest is not
		 * sent now, and all of it goes again once this is back. */
		io->again = true;
		io->nlb_left = 0;
	} else if (status && !io->status) {
		io->status = status;
		/* Nothing more of a failed I/O goes out. */
		io->nlb_left = 0;
	}
	io->outstanding--;
	if (io->outstanding || io->nlb_left)
		return;
	if (io->again && !io->status)
		io_again(ioq, io);
	else if (!io->pending)
		io_finish(ioq, io);
}

/* Blocks of @io the next command carries. */
static uint32_t chunk_blocks(const struct nvmefs_ioq *ioq, const struct nvmefs_io *io)
{
	const struct nvmefs_ctrl *ctrl = ioq->ctrl;
	uint32_t max = NVMEFS_MAX_ZEROES_BLOCKS;

	if (io->op == IO_READ || io->op == IO_WRITE) {
		uint32_t by_xfer = ctrl->max_xfer >> io->lba_shift;

		if (by_xfer < max)
			max = by_xfer;
	}
	if (io->op == IO_WRITE_ZEROES)
		max = nvmefs_io_zeroes_nlb(ctrl, io->lba_shift);
	if (io->op == IO_DEALLOCATE)
		max = ctrl->max_dealloc_blocks ? ctrl->max_dealloc_blocks : UINT32_MAX;
	return io->nlb_left < max ? (uint32_t)io->nlb_left : max;
}

/*
 * Send as much of @io as free slots allow.  Returns 0, or -EAGAIN when not
 * even its first command could go, or the queue's failure.
 */
static int io_pump(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
{
	struct nvmefs_queue *q = &ioq->q;

	/* An outage holds everything until the queue is connected again; until
	 * the controller is live, the queue is its thread's, which connects it. */
	if (atomic_load(&ioq->ctrl->failed) || q->failed ||
	    (io->not_before_ms && nvmefs_now_ms() < io->not_before_ms))
		return io->started ? 0 : -EAGAIN;
	io->not_before_ms = 0;
	while (io->nlb_left || !io->started) {
		struct nvmefs_req *req = nvmefs_req_get(q);
		struct nvmefs_sqe *sqe;
		uint32_t nlb = chunk_blocks(ioq, io);
		int ret;

		if (!req)
			return io->started ? 0 : -EAGAIN;
		sqe = &req->cmd->sqe;
		nvmefs_sqe_init(sqe, io->op, 0);
		sqe->nsid = nvmefs_cpu_to_le32(io->nsid);
		req->done = cmd_done;
		req->done_arg = io;
		switch (io->op) {
		case IO_READ:
		case IO_WRITE:
			req->data = io->buf;
			req->len = nlb << io->lba_shift;
			req->mr = io->mr;
			req->dir = io->op == IO_READ ? NVMEFS_DIR_FROM_CTRL : NVMEFS_DIR_TO_CTRL;
			/* fallthrough */
		case IO_WRITE_ZEROES:
			sqe->cdw10 = nvmefs_cpu_to_le32((uint32_t)io->slba);
			sqe->cdw11 = nvmefs_cpu_to_le32((uint32_t)(io->slba >> 32));
			sqe->cdw12 = nvmefs_cpu_to_le32((io->deac ? (uint32_t)NVME_IO_DEAC << 16 : 0) |
							(nlb - 1));
			break;
		case IO_DEALLOCATE: {
			struct nvme_dsm_range *range = req->data_slot;

			range->cattr = 0;
			range->nlb = nvmefs_cpu_to_le32(nlb);
			range->slba = nvmefs_cpu_to_le64(io->slba);
			req->data = range;
			req->len = sizeof(*range);
			req->dir = NVMEFS_DIR_TO_CTRL;
			sqe->cdw10 = 0;	/* one range, 0's based */
			sqe->cdw11 = nvmefs_cpu_to_le32(NVME_DSMGMT_AD);
			break;
		}
		case IO_FLUSH:
			break;
		}
		ret = nvmefs_req_submit(req);
		if (ret < 0) {
			nvmefs_req_put(req);
			if (ret == -EAGAIN)
				return io->started ? 0 : -EAGAIN;
			return ret;
		}
		io->started = true;
		io->outstanding++;
		io->slba += nlb;
		io->nlb_left -= nlb;
		if (io->buf)
			io->buf += (size_t)nlb << io->lba_shift;
	}
	return 0;
}

void nvmefs_io_pending_push(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
{
	io->pending = true;
	io->next = NULL;
	if (ioq->pending_tail)
		ioq->pending_tail->next = io;
	else
		ioq->pending_head = io;
	ioq->pending_tail = io;
}

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

static bool ns_gone(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(ctrl, nsid);

	return !ns || atomic_load_explicit(&ns->gone, memory_order_relaxed);
}

/* The time before which the oldest I/O waiting for slots may not go (a
 * command retry delay), or 0. */
static int64_t pending_not_before(const struct nvmefs_ioq *ioq)
{
	return ioq->pending_head ? ioq->pending_head->not_before_ms : 0;
}

/* Whether pump_pending() can send something now: the oldest waiting I/O is
 * past its retry delay and a slot is free.  Otherwise a completion or the
 * delay's end is what to wait for, not a poll. */
static bool pending_can_go(struct nvmefs_ioq *ioq)
{
	int64_t due = pending_not_before(ioq);

	return ioq->pending_head && (!due || nvmefs_now_ms() >= due) &&
		nvmefs_req_available(&ioq->q);
}

/* Sends more of the I/Os that waited for slots, oldest first. */
static void pump_pending(struct nvmefs_ioq *ioq)
{
	while (ioq->pending_head) {
		struct nvmefs_io *io = ioq->pending_head;

		if (!io->started && ns_gone(ioq->ctrl, io->nsid)) {
			/* Gone from the target, or another namespace answers to
			 * this NSID now: never write to it.  It fails with what
			 * the target answered it, if it did. */
			io->status = io->path_status ? io->path_status : -ENODEV;
			io->nlb_left = 0;
		} else if (!io->started && io->nlb_left && !chunk_blocks(ioq, io)) {
			/* Held through an outage, and the controller came back
			 * moving less than one block in a command. */
			io->status = nvmefs_error(-EINVAL, "namespace %u's %u-byte blocks are larger "
						  "than the %u bytes %s moves in one command since it "
						  "reconnected", io->nsid, 1u << io->lba_shift,
						  atomic_load(&ioq->ctrl->max_xfer), ioq->ctrl->subnqn);
			io->nlb_left = 0;
		} else if (io_pump(ioq, io) < 0 && !io->started) {
			return;
		}
		if (io->nlb_left)
			return;
		ioq->pending_head = io->next;
		if (!ioq->pending_head)
			ioq->pending_tail = NULL;
		io->next = NULL;
		io->pending = false;
		if (!io->outstanding)
			io_finish(ioq, io);
	}
}


static bool ioq_deleted(const struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_ctrl_status st;

	nvmefs_ctrl_status(ctrl, &st);
	return st.state == NVMEFS_CTRL_DELETED;
}

/* What a new I/O to @ns (NULL: not active) meets while the controller's
 * failure is @failed (0: live).  io_submit() acts on it and
 * nvmefs_ioq_ns_held() tells it: one rule for both. */
enum io_gate { GATE_SEND, GATE_HOLD, GATE_GIVE_BACK, GATE_FAIL, GATE_NO_NS, GATE_NS_GONE };

static enum io_gate io_gate(const struct nvmefs_ctrl *ctrl, const struct nvmefs_ns_cache *ns,
			    int failed)
{
	/* A path of a multipath head gives its I/O back rather than hold it. */
	if (failed && ctrl->failover)
		return GATE_GIVE_BACK;
	if (failed && atomic_load(&((struct nvmefs_ctrl *)ctrl)->io_failing))
		return GATE_FAIL;
	if (!ns)
		return GATE_NO_NS;
	if (atomic_load_explicit(&ns->gone, memory_order_relaxed))
		return GATE_NS_GONE;
	/* Held through the outage, and sent once reconnected. */
	return failed ? GATE_HOLD : GATE_SEND;
}

static int io_submit(struct nvmefs_ioq *ioq, enum io_op op, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, void *buf, nvmefs_io_cb cb, void *arg)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(ctrl, nsid);
	struct nvmefs_ioq *host;
	struct nvmefs_mr *mr;
	struct nvmefs_io *io;
	int failed = atomic_load(&ctrl->failed);
	enum io_gate gate = io_gate(ctrl, ns, failed);
	int ret;

	switch (gate) {
	case GATE_GIVE_BACK:
		return nvmefs_error(-ENOLINK, "the path through %s is down (%s)",
				    nvmefs_ctrl_where(ctrl), ctrl->fail_msg);
	case GATE_FAIL:
		return nvmefs_error(failed, "the controller failed (%s) and %s", ctrl->fail_msg,
				    ioq_deleted(ctrl) ? "is deleted" : "I/O fails while it "
				    "reconnects (fast_io_fail_tmo)");
	case GATE_NO_NS:
		return nvmefs_error(-ENOENT, "namespace %u is not active on %s", nsid, ctrl->subnqn);
	case GATE_NS_GONE:
		return ns->unusable ? nvmefs_error(-ENODEV, "namespace %u of %s cannot be used: %s",
						   nsid, ctrl->subnqn, ns->unusable)
			: nvmefs_error(-ENODEV, "namespace %u of %s is gone or was replaced by another "
				       "during an outage: nothing more is written to it", nsid,
				       ctrl->subnqn);
	case GATE_SEND:
	case GATE_HOLD:
		break;
	}
	if (op != IO_FLUSH && !nlb)
		return nvmefs_error(-EINVAL, "an I/O of 0 blocks");
	if ((op == IO_READ || op == IO_WRITE) && !(ctrl->max_xfer >> ns->lba_shift))
		return nvmefs_error(-EINVAL, "namespace %u's %u-byte blocks are larger than the %u bytes "
				    "%s moves in one command", nsid, ns->lba_size, ctrl->max_xfer,
				    ctrl->subnqn);
	mr = buf ? find_mr(ioq, buf, (size_t)nlb << ns->lba_shift) : NULL;
	if (buf && !mr)
		return nvmefs_error(-EFAULT, "the %zu-byte buffer at %p is not in registered memory: "
				    "use a pool buffer or nvmefs_mr_reg()",
				    (size_t)nlb << ns->lba_shift, buf);
	/* Keep order: nothing overtakes I/Os already waiting for slots (in an
	 * outage it waits behind them). */
	io = ioq->free_ios;
	if (!io || (ioq->pending_head && !failed))
		return -EAGAIN;
	ioq->free_ios = io->next;
	io->next = NULL;
	io->cb = cb;
	io->arg = arg;
	io->op = (uint8_t)op;
	io->started = false;
	io->pending = false;
	io->outstanding = 0;
	io->status = 0;
	io->again = false;
	io->retries = 0;
	io->not_before_ms = 0;
	io->path_status = 0;
	io->nsid = nsid;
	io->lba_shift = ns->lba_shift;
	io->slba = io->first_slba = slba;
	io->nlb_left = io->total_nlb = op == IO_FLUSH ? 0 : nlb;
	io->buf = io->first_buf = buf;
	io->mr = mr;
	/* DLFEAT bit 3: Write Zeroes may deallocate, and the blocks still read as zeros. */
	io->deac = op == IO_PUNCH && (ns->dlfeat & NVME_NS_DLFEAT_WRITE_ZEROES);
	if (op == IO_PUNCH)
		io->op = IO_WRITE_ZEROES;
	if (op == IO_FLUSH && flush_order_flush_waits(&ioq->order, &io->order)) {
		/* Sent once every write before it has completed. */
		ioq->nr_ios_inflight++;
		return 0;
	}
	if (io_writes(io))
		flush_order_write_start(&ioq->order, &io->order);
	if (gate == GATE_HOLD) {
		/* Held through the outage, and sent once reconnected.  Until the
		 * controller is live again the queue is its thread's, which
		 * connects it: not a slot of it is touched here. */
		ioq->nr_ios_inflight++;
		nvmefs_io_pending_push(ioq, io);
		return 0;
	}
	ret = io_pump(ioq, io);
	if (ret == -EAGAIN && ioq->q.failed && (host = atomic_load(&ioq->host))) {
		/* No connection of our own: another queue's owner sends it. */
		ioq->nr_ios_inflight++;
		nvmefs_io_forward(host, io);
		return 0;
	}
	if (ret < 0 && !io->started) {
		if (io_writes(io))
			flush_order_write_done(&ioq->order, &io->order);
		io->next = ioq->free_ios;
		ioq->free_ios = io;
		return ret;
	}
	if (ret < 0) {
		/* Part of it is out: it completes, failed, when that part is back. */
		io->status = ret;
		io->nlb_left = 0;
	}
	ioq->nr_ios_inflight++;
	if (io->nlb_left)
		nvmefs_io_pending_push(ioq, io);
	return 0;
}

int nvmefs_ioq_read(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb,
		    void *buf, nvmefs_io_cb cb, void *arg)
{
	return io_submit(ioq, IO_READ, nsid, slba, nlb, buf, cb, arg);
}

int nvmefs_ioq_write(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb,
		     const void *buf, nvmefs_io_cb cb, void *arg)
{
	return io_submit(ioq, IO_WRITE, nsid, slba, nlb, (void *)buf, cb, arg);
}

int nvmefs_ioq_flush(struct nvmefs_ioq *ioq, uint32_t nsid, nvmefs_io_cb cb, void *arg)
{
	return io_submit(ioq, IO_FLUSH, nsid, 0, 0, NULL, cb, arg);
}

int nvmefs_ioq_write_zeroes(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			    nvmefs_io_cb cb, void *arg)
{
	return io_submit(ioq, IO_WRITE_ZEROES, nsid, slba, nlb, NULL, cb, arg);
}

int nvmefs_ioq_punch(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
		     nvmefs_io_cb cb, void *arg)
{
	return io_submit(ioq, IO_PUNCH, nsid, slba, nlb, NULL, cb, arg);
}

int nvmefs_ioq_deallocate(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			  nvmefs_io_cb cb, void *arg)
{
	return io_submit(ioq, IO_DEALLOCATE, nsid, slba, nlb, NULL, cb, arg);
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
			pump_pending(ioq);
		}
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
		pump_pending(ioq);
		if (timeout_ms != 0 && ioq->completed == before && !ioq->q.nr_inflight &&
		    pending_not_before(ioq)) {
			/* Nothing on the wire to wait for: sleep out the retry delay. */
			int64_t now = nvmefs_now_ms(), left = pending_not_before(ioq) - now;

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
		    !atomic_load(&ctrl->failed))
			return 1;
		return 0;
	}
	/* Reconnected with I/O held, or slots free for I/O that waited: poll
	 * sends it.  I/O that waits for a slot or a retry delay is no work yet. */
	if (pending_can_go(ioq))
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

bool nvmefs_ioq_can_take(const struct nvmefs_ioq *ioq)
{
	return ioq->free_ios && !ioq->pending_head;
}

int nvmefs_ioq_wait_ms(const struct nvmefs_ioq *ioq)
{
	int64_t due = pending_not_before(ioq), left;

	if (!due || atomic_load(&ioq->ctrl->failed) || ioq->q.failed)
		return -1;
	left = due - nvmefs_now_ms();
	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

int nvmefs_ioq_ns_held(const struct nvmefs_ioq *ioq, uint32_t nsid)
{
	const struct nvmefs_ctrl *ctrl = ioq->ctrl;
	int failed = atomic_load(&((struct nvmefs_ctrl *)ctrl)->failed);

	/* Asked of every request a mount reads: while live, one load and no
	 * look-up of the namespace (a live controller holds nothing). */
	return failed && io_gate(ctrl, nvmefs_io_find_ns(ctrl, nsid), failed) == GATE_HOLD;
}

unsigned int nvmefs_ioq_inflight(const struct nvmefs_ioq *ioq)
{
	return ioq->nr_ios_inflight + ioq->nr_carried;
}

/* ---------------------------------------------------------------------- */
/* Synchronous forms                                                        */
/* ---------------------------------------------------------------------- */

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

	while ((ret = io_submit(ioq, op, nsid, slba, nlb, buf, sync_done, &w)) == -EAGAIN) {
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
