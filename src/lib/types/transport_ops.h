/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a transport serves and what it must do: a queue, its request slots,
 * and the operations table (struct nvmefs_transport_ops) through which the
 * layers above reach it.
 *
 * Layering, as in Linux drivers/nvme/host and SPDK: a transport (rdma*.c,
 * tcp*.c) only moves capsules and data for a queue; the request slots and
 * command ids (queue.c), Connect, properties and discovery (fabrics.c) and
 * the controller's lifecycle (ctrl.c) know nothing of any one transport.
 * Unit tests put a scripted transport under the same code.
 */
#ifndef NVMEFS_TRANSPORT_OPS_H
#define NVMEFS_TRANSPORT_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "nvmefs/wire.h"

struct nvmefs_ctrl;
struct nvmefs_mr;
struct nvmefs_queue;
struct nvmefs_req;

/* Which way a request's data moves. */
enum nvmefs_dir {
	NVMEFS_DIR_NONE,
	NVMEFS_DIR_TO_CTRL,	/* host memory -> controller (writes, Connect data) */
	NVMEFS_DIR_FROM_CTRL,	/* controller -> host memory (reads, Identify) */
};

/* What a request still waits for before its slot may be reused: the
 * transport owns the capsule until its send completes, whatever the
 * response says. */
enum {
	NVMEFS_REQ_WAIT_SEND = 1 << 0,
	NVMEFS_REQ_WAIT_RESP = 1 << 1,
	/* The target may still hold the request's own remote key (req->rkey):
	 * until it invalidates it with its response, or we do, the data
	 * buffer is within its reach. */
	NVMEFS_REQ_WAIT_KEY = 1 << 2,
};

struct nvmefs_req {
	struct nvmefs_queue *q;
	/* The command, inside the transport's registered capsule buffer. */
	union nvmefs_cmd *cmd;
	/* Payload: in @mr, or (mr NULL) in this slot's registered data_slot. */
	void *data;
	struct nvmefs_mr *mr;
	int64_t deadline_ms;
	uint32_t len;
	uint8_t dir;		/* enum nvmefs_dir */
	uint8_t wait;		/* NVMEFS_REQ_WAIT_* still outstanding */
	bool inflight;
	/* Ended by nvmefs_queue_stop(), not by the controller: may be sent again. */
	bool aborted;
	uint16_t cid;
	uint16_t slot;
	uint16_t next_free;
	/* The key bound to this request's data alone (NVMEFS_REQ_WAIT_KEY). */
	uint32_t rkey;
	struct nvmefs_cqe cqe;
	/* 0, or the -errno that ended the request without a response. */
	int error;
	void (*done)(struct nvmefs_req *req);
	void *done_arg;
	/* This slot's registered data area and its size. */
	void *data_slot;
	uint32_t data_slot_size;
};

/* What a transport needs to create and connect one queue. */
struct nvmefs_queue_params {
	uint16_t qid;
	uint16_t size;		/* SQ entries; at most size - 1 commands in flight */
	uint16_t cntlid;	/* from the admin Connect; 0 for the admin queue */
	uint32_t data_slot_size;	/* registered data bytes per request slot */
};

struct nvmefs_queue {
	struct nvmefs_ctrl *ctrl;
	void *tp;			/* the transport's per-queue state */
	uint16_t qid;
	uint16_t size;
	uint16_t nr_reqs;
	uint16_t nr_inflight;
	uint16_t free_head;
	uint16_t sq_tail;		/* SQ slots consumed by our submissions */
	uint16_t sq_head;		/* last SQ head the controller reported */
	uint8_t cid_slot_bits;
	uint16_t cid_gen;
	/* 0 while usable; then the -errno that made it unusable. */
	int failed;
	/* queue_stop() ran: nothing of the transport's is in flight any more. */
	bool stopped;
	/* Requests not completed this long after submission time out; 0: never. */
	uint32_t timeout_ms;
	struct nvmefs_req *reqs;
};

