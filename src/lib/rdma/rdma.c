/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/RDMA transport's data path: posting sends and receives,
 * per-I/O keys, completions, and waiting for them (arm and poll).  The
 * queues are set up and torn down by rdma_cm.c; how a command's data
 * travels is rdma_sgl.c's.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_priv.h"
#include "../base/error.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

/* Receive work requests carry this bit in wr_id, the others the request's
 * address (user space pointers never have it) and their kind in the low
 * bits (requests are 8-byte aligned): flushed completions do not say which
 * kind they were. */
#define WR_ID_RECV (1ull << 63)
#define WR_ID_KIND_MASK 3ull
enum { WR_SEND, WR_BIND, WR_LOCAL_INV };

/* Acknowledging CQ events takes a lock in libibverbs: batch it. */
#define CQ_EVENTS_ACK_BATCH 16

int nvmefs_rdma_post_recv(struct rdma_queue *rq, uint16_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&rq->rsps[idx],
		.length = sizeof(struct nvmefs_cqe),
		.lkey = rq->rsp_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_ID_RECV | idx, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(rq->id->qp, &wr, &bad);
	if (ret)
		return -ret;
	rq->posted_recvs++;
	return 0;
}

/* Chain a bind of @s's window over exactly @req's bytes, with the rights
 * its direction needs, before its send: the key goes in the command. */
static uint32_t bind_window(struct rdma_queue *rq, struct rdma_send *s, struct nvmefs_req *req)
{
	uint32_t rkey = ibv_inc_rkey(s->mw->rkey);

	s->bind_wr = (struct ibv_send_wr){
		.wr_id = (uintptr_t)req | WR_BIND,
		.next = &s->wr,
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.mw = s->mw,
			.rkey = rkey,
			.bind_info = {
				.mr = req->mr ? req->mr->tp : rq->data_mr,
				.addr = (uintptr_t)req->data,
				.length = req->len,
				.mw_access_flags = req->dir == NVMEFS_DIR_FROM_CTRL ?
					IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ,
			},
		},
	};
	req->rkey = rkey;
	req->wait |= NVMEFS_REQ_WAIT_KEY;
	return rkey;
}

static void post_later(struct rdma_queue *rq, struct ibv_send_wr *first, struct ibv_send_wr *last)
{
	if (rq->post_tail)
		rq->post_tail->next = first;
	else
		rq->post_head = first;
	rq->post_tail = last;
}

int nvmefs_rdma_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct rdma_queue *rq = q->tp;
	struct rdma_send *s = &rq->sends[req->slot];
	uint32_t inline_size = q->qid ? q->ctrl->inline_size : 0;
	struct ibv_send_wr *first = &s->wr;
	struct nvmefs_rdma_sge data;
	uint32_t io_rkey;
	int ret;

	if (req->len && !req->mr) {
		uint8_t *p = req->data;

		if (!rq->data || p < rq->data || p + req->len > rq->data + rq->data_len)
			return nvmefs_error(-EINVAL, "queue %u: data of a command is outside the queue's "
					    "registered buffers", q->qid);
	}
	s->sge[0] = (struct ibv_sge){
		.addr = (uintptr_t)req->cmd,
		.length = sizeof(union nvmefs_cmd),
		.lkey = rq->capsule_mr->lkey,
	};
	s->wr = (struct ibv_send_wr){
		.wr_id = (uintptr_t)req | WR_SEND,
		.sg_list = s->sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	s->bound = rq->windows && nvmefs_rdma_keyed(req, inline_size);
	if (s->bound) {
		io_rkey = bind_window(rq, s, req);
		first = &s->bind_wr;
	}
	ret = nvmefs_rdma_map_data(req, inline_size, rq->data_mr ? rq->data_mr->lkey : 0,
				   rq->data_mr ? rq->data_mr->rkey : 0,
				   first == &s->wr ? NULL : &io_rkey, &data);
	if (ret < 0)
		return ret;
	if (ret)
		s->sge[1] = (struct ibv_sge){
			.addr = data.addr,
			.length = data.length,
			.lkey = data.lkey,
		};
	s->wr.num_sge += ret;
	post_later(rq, first, &s->wr);
	return 0;
}

