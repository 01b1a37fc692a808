/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Request slots and command ids of one queue (queue.c), for the layers
 * above and, through the completion entry points, for the transports. */
#ifndef NVMEFS_QUEUE_H
#define NVMEFS_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "../types/transport_ops.h"

int nvmefs_queue_init(struct nvmefs_queue *q, struct nvmefs_ctrl *ctrl,
		      const struct nvmefs_queue_params *params);
void nvmefs_queue_fini(struct nvmefs_queue *q);
struct nvmefs_req *nvmefs_req_get(struct nvmefs_queue *q);
/* Whether nvmefs_req_get() would find a free slot. */
bool nvmefs_req_available(const struct nvmefs_queue *q);
void nvmefs_req_put(struct nvmefs_req *req);
int nvmefs_req_submit(struct nvmefs_req *req);
/* For transports: the capsule of @req has left; the transport is done with it. */
void nvmefs_queue_send_done(struct nvmefs_queue *q, struct nvmefs_req *req);
/* For transports: a response arrived.  -EPROTO for an unknown or stale
 * command id, after which the queue is failed. */
int nvmefs_queue_response(struct nvmefs_queue *q, const struct nvmefs_cqe *cqe);
/* As nvmefs_queue_response(), for a response that came with a Send with
 * Invalidate of @invalidated (NULL: without).  A request waiting on its key
 * ends only once that key is dead: the target invalidated exactly it, or
 * the transport's invalidate() did.  The target invalidating any other key
 * is -EPROTO, and the queue is failed. */
int nvmefs_queue_response_inv(struct nvmefs_queue *q, const struct nvmefs_cqe *cqe,
			      const uint32_t *invalidated);
/* For transports: a window bound for a request's key took effect (the work
 * request after its bind completed). */
void nvmefs_queue_key_bound(struct nvmefs_queue *q);
/* For transports: the local invalidation of req->rkey completed. */
void nvmefs_queue_key_done(struct nvmefs_queue *q, struct nvmefs_req *req);
/* Mark the queue failed with @err (the first error wins): nothing more is
 * submitted on it.  Requests in flight end only in nvmefs_queue_stop(). */
void nvmefs_queue_fail(struct nvmefs_queue *q, int err);
/* Fail the queue, stop its transport (after which the target cannot touch
 * any of its buffers), then end every request still in flight, aborted. */
void nvmefs_queue_stop(struct nvmefs_queue *q, int err);

#endif /* NVMEFS_QUEUE_H */
