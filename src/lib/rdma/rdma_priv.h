/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the RDMA transport's files share beyond its operations table: the
 * controller's and queue's verbs state, which rdma_cm.c sets up and tears
 * down and rdma.c, the data path, works with.
 */
#ifndef NVMEFS_RDMA_PRIV_H
#define NVMEFS_RDMA_PRIV_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_sgl.h"
#include "../state/ctrl_state.h"
#include "../types/transport_ops.h"

struct rdma_ctrl {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	/* Per-I/O keys: regions have local rights only, each transfer goes
	 * through its slot's memory window. */
	bool windows;
	/* How the device flags a Send with Invalidate in a receive. */
	unsigned int with_inv_flags;
};

/* A request slot's work requests, kept until they are posted. */
struct rdma_send {
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
	/* Per-I/O keys: the bind chained before the send, the local
	 * invalidate, and the window with the key it has now. */
	struct ibv_send_wr bind_wr;
	struct ibv_send_wr inv_wr;
	struct ibv_mw *mw;
	/* The send is chained after a bind: binds are unsignaled, so the
	 * send's success is the bind's (nvmefs_queue_key_bound()). */
	bool bound;
};

struct rdma_queue {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	bool qp_created;
	bool connected;
	/* Work requests handed to the device and not completed yet: after a
	 * failure, the buffers are the target's until both reach 0. */
	unsigned int posted_sends;
	unsigned int posted_recvs;
	/* queue_stop(): receives are not re-posted. */
	bool stopping;
	/* The controller's rdma_ctrl.windows and with_inv_flags, at hand on
	 * the I/O path. */
	bool windows;
	unsigned int with_inv_flags;
	unsigned int unacked_events;
	union nvmefs_cmd *capsules;
	struct nvmefs_cqe *rsps;
	uint8_t *data;
	size_t data_len;
	uint16_t nr_rsps;
	struct ibv_mr *capsule_mr;
	struct ibv_mr *rsp_mr;
	struct ibv_mr *data_mr;
	/*
	 * Sends submitted and not yet posted.  Soft-RoCE rings its doorbell
	 * with a system call per ibv_post_send(): the sends that completion
	 * callbacks submit while one poll drains the CQ go out in one post.
	 */
	struct rdma_send *sends;
	struct ibv_send_wr *post_head, *post_tail;
};

static inline const char *where(const struct nvmefs_queue *q)
{
	return nvmefs_ctrl_where(q->ctrl);
}

/* The data path (rdma.c), for the operations table and queue set-up and
 * teardown in rdma_cm.c. */
int nvmefs_rdma_post_recv(struct rdma_queue *rq, uint16_t idx);
int nvmefs_rdma_drain(struct nvmefs_queue *q);
void nvmefs_rdma_consume_cq_events(struct rdma_queue *rq);
int nvmefs_rdma_submit(struct nvmefs_queue *q, struct nvmefs_req *req);
int nvmefs_rdma_invalidate(struct nvmefs_queue *q, struct nvmefs_req *req);
int nvmefs_rdma_process(struct nvmefs_queue *q, int timeout_ms);
int nvmefs_rdma_queue_fd(struct nvmefs_queue *q);
int nvmefs_rdma_queue_event_fd(struct nvmefs_queue *q);
int nvmefs_rdma_queue_check(struct nvmefs_queue *q);
int nvmefs_rdma_queue_arm(struct nvmefs_queue *q);

/* The devices (rdma_device.c), for rdma_cm.c. */
int nvmefs_rdma_no_device_error(void);
int nvmefs_rdma_check_devices(void);
int nvmefs_rdma_list_devices(void);
void nvmefs_rdma_context_use(struct ibv_context *verbs);
void nvmefs_rdma_context_unuse(struct ibv_context *verbs);

#endif /* NVMEFS_RDMA_PRIV_H */
