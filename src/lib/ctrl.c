/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Controller lifecycle: connect the admin queue, enable, identify, shut
 * down.  The admin commands it and the public API send are admin_cmds.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvme/util.h>

#include "internal.h"
#include "auth.h"
#include "../common/text.h"

/* Identify data and discovery log chunks fit one slot each. */
#define ADMIN_DATA_SLOT_SIZE NVMEFS_IDENTIFY_DATA_SIZE

static int copy_opt(char *dst, size_t size, const char *src, const char *what)
{
	if (strlen(src) >= size)
		return nvmefs_error(-EINVAL, "the %s '%.40s...' is longer than %zu characters",
				    what, src, size - 1);
	strcpy(dst, src);
	return 0;
}

/* TRADDR and TRSVCID are ASCII; one from a discovery log with a control
 * byte in it would otherwise reach a terminal in a message. */
static int copy_ascii_opt(char *dst, size_t size, const char *src, const char *what)
{
	for (const char *c = src; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			return nvmefs_error(-EINVAL, "the %s holds a byte (0x%02x) that is not printable "
					    "ASCII: give a plain IP address and port",
					    what, (unsigned char)*c);
	return copy_opt(dst, size, src, what);
}

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

static void shutdown_ctrl(struct nvmefs_ctrl *ctrl)
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

int nvmefs_ctrl_failed(const struct nvmefs_ctrl *ctrl)
{
	return atomic_load(&((struct nvmefs_ctrl *)ctrl)->failed);
}

static void release(struct nvmefs_ctrl *ctrl)
{
	nvmefs_ctrl_stop_thread(ctrl);
	/* What is still queued is told while the controller is whole: a
	 * callback may ask for its status, its namespaces or an admin command. */
	nvmefs_notify_stop(&ctrl->notify);
	nvmefs_ctrl_delete_io_queues(ctrl);
	nvmefs_ctrl_admin_down(ctrl);
	nvmefs_queue_fini(&ctrl->admin);
	/* Its buffer's registration goes with the device. */
	nvmefs_auth_release(ctrl);
	if (ctrl->ops->ctrl_release)
		ctrl->ops->ctrl_release(ctrl);
	nvmefs_mr_free_retired(ctrl);
	pthread_cond_destroy(&ctrl->state_cond);
	pthread_mutex_destroy(&ctrl->state_lock);
	pthread_mutex_destroy(&ctrl->io_lock);
	nvmefs_notify_fini(&ctrl->notify);
	pthread_mutex_destroy(&ctrl->mr_lock);
	pthread_mutex_destroy(&ctrl->admin_lock);
	free(ctrl);
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

int nvmefs_ctrl_admin_up(struct nvmefs_ctrl *ctrl, struct nvme_id_ctrl *id)
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
	ret = nvmefs_fabrics_connect(ctrl, q, ctrl->kato_ms);
	if (ret == 0)
		ret = enable(ctrl);
	if (ret == 0)
		ret = nvmefs_identify_ctrl(ctrl, id);
	if (ret == 0)
		ret = check_subnqn(ctrl, id);
	return ret;
}

void nvmefs_ctrl_disconnect(struct nvmefs_ctrl *ctrl)
{
	char saved[1024];

	if (!ctrl)
		return;
	/* A caller reports its own failure after disconnecting: keep its message. */
	snprintf(saved, sizeof(saved), "%s", nvmefs_errmsg());
	nvmefs_ctrl_stop_thread(ctrl);
	nvmefs_ctrl_delete_io_queues(ctrl);
	/* A failed controller is not worth waiting on. */
	if (!atomic_load(&ctrl->failed))
		shutdown_ctrl(ctrl);
	release(ctrl);
	nvmefs_set_error("%s", saved);
}

int nvmefs_ctrl_connect_with(const struct nvmefs_transport_ops *ops,
			     const struct nvmefs_connect_opts *opts,
			     struct nvmefs_ctrl **ctrlp)
{
	struct nvmefs_queue_params params = { .qid = 0, .data_slot_size = ADMIN_DATA_SLOT_SIZE };
	pthread_condattr_t cattr;
	struct nvmefs_ctrl *ctrl;
	int ret;

	if (!opts->traddr || !opts->traddr[0])
		return nvmefs_error(-EINVAL, "no target address: pass one with -a");
	ctrl = calloc(1, sizeof(*ctrl));
	if (!ctrl)
		return nvmefs_error(-ENOMEM, "out of memory");
	ctrl->ops = ops;
	ctrl->opts = *opts;
	pthread_mutex_init(&ctrl->admin_lock, NULL);
	pthread_mutex_init(&ctrl->state_lock, NULL);
	pthread_mutex_init(&ctrl->io_lock, NULL);
	nvmefs_notify_init(&ctrl->notify);
	pthread_mutex_init(&ctrl->mr_lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&ctrl->state_cond, &cattr);
	pthread_condattr_destroy(&cattr);
	/* New (calloc's 0) until connected and brought up. */
	ctrl->status.since_ms = nvmefs_now_ms();
	if (!ctrl->opts.timeout_ms)
		ctrl->opts.timeout_ms = NVMEFS_DEFAULT_TIMEOUT_MS;
	ret = copy_ascii_opt(ctrl->traddr, sizeof(ctrl->traddr), opts->traddr, "target address");
	if (ret == 0)
		ret = copy_ascii_opt(ctrl->trsvcid, sizeof(ctrl->trsvcid),
				     opts->trsvcid ? opts->trsvcid : NVMEFS_DEFAULT_TRSVCID, "port");
	if (ret == 0 && opts->host_traddr)
		ret = copy_ascii_opt(ctrl->host_traddr, sizeof(ctrl->host_traddr), opts->host_traddr,
				     "host address");
	if (ret == 0)
		ret = copy_opt(ctrl->subnqn, sizeof(ctrl->subnqn),
			       opts->subnqn ? opts->subnqn : NVME_DISC_SUBSYS_NAME, "subsystem NQN");
	if (ret == 0 && ctrl->opts.timeout_ms > NVMEFS_MAX_TIMEOUT_MS)
		ret = nvmefs_error(-EINVAL, "a timeout of %u ms: give at most %u ms",
				   ctrl->opts.timeout_ms, NVMEFS_MAX_TIMEOUT_MS);
	if (ret == 0 && opts->reconnect_delay_s < 1)
		ret = nvmefs_error(-EINVAL, "a reconnect delay of %d s: give 1 s or more",
				   opts->reconnect_delay_s);
	if (ret < 0)
		goto fail;
	/* The strings now live in ctrl; opts' pointers may not outlive the call. */
	ctrl->opts.traddr = ctrl->traddr;
	ctrl->opts.trsvcid = ctrl->trsvcid;
	ctrl->opts.host_traddr = ctrl->host_traddr[0] ? ctrl->host_traddr : NULL;
	ctrl->opts.subnqn = ctrl->subnqn;
	ctrl->discovery = strcmp(ctrl->subnqn, NVME_DISC_SUBSYS_NAME) == 0;
	ret = nvmefs_host_identity(ctrl, opts->hostnqn, opts->hostid);
	if (ret < 0)
		goto fail;
	ctrl->opts.hostnqn = ctrl->hostnqn;
	ctrl->opts.hostid = ctrl->hostid_str;
	/* The secrets live parsed in locked memory, never as the caller's strings. */
	ctrl->opts.dhchap_secret = NULL;
	ctrl->opts.dhchap_ctrl_secret = NULL;
	ret = nvmefs_auth_init(ctrl, opts->dhchap_secret, opts->dhchap_ctrl_secret);
	if (ret < 0)
		goto fail;

	params.size = (uint16_t)(opts->admin_queue_size ? opts->admin_queue_size
				 : NVMEFS_DEFAULT_ADMIN_QUEUE_SIZE);
	if (opts->admin_queue_size > 4096) {
		ret = nvmefs_error(-EINVAL, "an admin queue of %u entries is more than 4096",
				   opts->admin_queue_size);
		goto fail;
	}
	ret = nvmefs_queue_init(&ctrl->admin, ctrl, &params);
	if (ret < 0)
		goto fail;
	ctrl->admin_size = params.size;
	ctrl->kato_ms = opts->kato_ms >= 0 ? (uint32_t)opts->kato_ms
			: ctrl->discovery ? 0 : NVMEFS_DEFAULT_KATO_MS;
	ret = nvmefs_ctrl_admin_up(ctrl, &ctrl->id);
	if (ret < 0)
		goto fail;
	ret = nvmefs_notify_start(&ctrl->notify);
	if (ret == 0) {
		/* Connected, enabled, identified: live, before its thread looks. */
		pthread_mutex_lock(&ctrl->state_lock);
		ret = nvmefs_ctrl_change_state(ctrl, CTRL_LIVE);
		pthread_mutex_unlock(&ctrl->state_lock);
	}
	if (ret == 0)
		ret = nvmefs_ctrl_start_thread(ctrl);
	if (ret < 0)
		goto fail;
	*ctrlp = ctrl;
	return 0;
fail:
	release(ctrl);
	return ret;
}

int nvmefs_ctrl_connect_0_2(const struct nvmefs_connect_opts *opts, struct nvmefs_ctrl **ctrlp)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts taken;
	int ret;

	ret = nvmefs_connect_opts_take(opts, &taken, &ops);
	if (ret < 0)
		return ret;
	return nvmefs_ctrl_connect_with(ops, &taken, ctrlp);
}
NVMEFS_SYMVER(nvmefs_ctrl_connect_0_2, "nvmefs_ctrl_connect@@NVMEFS_0.2");

