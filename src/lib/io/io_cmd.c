/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An I/O's commands: split into commands as the controller's limits allow,
 * sent as request slots free up (the queue's pending list), completed, and
 * sent again whole when an outage or a retryable status ends them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "io_cmd.h"
#include "io_forward.h"
#include "io_retry.h"
#include "ioq.h"
#include "namespaces.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../types/ctrl_types.h"
#include "../transport/queue.h"

bool nvmefs_io_writes(const struct nvmefs_io *io)
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

	if (nvmefs_io_writes(io)) {
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

static void cmd_done(struct nvmefs_req *req)
{
	struct nvmefs_io *io = req->done_arg;
	struct nvmefs_ioq *ioq = (struct nvmefs_ioq *)req->q;
	uint16_t raw = req->error ? 0 : nvmefs_cqe_status(&req->cqe);
	int status = req->error ? req->error : raw & 0x7ff;
	bool aborted = req->aborted;

	nvmefs_req_put(req);
	if (status > 0 && (status >> 8) == NVME_SCT_PATH && nvmefs_io_path_error(ioq, io, raw))
		status = -ENOLINK;
	if (aborted || (status > 0 && !io->status && nvmefs_io_retryable(ioq, io, raw))) {
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
int nvmefs_io_pump(struct nvmefs_ioq *ioq, struct nvmefs_io *io)
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

static bool ns_gone(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(ctrl, nsid);

	return !ns || atomic_load_explicit(&ns->gone, memory_order_relaxed);
}

static bool ns_given_up(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(ctrl, nsid);

	return ns && atomic_load(&((struct nvmefs_ns_cache *)ns)->given_up);
}

int nvmefs_io_given_up_error(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	return nvmefs_error(-EIO, "the controller failed (%s) and namespace %u's user gave up "
			    "waiting for it to reconnect", ctrl->fail_msg, nsid);
}

bool nvmefs_io_pending_given_up(const struct nvmefs_ioq *ioq)
{
	for (const struct nvmefs_io *io = ioq->pending_head; io; io = io->next)
		if (!io->outstanding && ns_given_up(ioq->ctrl, io->nsid))
			return true;
	return false;
}

void nvmefs_io_fail_given_up(struct nvmefs_ioq *ioq)
{
	struct nvmefs_io *io, *prev;

	/* From the head again after each: its callback, or the flushes it
	 * releases, may change the list. */
again:
	for (io = ioq->pending_head, prev = NULL; io; prev = io, io = io->next) {
		if (io->outstanding || !ns_given_up(ioq->ctrl, io->nsid))
			continue;
		if (prev)
			prev->next = io->next;
		else
			ioq->pending_head = io->next;
		if (ioq->pending_tail == io)
			ioq->pending_tail = prev;
		io->next = NULL;
		io->pending = false;
		if (!io->status)
			io->status = nvmefs_io_given_up_error(ioq->ctrl, io->nsid);
		io->nlb_left = 0;
		io_finish(ioq, io);
		goto again;
	}
}

/* The time before which the oldest I/O waiting for slots may not go (a
 * command retry delay), or 0. */
int64_t nvmefs_io_pending_not_before(const struct nvmefs_ioq *ioq)
{
	return ioq->pending_head ? ioq->pending_head->not_before_ms : 0;
}

/* Whether nvmefs_io_pump_pending() can send something now: the oldest waiting I/O is
 * past its retry delay and a slot is free.  Otherwise a completion or the
 * delay's end is what to wait for, not a poll. */
bool nvmefs_io_pending_can_go(struct nvmefs_ioq *ioq)
{
	int64_t due = nvmefs_io_pending_not_before(ioq);

	return ioq->pending_head && (!due || nvmefs_now_ms() >= due) &&
		nvmefs_req_available(&ioq->q);
}

/* Sends more of the I/Os that waited for slots, oldest first. */
void nvmefs_io_pump_pending(struct nvmefs_ioq *ioq)
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
		} else if (nvmefs_io_pump(ioq, io) < 0 && !io->started) {
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