/* The target answered without invalidating the request's key. */
int nvmefs_rdma_invalidate(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct rdma_queue *rq = q->tp;
	struct rdma_send *s = &rq->sends[req->slot];

	/* A stopping queue ends the request itself, its windows unreachable. */
	if (rq->stopping)
		return 0;
	s->inv_wr = (struct ibv_send_wr){
		.wr_id = (uintptr_t)req | WR_LOCAL_INV,
		.opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = req->rkey,
	};
	post_later(rq, &s->inv_wr, &s->inv_wr);
	return 0;
}

/* Posts the sends submitted since the last post, in one call.  A failed
 * queue posts nothing: its requests are ended or sent again elsewhere. */
static int kick(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;
	struct ibv_send_wr *bad = NULL, *wr;
	int ret;

	if (!rq->post_head)
		return 0;
	if (q->failed) {
		rq->post_head = rq->post_tail = NULL;
		return q->failed;
	}
	ret = ibv_post_send(rq->id->qp, rq->post_head, &bad);
	/* What went before a refused one is the device's now.  rxe names a
	 * window by the key it has, so each bound key becomes the window's. */
	for (wr = rq->post_head; wr && wr != bad; wr = wr->next) {
		if (wr->send_flags & IBV_SEND_SIGNALED)
			rq->posted_sends++;
		if (wr->opcode == IBV_WR_BIND_MW)
			wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
	}
	rq->post_head = rq->post_tail = NULL;
	if (ret)
		return nvmefs_error(-ret, "queue %u: posting sends failed: %s", q->qid, strerror(ret));
	return 0;
}

static const char *wc_kind_name(bool recv, unsigned int kind)
{
	if (recv)
		return "receive";
	return kind == WR_BIND ? "memory window bind" : kind == WR_LOCAL_INV ? "local invalidate" : "send";
}

static int handle_wc(struct nvmefs_queue *q, const struct ibv_wc *wc)
{
	struct rdma_queue *rq = q->tp;
	bool recv = wc->wr_id & WR_ID_RECV;
	unsigned int kind = (unsigned int)(wc->wr_id & WR_ID_KIND_MASK);
	struct nvmefs_req *req = (struct nvmefs_req *)(uintptr_t)(wc->wr_id & ~WR_ID_KIND_MASK);
	int ret;

	if (recv) {
		rq->posted_recvs--;
	} else if (kind != WR_BIND) {
		/* Binds are unsignaled: they complete only when flushed. */
		rq->posted_sends--;
		/* Even a flushed send is done with its capsule.  Work requests
		 * execute in order, and a failed one fails those after it. */
		if (kind == WR_SEND) {
			if (wc->status == IBV_WC_SUCCESS && rq->sends[req->slot].bound)
				nvmefs_queue_key_bound(q);
			nvmefs_queue_send_done(q, req);
		} else if (wc->status == IBV_WC_SUCCESS) {
			nvmefs_queue_key_done(q, req);
		}
	}
	if (wc->status != IBV_WC_SUCCESS) {
		if (q->failed || rq->stopping)
			return 0;
		return nvmefs_error(-ECONNRESET,
				    "queue %u to %s failed: RDMA %s completion: %s: the connection is "
				    "broken", q->qid, where(q), wc_kind_name(recv, kind),
				    ibv_wc_status_str(wc->status));
	}
	if (!recv)
		return 0;
	uint16_t idx = (uint16_t)(wc->wr_id & ~WR_ID_RECV);
	struct nvmefs_cqe cqe;

	if (wc->byte_len < sizeof(cqe))
		return nvmefs_error(-EPROTO, "queue %u: the target sent a %u-byte response, shorter "
				    "than a completion entry", q->qid, wc->byte_len);
	memcpy(&cqe, &rq->rsps[idx], sizeof(cqe));
	if (!rq->stopping) {
		ret = nvmefs_rdma_post_recv(rq, idx);
		if (ret < 0)
			return nvmefs_error(ret, "queue %u: re-posting a receive failed: %s", q->qid,
					    strerror(-ret));
	}
	ret = nvmefs_queue_response_inv(q, &cqe, (wc->wc_flags & rq->with_inv_flags) ?
					&wc->invalidated_rkey : NULL);
	return rq->stopping ? 0 : ret;
}

