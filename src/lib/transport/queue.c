/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Request slots and command ids of one queue, transport-neutral.
 *
 * A command id is the slot index in the low bits and a generation in the
 * high bits, so a response that names a slot's previous command (stale)
 * or no command at all is caught instead of completing the wrong request.
 * A request ends only after both its send completion and its response, as
 * Linux nvme-rdma does: until the send completes the transport (an RDMA
 * device, TCP's send queue) may still read the capsule, and the slot must
 * not be refilled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"
#include "../types/transport_ops.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../types/ctrl_types.h"

#define NO_SLOT 0xffffu
#define SQ_HEAD_UNTRACKED 0xffffu

static uint8_t bits_for(unsigned int n)
{
	uint8_t bits = 0;

	while ((1u << bits) < n)
		bits++;
	return bits;
}

int nvmefs_queue_init(struct nvmefs_queue *q, struct nvmefs_ctrl *ctrl,
		      const struct nvmefs_queue_params *params)
{
	uint16_t i;

	if (params->size < 2)
		return nvmefs_error(-EINVAL, "queue %u: a queue needs at least 2 entries, not %u",
				    params->qid, params->size);
	memset(q, 0, sizeof(*q));
	q->ctrl = ctrl;
	q->qid = params->qid;
	q->size = params->size;
	/* A full SQ holds size - 1 entries: one slot per entry that can be in flight. */
	q->nr_reqs = (uint16_t)(params->size - 1);
	q->cid_slot_bits = bits_for(q->nr_reqs);
	q->reqs = calloc(q->nr_reqs, sizeof(*q->reqs));
	if (!q->reqs)
		return nvmefs_error(-ENOMEM, "queue %u: out of memory for %u request slots",
				    q->qid, q->nr_reqs);
	for (i = 0; i < q->nr_reqs; i++) {
		q->reqs[i].q = q;
		q->reqs[i].slot = i;
		q->reqs[i].next_free = i + 1 < q->nr_reqs ? (uint16_t)(i + 1) : (uint16_t)NO_SLOT;
	}
	q->free_head = 0;
	return 0;
}

void nvmefs_queue_fini(struct nvmefs_queue *q)
{
	free(q->reqs);
	q->reqs = NULL;
	q->nr_reqs = 0;
}

bool nvmefs_req_available(const struct nvmefs_queue *q)
{
	return q->free_head != NO_SLOT;
}

struct nvmefs_req *nvmefs_req_get(struct nvmefs_queue *q)
{
	struct nvmefs_req *req;

	if (q->free_head == NO_SLOT)
		return NULL;
	req = &q->reqs[q->free_head];
	q->free_head = req->next_free;
	req->next_free = NO_SLOT;
	req->data = NULL;
	req->mr = NULL;
	req->deadline_ms = 0;
	req->len = 0;
	req->dir = NVMEFS_DIR_NONE;
	req->error = 0;
	req->aborted = false;
	req->done = NULL;
	req->done_arg = NULL;
	memset(&req->cqe, 0, sizeof(req->cqe));
	return req;
}

void nvmefs_req_put(struct nvmefs_req *req)
{
	struct nvmefs_queue *q = req->q;

	req->next_free = q->free_head;
	q->free_head = req->slot;
}

static void req_finish(struct nvmefs_req *req)
{
	if (req->wait || !req->inflight)
		return;
	req->inflight = false;
	req->q->nr_inflight--;
	if (req->done)
		req->done(req);
}

int nvmefs_req_submit(struct nvmefs_req *req)
{
	struct nvmefs_queue *q = req->q;
	int ret;

	if (q->failed)
		return q->failed;
	/* The controller reports how far it has consumed the SQ: never
	 * let our tail catch up with its head.  With nothing in flight it has
	 * consumed everything, whatever stale head it reported last. */
	if (q->sq_head != SQ_HEAD_UNTRACKED && q->nr_inflight &&
	    (uint16_t)((q->sq_tail + 1) % q->size) == q->sq_head)
		return -EAGAIN;
	q->cid_gen++;
	req->cid = (uint16_t)(req->slot |
			      (q->cid_gen << q->cid_slot_bits));
	req->cmd->sqe.cid = nvmefs_cpu_to_le16(req->cid);
	req->wait = NVMEFS_REQ_WAIT_SEND | NVMEFS_REQ_WAIT_RESP;
	req->inflight = true;
	if (q->timeout_ms)
		req->deadline_ms = nvmefs_now_ms() + q->timeout_ms;
	q->nr_inflight++;
	ret = q->ctrl->ops->submit(q, req);
	if (ret < 0) {
		req->wait = 0;
		req->inflight = false;
		q->nr_inflight--;
		return ret;
	}
	q->sq_tail = (uint16_t)((q->sq_tail + 1) % q->size);
	return 0;
}

void nvmefs_queue_send_done(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	(void)q;
	req->wait &= (uint8_t)~NVMEFS_REQ_WAIT_SEND;
	req_finish(req);
}

/* The controller's queues run on different threads: one add each. */
static void count_key(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

void nvmefs_queue_key_bound(struct nvmefs_queue *q)
{
	count_key(&q->ctrl->rkeys.bound);
}

int nvmefs_queue_response_inv(struct nvmefs_queue *q, const struct nvmefs_cqe *cqe,
			      const uint32_t *invalidated)
{
	uint16_t cid = nvmefs_cqe_cid(cqe);
	uint16_t slot = (uint16_t)(cid & ((1u << q->cid_slot_bits) - 1));
	uint16_t sq_head = nvmefs_le16_to_cpu(cqe->sq_head);
	struct nvmefs_req *req;
	int ret;

	if (slot >= q->nr_reqs || !q->reqs[slot].inflight ||
	    q->reqs[slot].cid != cid ||
	    !(q->reqs[slot].wait & NVMEFS_REQ_WAIT_RESP)) {
		nvmefs_set_error("queue %u: the controller completed command id %#x, which is not in flight: "
				 "the target is confused or the connection corrupt",
				 q->qid, cid);
		nvmefs_queue_fail(q, -EPROTO);
		return -EPROTO;
	}
	req = &q->reqs[slot];
	/* Linux nvme-rdma treats this as a broken target too: a key it
	 * invalidated may be another request's, now refused mid-transfer. */
	if (invalidated && (!(req->wait & NVMEFS_REQ_WAIT_KEY) || *invalidated != req->rkey)) {
		nvmefs_set_error("queue %u: the target invalidated remote key %#x with its response "
				 "to command id %#x, which does not own it: the target is confused",
				 q->qid, *invalidated, cid);
		nvmefs_queue_fail(q, -EPROTO);
		return -EPROTO;
	}
	if (sq_head == SQ_HEAD_UNTRACKED || sq_head < q->size)
		q->sq_head = sq_head;
	req->cqe = *cqe;
	req->wait &= (uint8_t)~NVMEFS_REQ_WAIT_RESP;
	if (invalidated) {
		req->wait &= (uint8_t)~NVMEFS_REQ_WAIT_KEY;
		count_key(&q->ctrl->rkeys.invalidated_by_target);
	}
	if (req->wait & NVMEFS_REQ_WAIT_KEY) {
		ret = q->ctrl->ops->invalidate(q, req);
		if (ret < 0) {
			nvmefs_queue_fail(q, ret);
			return ret;
		}
		return 0;
	}
	req_finish(req);
	return 0;
}

int nvmefs_queue_response(struct nvmefs_queue *q, const struct nvmefs_cqe *cqe)
{
	return nvmefs_queue_response_inv(q, cqe, NULL);
}

void nvmefs_queue_key_done(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	count_key(&q->ctrl->rkeys.invalidated_locally);
	req->wait &= (uint8_t)~NVMEFS_REQ_WAIT_KEY;
	req_finish(req);
}

void nvmefs_queue_fail(struct nvmefs_queue *q, int err)
{
	if (!q->failed)
		q->failed = err;
}

void nvmefs_queue_stop(struct nvmefs_queue *q, int err)
{
	uint16_t i;

	nvmefs_queue_fail(q, err);
	/* What completes while the transport stops ends with the queue's error
	 * too: a confused target's last answers are not to be trusted. */
	for (i = 0; i < q->nr_reqs; i++) {
		if (q->reqs[i].inflight) {
			q->reqs[i].error = q->failed;
			q->reqs[i].aborted = true;
		}
	}
	/* Only once the target can no longer reach a request's buffers may its
	 * owner have them back. */
	if (!q->stopped && q->tp)
		q->ctrl->ops->queue_stop(q);
	q->stopped = true;
	for (i = 0; i < q->nr_reqs; i++) {
		struct nvmefs_req *req = &q->reqs[i];

		if (!req->inflight)
			continue;
		req->error = q->failed;
		req->aborted = true;
		req->wait = 0;
		req_finish(req);
	}
}
