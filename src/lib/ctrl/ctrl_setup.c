/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The admin queue brought up and down, for the first connect (ctrl.c) and
 * every reconnect (recover.c): create the queue, Connect, enable the
 * controller, identify it and check whose it is; shut it down and tear
 * the queue's transport down.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "ctrl_setup.h"
#include "fabrics.h"
#include "tls_key.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../types/transport_ops.h"
#include "../../common/text.h"

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Polls CSTS until (CSTS & mask) == want, for up to @timeout_ms. */
static int wait_csts(struct nvmefs_ctrl *ctrl, uint32_t mask, uint32_t want,
		     unsigned int timeout_ms, const char *what)
{
	int64_t deadline = nvmefs_now_ms() + timeout_ms;
	unsigned int pause = 1;
	uint64_t csts;
	int ret;

	for (;;) {
		ret = nvmefs_prop_get(ctrl, NVME_REG_CSTS, &csts);
		if (ret < 0)
			return ret;
		if (NVME_CSTS_CFS(csts))
			return nvmefs_error(-EIO, "the controller of %s at %s reported a fatal status "
					    "(CSTS.CFS) while %s: reset the target's subsystem",
					    ctrl->subnqn, nvmefs_ctrl_where(ctrl), what);
		if ((csts & mask) == want)
			return 0;
		if (nvmefs_now_ms() >= deadline)
			return nvmefs_error(-ETIMEDOUT, "the controller of %s at %s was not done %s "
					    "within %u ms (CSTS %#llx): the target is stuck; check it",
					    ctrl->subnqn, nvmefs_ctrl_where(ctrl), what, timeout_ms,
					    (unsigned long long)csts);
		sleep_ms(pause);
		if (pause < 64)
			pause *= 2;
	}
}

static int enable(struct nvmefs_ctrl *ctrl)
{
	unsigned int timeout_ms;
	int ret;

	ret = nvmefs_prop_get(ctrl, NVME_REG_CAP, &ctrl->cap);
	if (ret < 0)
		return ret;
	uint64_t vs;

	ret = nvmefs_prop_get(ctrl, NVME_REG_VS, &vs);
	if (ret < 0)
		return ret;
	ctrl->vs = (uint32_t)vs;
	/* Memory pages of 4 KiB (MPS 0) are what every controller supports. */
	ctrl->cc = nvmefs_cc_enable_value(0);
	ret = nvmefs_prop_set(ctrl, NVME_REG_CC, ctrl->cc);
	if (ret < 0)
		return ret;
	timeout_ms = nvmefs_cap_timeout_ms(ctrl->cap);
	if (timeout_ms < ctrl->opts.timeout_ms)
		timeout_ms = ctrl->opts.timeout_ms;
	return wait_csts(ctrl, NVME_CSTS_RDY_MASK << NVME_CSTS_RDY_SHIFT,
			 1u << NVME_CSTS_RDY_SHIFT, timeout_ms, "enabling");
}

void nvmefs_ctrl_shutdown(struct nvmefs_ctrl *ctrl)
{
	uint32_t cc;

	if (!(ctrl->cc & (NVME_CC_EN_MASK << NVME_CC_EN_SHIFT)) || ctrl->admin.failed)
		return;
	cc = (ctrl->cc & ~(NVME_CC_SHN_MASK << NVME_CC_SHN_SHIFT)) |
	     (NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT);
	if (nvmefs_prop_set(ctrl, NVME_REG_CC, cc) < 0)
		return;
	ctrl->cc = cc;
	wait_csts(ctrl, NVME_CSTS_SHST_MASK << NVME_CSTS_SHST_SHIFT,
		  NVME_CSTS_SHST_CMPLT << NVME_CSTS_SHST_SHIFT, ctrl->opts.timeout_ms,
		  "shutting down");
}

void nvmefs_ctrl_admin_down(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->admin_lock);
	if (ctrl->admin.tp)
		ctrl->ops->queue_destroy(&ctrl->admin);
	pthread_mutex_unlock(&ctrl->admin_lock);
}

/*
 * Identify's SUBNQN (NVMe 1.2.1 on) says whose controller this is, at the
 * first connect as at every reconnect.  A discovery controller reached by
 * the well-known NQN may name its own unique one (TP 8013), which the
 * kernel's initiator takes too.
 */
static int check_subnqn(struct nvmefs_ctrl *ctrl, const struct nvme_id_ctrl *id)
{
	/* The whole field: the session's NQN and more after it is another one. */
	char subnqn[sizeof(id->subnqn) + 1], shown[TEXT_ESCAPED_SIZE(sizeof(id->subnqn))];
	bool first;

	memcpy(subnqn, id->subnqn, sizeof(id->subnqn));
	subnqn[sizeof(id->subnqn)] = '\0';
	if (!subnqn[0] || ctrl->discovery || !strcmp(subnqn, ctrl->subnqn))
		return 0;
	/* The target's bytes go to the reason, the log and a terminal. */
	text_escape(shown, sizeof(shown), subnqn, sizeof(id->subnqn));
	pthread_mutex_lock(&ctrl->state_lock);
	first = ctrl->state == CTRL_NEW;
	pthread_mutex_unlock(&ctrl->state_lock);
	if (first)
		return nvmefs_error(-ESTALE, "%s answers as subsystem %s, not %s: give the NQN "
				    "'nvmefs discover' lists for it", nvmefs_ctrl_where(ctrl), shown,
				    ctrl->subnqn);
	/* The session's own NQN stays out: with two of the longest, the reason
	 * (512 bytes) would be cut, and status and events name it already. */
	return nvmefs_error(-ESTALE, "%s now answers as subsystem %s: another subsystem took its "
			    "place", nvmefs_ctrl_where(ctrl), shown);
}

/* The admin queue's connection and its Connect (with DH-HMAC-CHAP if
 * asked). */
static int admin_connect(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_queue_params params = {
		.qid = 0,
		.size = ctrl->admin_size,
		.data_slot_size = ADMIN_DATA_SLOT_SIZE,
	};
	struct nvmefs_queue *q = &ctrl->admin;
	int ret;

	/* The slots survive a reconnect; the transport and its state do not. */
	pthread_mutex_lock(&ctrl->admin_lock);
	q->failed = 0;
	q->stopped = false;
	q->sq_head = q->sq_tail = 0;
	ret = ctrl->ops->queue_create(q, &params);
	pthread_mutex_unlock(&ctrl->admin_lock);
	if (ret < 0)
		return ret;
	return nvmefs_fabrics_connect(ctrl, q, ctrl->kato_ms);
}

int nvmefs_ctrl_admin_up(struct nvmefs_ctrl *ctrl, struct nvme_id_ctrl *id)
{
	int ret;

	/* Secure concatenation makes a new TLS key at every connect, over a
	 * first admin connection without TLS (auth.c). */
	if (ctrl->concat) {
		nvmefs_tls_psk_free(ctrl->tls_psk);
		ctrl->tls_psk = NULL;
	}
	ret = admin_connect(ctrl);
	if (ret == 0 && ctrl->concat) {
		/* Nothing but Connect and DH-HMAC-CHAP goes over the connection
		 * that made the key, as with the Linux host: the admin queue
		 * connects again, with TLS under it, and nvmet asks for no
		 * DH-HMAC-CHAP on a queue with a TLS key. */
		nvmefs_ctrl_admin_down(ctrl);
		ret = admin_connect(ctrl);
	}
	if (ret == 0)
		ret = enable(ctrl);
	if (ret == 0)
		ret = nvmefs_identify_ctrl(ctrl, id);
	if (ret == 0)
		ret = check_subnqn(ctrl, id);
	return ret;
}