/* Takes every completion the CQ has; returns their number, or the first
 * error after all of them were handled (each one settles a work request). */
int nvmefs_rdma_drain(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;
	struct ibv_wc wc[16];
	int n, i, total = 0, ret, err = 0;

	while ((n = ibv_poll_cq(rq->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			ret = handle_wc(q, &wc[i]);
			if (ret < 0 && !err)
				err = ret;
		}
		total += n;
	}
	if (err)
		return err;
	if (n < 0)
		return nvmefs_error(-EIO, "queue %u: polling the completion queue failed", q->qid);
	return total;
}

static int cm_event_while_running(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	/* Nothing there (the channel does not block once connected). */
	if (rdma_get_cm_event(rq->ech, &ev))
		return 0;
	type = ev->event;
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		rq->connected = false;
		return nvmefs_error(-ECONNRESET, "the target %s closed queue %u: it went away or "
				    "dropped this controller (keep-alive timeout?)",
				    where(q), q->qid);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return nvmefs_error(-ENODEV, "the RDMA device of queue %u went away", q->qid);
	default:
		return 1;
	}
}

/* Consumes the channel's events so its fd goes quiet until the next one. */
void nvmefs_rdma_consume_cq_events(struct rdma_queue *rq)
{
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(rq->cch, &cq, &ctx) == 0) {
		if (++rq->unacked_events >= CQ_EVENTS_ACK_BATCH) {
			ibv_ack_cq_events(rq->cq, rq->unacked_events);
			rq->unacked_events = 0;
		}
	}
}

/* Takes the CQ's completions, then posts what their callbacks submitted.
 * Returns the completions or -errno. */
static int drain_and_kick(struct nvmefs_queue *q)
{
	int n = nvmefs_rdma_drain(q), ret;

	if (n < 0)
		return n;
	ret = kick(q);
	return ret < 0 ? ret : n;
}

int nvmefs_rdma_process(struct nvmefs_queue *q, int timeout_ms)
{
	struct rdma_queue *rq = q->tp;
	struct pollfd pfd[2] = {
		{ .fd = rq->cch->fd, .events = POLLIN },
		{ .fd = rq->ech->fd, .events = POLLIN },
	};
	int n, ret;

	/* What was submitted since the last call goes out before we wait,
	 * and what the callbacks submit while draining goes out after. */
	ret = kick(q);
	if (ret < 0)
		return ret;
	n = drain_and_kick(q);
	if (n != 0 || timeout_ms == 0)
		return n;
	/* Sleep in the kernel until the CQ has something: an idle queue
	 * costs no CPU, and the target beside us in a small VM gets it. */
	if (ibv_req_notify_cq(rq->cq, 0))
		return nvmefs_error(-EIO, "queue %u: arming the completion queue failed", q->qid);
	n = drain_and_kick(q);
	if (n != 0)
		return n;
	do
		ret = poll(pfd, 2, timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return nvmefs_error(-errno, "queue %u: waiting for completions failed: %s", q->qid,
				    strerror(errno));
	if (ret == 0)
		return 0;
	if (pfd[1].revents) {
		ret = cm_event_while_running(q);
		if (ret < 0)
			return ret;
	}
	if (pfd[0].revents)
		nvmefs_rdma_consume_cq_events(rq);
	return drain_and_kick(q);
}

int nvmefs_rdma_queue_fd(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;

	return rq->cch->fd;
}

int nvmefs_rdma_queue_event_fd(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;

	return rq->ech->fd;
}

int nvmefs_rdma_queue_check(struct nvmefs_queue *q)
{
	int ret;

	/* Every event waiting, so the descriptor goes quiet. */
	do
		ret = cm_event_while_running(q);
	while (ret == 1);
	return ret;
}

int nvmefs_rdma_queue_arm(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;
	int ret;

	ret = kick(q);
	if (ret < 0)
		return ret;
	nvmefs_rdma_consume_cq_events(rq);
	if (ibv_req_notify_cq(rq->cq, 0))
		return nvmefs_error(-EIO, "queue %u: arming the completion queue failed", q->qid);
	/* What completed before the arm raises no event: take it now. */
	return drain_and_kick(q);
}

