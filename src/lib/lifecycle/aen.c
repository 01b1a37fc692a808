/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asynchronous events, as the Linux host handles them: one Asynchronous
 * Event Request kept outstanding on the admin queue, and when it completes,
 * the log page it names read (which clears the event and re-arms it at
 * the controller), what changed taken in, the caller told, and a new
 * request sent.
 *
 * Everything here runs on the controller's own thread, which also looks at
 * the admin queue every 100 ms while the controller is live (its connection
 * events, and its CQ for the request); the request completes in
 * whichever thread processes the admin queue next (under admin_lock), and
 * only leaves its result for this thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "aen.h"
#include "../base/clock.h"
#include "../ctrl/admin.h"
#include "../ctrl/ana.h"
#include "../io/namespaces.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../state/notify.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

/* Completion dword 0 of an Asynchronous Event Request. */
#define AEN_TYPE(dw0) ((dw0) & 0x7)
#define AEN_INFO(dw0) (((dw0) >> 8) & 0xff)

/* What we act on: namespaces, ANA states and the discovery log. */
#define AEN_HANDLED (NVME_CTRL_OAES_NA | NVME_CTRL_OAES_ANA | NVME_CTRL_OAES_DL)

/* Under admin_lock, in whichever thread processed the admin queue. */
static void aer_done(struct nvmefs_req *req)
{
	struct nvmefs_ctrl *ctrl = req->q->ctrl;

	ctrl->aer_outstanding = false;
	if (!req->error && nvmefs_cqe_ok(&req->cqe)) {
		ctrl->aen_result = nvmefs_cqe_dw0(&req->cqe);
		ctrl->aen_pending = true;
	} else if (!req->error) {
		/* Refused (say, Asynchronous Event Request Limit Exceeded): not
		 * sent again until the next reconnect. */
		ctrl->aer_refused = true;
	}
	nvmefs_req_put(req);
}

/* Under admin_lock. */
static void aer_submit(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_req *req = nvmefs_req_get(&ctrl->admin);

	if (!req)
		return;
	nvmefs_sqe_init(&req->cmd->sqe, nvme_admin_async_event, 0);
	req->done = aer_done;
	if (nvmefs_req_submit(req) < 0) {
		nvmefs_req_put(req);
		return;
	}
	ctrl->aer_outstanding = true;
}

void nvmefs_aen_enable(struct nvmefs_ctrl *ctrl)
{
	uint32_t want = nvmefs_le32_to_cpu(ctrl->id.oaes) & AEN_HANDLED;
	union nvmefs_cmd cmd;

	pthread_mutex_lock(&ctrl->admin_lock);
	ctrl->aer_refused = false;
	pthread_mutex_unlock(&ctrl->admin_lock);
	ctrl->aen_mask = 0;
	if (!want)
		return;
	nvmefs_sqe_init(&cmd.sqe, nvme_admin_set_features, 0);
	cmd.sqe.cdw10 = nvmefs_cpu_to_le32(NVME_FEAT_FID_ASYNC_EVENT);
	cmd.sqe.cdw11 = nvmefs_cpu_to_le32(want);
	/* A controller that will not configure them may still send them. */
	nvmefs_admin_exec(ctrl, &cmd, NULL, 0, NVMEFS_DIR_NONE, NULL);
	ctrl->aen_mask = want;
}

static void handle(struct nvmefs_ctrl *ctrl, uint32_t result)
{
	uint8_t *log;

	if (AEN_TYPE(result) != NVME_AER_NOTICE)
		return;
	switch (AEN_INFO(result)) {
	case NVME_AER_NOTICE_NS_CHANGED:
		/* Reading the Changed Namespace List clears the event; which
		 * namespaces it names does not matter, all are looked at. */
		log = malloc(NVMEFS_IDENTIFY_DATA_SIZE);
		if (log)
			nvmefs_get_log_page(ctrl, NVME_LOG_LID_CHANGED_NS, NVME_NSID_ALL, 0, log,
					    NVMEFS_IDENTIFY_DATA_SIZE);
		free(log);
		if (nvmefs_io_rescan(ctrl) == 0)
			nvmefs_ctrl_changed(ctrl, NVMEFS_CHANGE_NAMESPACES);
		break;
	case NVME_AER_NOTICE_ANA:
		/* Reading the ANA log clears the event. */
		if (nvmefs_ana_update(ctrl, false) > 0)
			nvmefs_io_wake(ctrl);
		nvmefs_ctrl_changed(ctrl, NVMEFS_CHANGE_ANA);
		break;
	case NVME_AER_NOTICE_DISC_CHANGED:
		/* The caller's read of the discovery log clears the event. */
		nvmefs_ctrl_changed(ctrl, NVMEFS_CHANGE_DISCOVERY_LOG);
		break;
	default:
		break;
	}
}

void nvmefs_admin_tick(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_queue *q = &ctrl->admin;
	bool pending;
	uint32_t result;
	char msg[600];
	int ret = 0;

	pthread_mutex_lock(&ctrl->admin_lock);
	if (q->tp && !q->failed) {
		/* An idle admin queue would hear of the target closing it only
		 * at the next Keep Alive. */
		ret = ctrl->ops->queue_check ? ctrl->ops->queue_check(q) : 0;
		if (ret == 0 && ctrl->aen_mask) {
			if (!ctrl->aer_outstanding && !ctrl->aer_refused)
				aer_submit(ctrl);
			ret = ctrl->ops->process(q, 0);
		}
		if (ret < 0) {
			snprintf(msg, sizeof(msg), "the admin queue failed: %s", nvmefs_errmsg());
			nvmefs_queue_fail(q, ret);
		}
	}
	pending = ctrl->aen_pending;
	result = ctrl->aen_result;
	ctrl->aen_pending = false;
	pthread_mutex_unlock(&ctrl->admin_lock);
	if (ret < 0) {
		nvmefs_ctrl_fail(ctrl, ret, msg);
		return;
	}
	if (pending)
		handle(ctrl, result);
	/* An I/O came back with an ANA status the log has not told us of. */
	if (atomic_load(&ctrl->ana_stale) && nvmefs_ana_update(ctrl, false) > 0)
		nvmefs_io_wake(ctrl);
	/* A rescan that had no definite answer for a namespace, once due, or
	 * one an I/O's path error asked for. */
	if (((ctrl->rescan_at_ms && nvmefs_now_ms() >= ctrl->rescan_at_ms) ||
	     atomic_exchange(&ctrl->ns_stale, false)) && nvmefs_io_rescan(ctrl) == 0)
		nvmefs_ctrl_changed(ctrl, NVMEFS_CHANGE_NAMESPACES);
}
