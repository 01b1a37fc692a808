/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running one admin command to its end: the admin queue's lock, the
 * payload in a slot or in the caller's registered memory, and waiting for
 * the response.  A command that times out or a queue that fails here fails
 * the controller, so this sits above both the request slots (queue.c) and
 * the controller's failure handling (recover.c): the queue layer itself
 * never calls up into the controller.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

int nvmefs_req_exec(struct nvmefs_req *req, unsigned int timeout_ms)
{
	struct nvmefs_queue *q = req->q;
	struct nvmefs_ctrl *ctrl = q->ctrl;
	int64_t deadline = nvmefs_now_ms() + timeout_ms;
	int ret;

	ret = nvmefs_req_submit(req);
	if (ret < 0)
		return ret;
	while (req->inflight) {
		int64_t left = deadline - nvmefs_now_ms();
		char msg[256];

		if (left <= 0) {
			snprintf(msg, sizeof(msg), "queue %u: the controller did not complete the command "
				 "within %u ms: the target is overloaded or gone; raise --timeout or check "
				 "the target", q->qid, timeout_ms);
			nvmefs_set_error("%s", msg);
			nvmefs_queue_stop(q, -ETIMEDOUT);
			nvmefs_ctrl_fail(ctrl, -ETIMEDOUT, msg);
			break;
		}
		if (!nvmefs_ctrl_usable(ctrl)) {
			nvmefs_set_error("queue %u: the controller failed meanwhile: %s", q->qid,
					 ctrl->fail_msg);
			nvmefs_queue_stop(q, -ENOTCONN);
			break;
		}
		/* In slices, to notice a failure elsewhere in the controller. */
		ret = ctrl->ops->process(q, left < 100 ? (int)left : 100);
		if (ret < 0) {
			snprintf(msg, sizeof(msg), "%s", nvmefs_errmsg());
			nvmefs_queue_stop(q, ret);
			nvmefs_ctrl_fail(ctrl, ret, msg);
			nvmefs_set_error("%s", msg);
		}
	}
	return req->error;
}

static int admin_exec_locked(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			     void *buf, uint32_t len, struct nvmefs_mr *mr, enum nvmefs_dir dir,
			     struct nvmefs_cqe *cqe, unsigned int timeout_ms);

int nvmefs_admin_exec(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
		      void *buf, uint32_t len, enum nvmefs_dir dir,
		      struct nvmefs_cqe *cqe)
{
	return nvmefs_admin_exec_mr(ctrl, cmd, buf, len, NULL, dir, cqe);
}

int nvmefs_admin_exec_mr(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			 void *buf, uint32_t len, struct nvmefs_mr *mr, enum nvmefs_dir dir,
			 struct nvmefs_cqe *cqe)
{
	int ret;

	pthread_mutex_lock(&ctrl->admin_lock);
	ret = admin_exec_locked(ctrl, cmd, buf, len, mr, dir, cqe, ctrl->opts.timeout_ms);
	pthread_mutex_unlock(&ctrl->admin_lock);
	return ret;
}

int nvmefs_admin_exec_within(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			     unsigned int timeout_ms)
{
	int ret;

	pthread_mutex_lock(&ctrl->admin_lock);
	ret = admin_exec_locked(ctrl, cmd, NULL, 0, NULL, NVMEFS_DIR_NONE, NULL, timeout_ms);
	pthread_mutex_unlock(&ctrl->admin_lock);
	return ret;
}

static int admin_exec_locked(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			     void *buf, uint32_t len, struct nvmefs_mr *mr, enum nvmefs_dir dir,
			     struct nvmefs_cqe *cqe, unsigned int timeout_ms)
{
	struct nvmefs_queue *q = &ctrl->admin;
	struct nvmefs_req *req;
	int ret;

	if (!nvmefs_ctrl_usable(ctrl))
		return nvmefs_error(-ENOTCONN, "the controller of %s at %s is not live after a "
				    "failure (%s): wait for it to reconnect", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl), ctrl->fail_msg);
	if (q->failed)
		return nvmefs_error(q->failed, "the admin queue to %s failed earlier (%s): reconnect",
				    nvmefs_ctrl_where(ctrl), strerror(-q->failed));
	req = nvmefs_req_get(q);
	if (!req)
		return nvmefs_error(-EBUSY, "all %u admin request slots are in use", q->nr_reqs);
	if (mr && ((uint8_t *)buf < (uint8_t *)mr->addr ||
		   (uint8_t *)buf + len > (uint8_t *)mr->addr + mr->len)) {
		ret = nvmefs_error(-EINVAL, "an admin transfer of %u bytes lies outside the %zu "
				   "bytes registered for it", len, mr->len);
		goto out;
	}
	if (!mr && len > req->data_slot_size) {
		ret = nvmefs_error(-EINVAL, "an admin transfer of %u bytes is more than the %u a "
				   "slot holds", len, req->data_slot_size);
		goto out;
	}
	*req->cmd = *cmd;
	if (len && mr) {
		/* Straight into the caller's registered memory: no copy. */
		req->data = buf;
		req->mr = mr;
		req->len = len;
		req->dir = (uint8_t)dir;
	} else if (len) {
		req->data = req->data_slot;
		req->len = len;
		req->dir = (uint8_t)dir;
		if (dir == NVMEFS_DIR_TO_CTRL)
			memcpy(req->data, buf, len);
	}
	ret = nvmefs_req_exec(req, timeout_ms);
	if (ret < 0)
		goto out;
	if (cqe)
		*cqe = req->cqe;
	if (!nvmefs_cqe_ok(&req->cqe))
		ret = -EREMOTEIO;
	else if (len && !mr && dir == NVMEFS_DIR_FROM_CTRL)
		memcpy(buf, req->data, len);
out:
	nvmefs_req_put(req);
	return ret;
}
