/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * I/O queues and the I/O path.
 *
 * Everything an I/O needs is allocated and registered when its queue is
 * created: request slots and capsules (queue.c, the transport), a pool of
 * data buffers, and one tracking record per I/O a caller may have in
 * flight.  Submitting and completing an I/O allocates nothing, registers
 * nothing and copies no payload: data moves by RDMA between the target
 * and the caller's registered buffer, or rides in the capsule itself for
 * small writes.
 *
 * A caller's I/O may need several commands (MDTS, the 16-bit block count):
 * its record counts the commands in flight and completes the caller once
 * the last one is back.  When request slots run out half-way, the record
 * waits on the queue's pending list and the rest is sent as slots free up.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nvme/util.h>

#include "internal.h"
#include "io_priv.h"

/* Connect data is the largest command payload an I/O queue sends from its
 * own slots (Dataset Management ranges are 16 bytes). */
#define IO_DATA_SLOT_SIZE 1024
/* A keyed SGL describes at most 2^24 - 1 bytes: stay at a power of two. */
#define SGL_MAX_XFER (8u << 20)
#define MAX_IO_QUEUES 256
/* As Linux's nvme_max_retries: a status without DNR is tried this often more. */
#define MAX_RETRIES 5
/* NVMe status field bits above SCT/SC (the 15-bit form without the phase). */
#define STATUS_CRD(raw) (((raw) >> 11) & 0x3)
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

void nvmefs_io_opts_init(struct nvmefs_io_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->nr_queues = 1;
	opts->queue_size = NVMEFS_DEFAULT_IO_QUEUE_SIZE;
	opts->buf_size = NVMEFS_DEFAULT_IO_BUF_SIZE;
	opts->timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS;
}

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

