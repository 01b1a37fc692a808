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
 *
 * This file takes an I/O in (the gate an outage sets, and the record);
 * io_cmd.c sends and completes its commands, io_retry.c judges their
 * error statuses, io_poll.c is the owner's poll loop, io_sync.c the
 * synchronous forms and io_pool.c the buffer pool.
 */
#include <errno.h>
#include <stddef.h>

#include "io_cmd.h"
#include "io_forward.h"
#include "io_priv.h"
#include "ioq.h"
#include "namespaces.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"

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

static bool ioq_deleted(const struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_ctrl_status st;

	nvmefs_ctrl_status(ctrl, &st);
	return st.state == NVMEFS_CTRL_DELETED;
}

/* What a new I/O to @ns (NULL: not active) meets while the controller's
 * failure is @failed (0: live).  nvmefs_io_submit() acts on it and
 * nvmefs_ioq_ns_held() tells it: one rule for both. */
enum io_gate { GATE_SEND, GATE_HOLD, GATE_GIVE_BACK, GATE_FAIL, GATE_NO_NS, GATE_NS_GONE,
	       GATE_GIVEN_UP };

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
	if (failed && atomic_load_explicit(&ns->given_up, memory_order_relaxed))
		return GATE_GIVEN_UP;
	/* Held through the outage, and sent once reconnected. */
	return failed ? GATE_HOLD : GATE_SEND;
}

int nvmefs_io_submit(struct nvmefs_ioq *ioq, enum io_op op, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, void *buf, unsigned int flags, nvmefs_io_cb cb, void *arg)
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
	case GATE_GIVEN_UP:
		return nvmefs_io_given_up_error(ctrl, nsid);
	case GATE_HOLD:
		if (flags & NVMEFS_MPQ_NO_HOLD)
			return NVMEFS_MPQ_HELD;
		break;
	case GATE_SEND:
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
	if (nvmefs_io_writes(io))
		flush_order_write_start(&ioq->order, &io->order);
	if (gate == GATE_HOLD) {
		/* Held through the outage, and sent once reconnected.  Until the
		 * controller is live again the queue is its thread's, which
		 * connects it: not a slot of it is touched here. */
		ioq->nr_ios_inflight++;
		nvmefs_io_pending_push(ioq, io);
		return 0;
	}
	ret = nvmefs_io_pump(ioq, io);
	if (ret == -EAGAIN && ioq->q.failed && (host = atomic_load(&ioq->host))) {
		/* No connection of our own: another queue's owner sends it. */
		ioq->nr_ios_inflight++;
		nvmefs_io_forward(host, io);
		return 0;
	}
	if (ret < 0 && !io->started) {
		if (nvmefs_io_writes(io))
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
	return nvmefs_io_submit(ioq, IO_READ, nsid, slba, nlb, buf, 0, cb, arg);
}

int nvmefs_ioq_write(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb,
		     const void *buf, nvmefs_io_cb cb, void *arg)
{
	return nvmefs_io_submit(ioq, IO_WRITE, nsid, slba, nlb, (void *)buf, 0, cb, arg);
}

int nvmefs_ioq_flush(struct nvmefs_ioq *ioq, uint32_t nsid, nvmefs_io_cb cb, void *arg)
{
	return nvmefs_io_submit(ioq, IO_FLUSH, nsid, 0, 0, NULL, 0, cb, arg);
}

int nvmefs_ioq_write_zeroes(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			    nvmefs_io_cb cb, void *arg)
{
	return nvmefs_io_submit(ioq, IO_WRITE_ZEROES, nsid, slba, nlb, NULL, 0, cb, arg);
}

int nvmefs_ioq_punch(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
		     nvmefs_io_cb cb, void *arg)
{
	return nvmefs_io_submit(ioq, IO_PUNCH, nsid, slba, nlb, NULL, 0, cb, arg);
}

int nvmefs_ioq_deallocate(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			  nvmefs_io_cb cb, void *arg)
{
	return nvmefs_io_submit(ioq, IO_DEALLOCATE, nsid, slba, nlb, NULL, 0, cb, arg);
}

bool nvmefs_ioq_can_take(const struct nvmefs_ioq *ioq)
{
	return ioq->free_ios && !ioq->pending_head;
}

int nvmefs_ioq_ns_held(const struct nvmefs_ioq *ioq, uint32_t nsid)
{
	const struct nvmefs_ctrl *ctrl = ioq->ctrl;
	int failed = atomic_load(&((struct nvmefs_ctrl *)ctrl)->failed);

	/* Asked of every request a mount reads: while live, one load and no
	 * look-up of the namespace (a live controller holds nothing). */
	return failed && io_gate(ctrl, nvmefs_io_find_ns(ctrl, nsid), failed) == GATE_HOLD;
}