uint16_t nvmefs_ctrl_cntlid(const struct nvmefs_ctrl *ctrl) { return ctrl->cntlid; }
const char *nvmefs_ctrl_hostnqn(const struct nvmefs_ctrl *ctrl) { return ctrl->hostnqn; }
const char *nvmefs_ctrl_hostid(const struct nvmefs_ctrl *ctrl) { return ctrl->hostid_str; }
const char *nvmefs_ctrl_subnqn(const struct nvmefs_ctrl *ctrl) { return ctrl->subnqn; }
const char *nvmefs_ctrl_traddr(const struct nvmefs_ctrl *ctrl) { return ctrl->traddr; }
const char *nvmefs_ctrl_trsvcid(const struct nvmefs_ctrl *ctrl) { return ctrl->trsvcid; }
const char *nvmefs_ctrl_trtype(const struct nvmefs_ctrl *ctrl) { return ctrl->ops->name; }
int nvmefs_ctrl_rkey_per_io(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->rkey_per_io;
}

int nvmefs_ctrl_is_discovery(const struct nvmefs_ctrl *ctrl) { return ctrl->discovery; }
const struct nvme_id_ctrl *nvmefs_ctrl_id(const struct nvmefs_ctrl *ctrl) { return &ctrl->id; }

int nvmefs_ctrl_get_property(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t *value)
{
	return nvmefs_prop_get(ctrl, offset, value);
}