void nvmefs_io_complete(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
{
	nvmefs_io_cb cb = io->cb;
	void *arg = io->arg;
	int status = io->status;

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
 * controller asks for (CRD indexes Identify's CRDT, in 100 ms). */
static bool retryable(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw)
{
	const struct nvme_id_ctrl *id = &ioq->ctrl->id;
	const uint16_t crdt[3] = { id->crdt1, id->crdt2, id->crdt3 };
	unsigned int crd = STATUS_CRD(raw);

	if ((raw & STATUS_DNR) || io->retries >= MAX_RETRIES)
		return false;
	io->retries++;
	io->not_before_ms = crd ? nvmefs_now_ms() +
			    (int64_t)nvmefs_le16_to_cpu(crdt[crd - 1]) * 100 : 0;
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

	/* An outage holds everything until the queue is connected again. */
	if (q->failed || (io->not_before_ms && nvmefs_now_ms() < io->not_before_ms))
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

static bool ns_gone(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(ctrl, nsid);

	return !ns || atomic_load_explicit(&ns->gone, memory_order_relaxed);
}

/* Sends more of the I/Os that waited for slots, oldest first. */
static void pump_pending(struct nvmefs_ioq *ioq)
{
	while (ioq->pending_head) {
		struct nvmefs_io *io = ioq->pending_head;

		if (!io->started && ns_gone(ioq->ctrl, io->nsid)) {
			/* Another namespace answers to this NSID now: never write to it. */
			io->status = -ENODEV;
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

static int io_submit(struct nvmefs_ioq *ioq, enum io_op op, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, void *buf, nvmefs_io_cb cb, void *arg)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	const struct nvmefs_ns_cache *ns;
	struct nvmefs_ioq *host;
	struct nvmefs_mr *mr;
	struct nvmefs_io *io;
	int failed = atomic_load(&ctrl->failed);
	int ret;

	if (failed && ctrl->failover)
		return nvmefs_error(-ENOLINK, "the path through %s is down (%s)",
				    nvmefs_ctrl_where(ctrl), ctrl->fail_msg);
	if (failed && atomic_load(&ctrl->io_failing))
		return nvmefs_error(failed, "the controller failed (%s) and %s", ctrl->fail_msg,
				    ioq_deleted(ctrl) ? "is deleted" : "I/O fails while it "
				    "reconnects (fast_io_fail_tmo)");
	ns = nvmefs_io_find_ns(ctrl, nsid);
	if (!ns)
		return nvmefs_error(-ENOENT, "namespace %u is not active on %s", nsid, ctrl->subnqn);
	if (atomic_load_explicit(&ns->gone, memory_order_relaxed))
		return ns->unusable ? nvmefs_error(-ENODEV, "namespace %u of %s cannot be used: %s",
						   nsid, ctrl->subnqn, ns->unusable)
			: nvmefs_error(-ENODEV, "namespace %u of %s is gone or was replaced by another "
				       "during an outage: nothing more is written to it", nsid,
				       ctrl->subnqn);
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
	ret = io_pump(ioq, io);
	if (ret == -EAGAIN && failed) {
		/* Held through the outage, and sent once reconnected. */
		ioq->nr_ios_inflight++;
		nvmefs_io_pending_push(ioq, io);
		return 0;
	}
	if (ret == -EAGAIN && ioq->q.failed && (host = atomic_load(&ioq->host))) {
		/* No connection of our own: another queue's owner sends it. */
		ioq->nr_ios_inflight++;
		nvmefs_io_forward(host, io);
		return 0;
	}
	if (ret < 0 && !io->started) {
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
		for (io = ioq->pending_head; io; io = io->next) {
			if (!io->status)
				io->status = ctrl->failover ? -ENOLINK : failed;
			io->nlb_left = 0;
			io->started = true;
		}
		pump_pending(ioq);
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
	/* Reconnected with I/O held: poll sends it. */
	if (ioq->pending_head)
		return 1;
	/* Connection events on the beat of poll's, not a system call per arm:
	 * a worker woken by one finds it within 100 ms. */
	housekeeping(ioq, nvmefs_now_ms());
	if (atomic_load(&ctrl->failed))
		return 1;
	return ctrl->ops->queue_arm(&ioq->q);
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

/* ---------------------------------------------------------------------- */
/* Creating and deleting I/O queues                                         */
/* ---------------------------------------------------------------------- */

/* Watches the transport's descriptors from the queue's lasting epoll set. */
static int ioq_watch(struct nvmefs_ioq *ioq, bool on)
{
	const struct nvmefs_transport_ops *ops = ioq->ctrl->ops;
	int fds[2] = { ops->queue_fd(&ioq->q), ops->queue_event_fd ? ops->queue_event_fd(&ioq->q) : -1 };
	struct epoll_event ev = { .events = EPOLLIN };

	for (unsigned int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if (epoll_ctl(ioq->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fds[i], on ? &ev : NULL) &&
		    on)
			return nvmefs_error(-errno, "I/O queue %u: watching its descriptors failed: %s",
					    ioq->q.qid, strerror(errno));
	}
	return 0;
}

/* Tears down the queue's transport; the queue can be connected again. */
static void ioq_disconnect(struct nvmefs_ioq *ioq)
{
	if (!ioq->q.tp)
		return;
	ioq_watch(ioq, false);
	ioq->ctrl->ops->queue_destroy(&ioq->q);
}

/* Creates the queue's transport and sends Connect, with the controller's
 * current controller id. */
static int ioq_connect(struct nvmefs_ioq *ioq)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	struct nvmefs_queue_params params = {
		.qid = ioq->q.qid,
		.size = ioq->size,
		.cntlid = ctrl->cntlid,
		.data_slot_size = IO_DATA_SLOT_SIZE,
	};
	int ret;

	ioq->q.failed = 0;
	ioq->q.stopped = false;
	ioq->q.sq_head = ioq->q.sq_tail = 0;
	ret = ctrl->ops->queue_create(&ioq->q, &params);
	if (ret < 0)
		return ret;
	ret = ioq_watch(ioq, true);
	if (ret == 0)
		ret = nvmefs_fabrics_connect(ctrl, &ioq->q, 0);
	if (ret < 0)
		ioq_disconnect(ioq);
	return ret;
}

static void ioq_destroy(struct nvmefs_ioq *ioq)
{
	if (!ioq)
		return;
	ioq_disconnect(ioq);
	nvmefs_queue_fini(&ioq->q);
	nvmefs_mr_free(ioq->pool_mr);
	if (ioq->epfd >= 0)
		close(ioq->epfd);
	if (ioq->wake_fd >= 0)
		close(ioq->wake_fd);
	free(ioq->pool);
	free(ioq->free_bufs);
	free(ioq->ios);
	pthread_mutex_destroy(&ioq->mail_lock);
	free(ioq);
}

static int ioq_create(struct nvmefs_ctrl *ctrl, uint16_t qid, const struct nvmefs_io_opts *opts,
		      struct nvmefs_ioq **ioqp)
{
	struct nvmefs_queue_params params = {
		.qid = qid,
		.size = (uint16_t)opts->queue_size,
	};
	struct epoll_event wake = { .events = EPOLLIN };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct nvmefs_ioq *ioq;
	unsigned int i;
	int ret;

	ioq = calloc(1, sizeof(*ioq));
	if (!ioq)
		return nvmefs_error(-ENOMEM, "out of memory");
	ioq->ctrl = ctrl;
	ioq->size = params.size;
	pthread_mutex_init(&ioq->mail_lock, NULL);
	ioq->epfd = epoll_create1(EPOLL_CLOEXEC);
	ioq->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	atomic_init(&ioq->stopped_gen, atomic_load(&ctrl->gen));
	ioq->wake_seen = atomic_load(&ctrl->wake_seq);
	if (ioq->epfd < 0 || ioq->wake_fd < 0 ||
	    epoll_ctl(ioq->epfd, EPOLL_CTL_ADD, ioq->wake_fd, &wake)) {
		ret = nvmefs_error(-errno, "I/O queue %u: creating its descriptors failed: %s", qid,
				   strerror(errno));
		goto fail;
	}
	ret = nvmefs_queue_init(&ioq->q, ctrl, &params);
	if (ret < 0)
		goto fail;
	ret = ioq_connect(ioq);
	if (ret < 0)
		goto fail;
	ioq->q.timeout_ms = opts->timeout_ms;

	/* As many I/Os as commands can be in flight: more could not go out. */
	ioq->ios = calloc(ioq->q.nr_reqs, sizeof(*ioq->ios));
	ioq->buf_size = (opts->buf_size + page - 1) / page * page;
	ioq->nr_bufs = opts->bufs_per_queue ? opts->bufs_per_queue : ioq->q.nr_reqs;
	ioq->free_bufs = calloc(ioq->nr_bufs, sizeof(*ioq->free_bufs));
	if (!ioq->ios || !ioq->free_bufs ||
	    posix_memalign((void **)&ioq->pool, page, ioq->buf_size * ioq->nr_bufs)) {
		ret = nvmefs_error(-ENOMEM, "out of memory for %u buffers of %zu bytes on queue %u",
				   ioq->nr_bufs, ioq->buf_size, qid);
		goto fail;
	}
	for (i = 0; i < ioq->q.nr_reqs; i++) {
		ioq->ios[i].next = i + 1 < ioq->q.nr_reqs ? &ioq->ios[i + 1] : NULL;
		ioq->ios[i].owner = ioq;
	}
	ioq->free_ios = ioq->ios;
	ret = nvmefs_mr_new(ctrl, ioq->pool, ioq->buf_size * ioq->nr_bufs, &ioq->pool_mr);
	if (ret < 0)
		goto fail;
	for (i = 0; i < ioq->nr_bufs; i++)
		ioq->free_bufs[i] = ioq->pool + (size_t)(ioq->nr_bufs - 1 - i) * ioq->buf_size;
	ioq->nr_free_bufs = ioq->nr_bufs;
	*ioqp = ioq;
	return 0;
fail:
	ioq_destroy(ioq);
	return ret;
}

/* Asks for @nr I/O queues; the controller may grant fewer, which is an
 * error unless @granted takes the count. */
static int set_nr_queues(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int *granted)
{
	union nvmefs_cmd cmd;
	struct nvmefs_cqe cqe;
	unsigned int nsq, ncq;
	int ret;

	nvmefs_sqe_init(&cmd.sqe, nvme_admin_set_features, 0);
	cmd.sqe.cdw10 = nvmefs_cpu_to_le32(NVME_FEAT_FID_NUM_QUEUES);
	cmd.sqe.cdw11 = nvmefs_cpu_to_le32((nr - 1) | (nr - 1) << 16);
	ret = nvmefs_admin_exec(ctrl, &cmd, NULL, 0, NVMEFS_DIR_NONE, &cqe);
	if (ret == -EREMOTEIO)
		return nvmefs_error(-EIO, "asking %s for %u I/O queues failed: %s", ctrl->subnqn, nr,
				    nvme_status_to_string(nvmefs_cqe_status(&cqe), false));
	if (ret < 0)
		return ret;
	nsq = (nvmefs_cqe_dw0(&cqe) & 0xffff) + 1;
	ncq = (nvmefs_cqe_dw0(&cqe) >> 16) + 1;
	if (granted) {
		*granted = nsq < ncq ? nsq : ncq;
		if (*granted > nr)
			*granted = nr;
		return 0;
	}
	if (nsq < nr || ncq < nr)
		return nvmefs_error(-ENOSPC, "%s grants only %u I/O queues, fewer than the %u asked "
				    "for: ask for at most %u (-i)", ctrl->subnqn, nsq < ncq ? nsq : ncq,
				    nr, nsq < ncq ? nsq : ncq);
	return 0;
}

/*
 * Every I/O queue connected again, or, if the target now grants fewer (as
 * Linux remaps its CPUs onto the hardware queues that remain), the first
 * ones, each of the rest sending its I/O through one of those.
 */
int nvmefs_io_reconnect(struct nvmefs_ctrl *ctrl)
{
	unsigned int granted = 0, i;
	int ret = 0;

	pthread_mutex_lock(&ctrl->io_lock);
	if (!ctrl->nr_ioqs)
		goto out;
	ret = set_nr_queues(ctrl, ctrl->nr_ioqs, &granted);
	if (ret == 0)
		ret = nvmefs_io_recheck_namespaces(ctrl);
	if (ret == 0)
		ret = nvmefs_ana_update(ctrl, false);
	for (i = 0; ret == 0 && i < ctrl->nr_ioqs; i++) {
		struct nvmefs_ioq *ioq = ctrl->ioqs[i];

		if (i < granted) {
			ret = ioq_connect(ioq);
			atomic_store(&ioq->host, NULL);
		} else {
			ioq->q.failed = -ENOTCONN;
			atomic_store(&ioq->host, ctrl->ioqs[i % granted]);
		}
	}
	if (ret == 0)
		ctrl->nr_connected_ioqs = granted;
out:
	pthread_mutex_unlock(&ctrl->io_lock);
	return ret;
}

void nvmefs_io_disconnect(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; i < ctrl->nr_ioqs; i++)
		ioq_disconnect(ctrl->ioqs[i]);
	pthread_mutex_unlock(&ctrl->io_lock);
}

bool nvmefs_io_all_stopped(struct nvmefs_ctrl *ctrl, unsigned int gen)
{
	bool all = true;

	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; all && i < ctrl->nr_ioqs; i++)
		all = atomic_load(&ctrl->ioqs[i]->stopped_gen) == gen;
	pthread_mutex_unlock(&ctrl->io_lock);
	return all;
}

void nvmefs_io_wake(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; i < ctrl->nr_ioqs; i++)
		eventfd_write(ctrl->ioqs[i]->wake_fd, 1);
	atomic_fetch_add(&ctrl->wake_seq, 1);
	pthread_mutex_unlock(&ctrl->io_lock);
}

int nvmefs_ctrl_create_io_queues(struct nvmefs_ctrl *ctrl, const struct nvmefs_io_opts *opts)
{
	unsigned int mqes = (unsigned int)NVME_CAP_MQES(ctrl->cap) + 1;
	struct nvmefs_ioq **ioqs = NULL;
	unsigned int i, nr = 0;
	int ret;

	if (ctrl->discovery)
		return nvmefs_error(-EINVAL, "%s is a discovery controller: it has no I/O queues",
				    ctrl->subnqn);
	if (ctrl->nr_ioqs)
		return nvmefs_error(-EBUSY, "the controller already has %u I/O queues", ctrl->nr_ioqs);
	if (!opts->nr_queues || opts->nr_queues > MAX_IO_QUEUES)
		return nvmefs_error(-EINVAL, "%u I/O queues: ask for 1 to %d", opts->nr_queues,
				    MAX_IO_QUEUES);
	if (opts->queue_size < 2 || opts->queue_size > mqes)
		return nvmefs_error(-EINVAL, "an I/O queue of %u entries: %s takes 2 to %u (CAP.MQES)",
				    opts->queue_size, ctrl->subnqn, mqes);
	if (!opts->buf_size)
		return nvmefs_error(-EINVAL, "pool buffers of 0 bytes");
	if (opts->timeout_ms > NVMEFS_MAX_TIMEOUT_MS)
		return nvmefs_error(-EINVAL, "an I/O timeout of %u ms: give at most %u ms",
				    opts->timeout_ms, NVMEFS_MAX_TIMEOUT_MS);

	ctrl->max_xfer = nvmefs_ctrl_limit_xfer(ctrl, SGL_MAX_XFER);
	ret = nvmefs_ctrl_read_nvm_limits(ctrl);
	if (ret < 0)
		return ret;
	/* In-capsule data starts right after the SQE only when ICDOFF is 0. */
	ctrl->inline_size = 0;
	if (!ctrl->id.icdoff && nvmefs_le32_to_cpu(ctrl->id.ioccsz) * 16 > sizeof(struct nvmefs_sqe))
		ctrl->inline_size = nvmefs_le32_to_cpu(ctrl->id.ioccsz) * 16 - sizeof(struct nvmefs_sqe);

	ret = set_nr_queues(ctrl, opts->nr_queues, NULL);
	if (ret == 0)
		ret = nvmefs_io_scan_namespaces(ctrl);
	if (ret == 0)
		ret = nvmefs_ana_update(ctrl, true);
	if (ret < 0)
		goto fail;
	ioqs = calloc(opts->nr_queues, sizeof(*ioqs));
	if (!ioqs) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto fail;
	}
	for (nr = 0; nr < opts->nr_queues; nr++) {
		ret = ioq_create(ctrl, (uint16_t)(nr + 1), opts, &ioqs[nr]);
		if (ret < 0)
			goto fail;
	}
	/* Only whole queues are the recovery's to stop and reconnect. */
	pthread_mutex_lock(&ctrl->io_lock);
	ctrl->ioqs = ioqs;
	ctrl->nr_ioqs = nr;
	ctrl->nr_connected_ioqs = nr;
	pthread_mutex_unlock(&ctrl->io_lock);
	return 0;
fail:
	for (i = 0; i < nr; i++)
		ioq_destroy(ioqs[i]);
	free(ioqs);
	nvmefs_ctrl_delete_io_queues(ctrl);
	return ret;
}

void nvmefs_ctrl_delete_io_queues(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_ioq **ioqs;
	unsigned int i, nr;

	struct nvmefs_ns_cache *ns;
	uint32_t *nsids;

	pthread_mutex_lock(&ctrl->io_lock);
	ioqs = ctrl->ioqs;
	nr = ctrl->nr_ioqs;
	ns = ctrl->ns;
	nsids = ctrl->nsids;
	ctrl->ioqs = NULL;
	ctrl->nr_ioqs = 0;
	ctrl->nr_connected_ioqs = 0;
	ctrl->ns = NULL;
	ctrl->nsids = NULL;
	ctrl->nr_ns = 0;
	pthread_mutex_unlock(&ctrl->io_lock);
	for (i = 0; ioqs && i < nr; i++)
		ioq_destroy(ioqs[i]);
	free(ioqs);
	/* Every slot, listed or not yet: a scan that failed half-way fills some. */
	for (i = 0; ns && i < NVMEFS_MAX_NAMESPACES; i++)
		free(ns[i].unusable);
	free(ns);
	free(nsids);
}

unsigned int nvmefs_ctrl_io_queue_count(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->nr_ioqs;
}

struct nvmefs_ioq *nvmefs_ctrl_io_queue(struct nvmefs_ctrl *ctrl, unsigned int idx)
{
	return idx < ctrl->nr_ioqs ? ctrl->ioqs[idx] : NULL;
}