struct nvmefs_transport_ops {
	/* What the transport is, for nvmefs_transport_info(): its name, the
	 * service ids of its I/O and discovery controllers when none is
	 * given, the NVMEFS_OPT_* connect options it takes, and whether
	 * registering memory pins it. */
	const char *name;
	const char *trsvcid;
	const char *discovery_trsvcid;
	unsigned int allowed_opts;
	bool pins_memory;
	/*
	 * Connect queue @q at the transport level and allocate and register
	 * its buffers once: capsules, responses, and nr_reqs data slots of
	 * params->data_slot_size.  Sets req->cmd, req->data_slot for every
	 * slot.  On failure sets the error message and returns -errno.
	 */
	int (*queue_create)(struct nvmefs_queue *q,
			    const struct nvmefs_queue_params *params);
	/* Disconnect and free everything queue_create made. */
	void (*queue_destroy)(struct nvmefs_queue *q);
	/*
	 * Describe req->data to the target in req->cmd (SGL) and send the
	 * capsule.  The transport reports the send's completion with
	 * nvmefs_queue_send_done() and the response with
	 * nvmefs_queue_response().
	 */
	int (*submit)(struct nvmefs_queue *q, struct nvmefs_req *req);
	/*
	 * Stop @q for good, after a failure: what was submitted but not yet
	 * handed to the device is never sent, the connection is torn down, and
	 * every work request already handed over has completed (flushed) or
	 * been destroyed with the queue pair.  On return the target can no
	 * longer read or write any buffer of @q's requests.  Send completions
	 * and responses that arrive meanwhile are reported as usual.
	 */
	void (*queue_stop)(struct nvmefs_queue *q);
	/*
	 * Look, without waiting, for connection events (the target closed the
	 * queue, the device went away): -errno with a message if the queue is
	 * lost, else 0.  Cheap enough for every 100 ms, not for every poll.
	 */
	int (*queue_check)(struct nvmefs_queue *q);
	/*
	 * Process completions, waiting up to @timeout_ms (0: don't wait) for
	 * the first one.  Returns how many were processed (0 on timeout), or
	 * -errno when the queue failed.
	 */
	int (*process)(struct nvmefs_queue *q, int timeout_ms);
	/* Release what the transport keeps per controller (protection domain). */
	void (*ctrl_release)(struct nvmefs_ctrl *ctrl);
	/* Register mr->addr/len for local and remote access; set lkey, rkey, tp. */
	int (*mr_reg)(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr);
	void (*mr_dereg)(struct nvmefs_mr *mr);
	/*
	 * Invalidate req->rkey locally: the target answered without doing so.
	 * The transport calls nvmefs_queue_key_done() once the key is dead.
	 * Only transports that set NVMEFS_REQ_WAIT_KEY need it.
	 */
	int (*invalidate)(struct nvmefs_queue *q, struct nvmefs_req *req);
	/* A descriptor readable when the queue has completions, once armed. */
	int (*queue_fd)(struct nvmefs_queue *q);
	/* A descriptor readable when queue_check() has something to say. */
	int (*queue_event_fd)(struct nvmefs_queue *q);
	/*
	 * Arm the queue's descriptor.  > 0 if anything already waits for
	 * process(): completions, or bytes a level-triggered descriptor stays
	 * readable for.  Callers process the queue then, and otherwise sleep
	 * on the descriptor.  -errno with a message if the queue is lost: the
	 * caller fails it as it does a failed process().  Every transport the
	 * unit tests reach is checked by tests/unit/arm_contract.h.
	 */
	int (*queue_arm)(struct nvmefs_queue *q);
};

extern const struct nvmefs_transport_ops nvmefs_rdma_ops;
extern const struct nvmefs_transport_ops nvmefs_tcp_ops;

#endif /* NVMEFS_TRANSPORT_OPS_H */
