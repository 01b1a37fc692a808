/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Controller lifecycle: a controller made from the connect options, its
 * admin queue brought up (ctrl_setup.c), made live and handed its thread
 * (recover.c); disconnected and freed.  The admin commands are
 * admin_cmds.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl.h"
#include "recover.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../ctrl/auth.h"
#include "../ctrl/auth_crypto.h"
#include "../ctrl/tls_key.h"
#include "../ctrl/connect_opts.h"
#include "../ctrl/ctrl_setup.h"
#include "../ctrl/fabrics.h"
#include "../ctrl/host_id.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../state/notify.h"
#include "../transport/mr.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

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
	nvmefs_tls_psk_free(ctrl->tls_psk);
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
		nvmefs_ctrl_shutdown(ctrl);
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
	if (ret == 0 && opts->host_iface)
		ret = copy_ascii_opt(ctrl->host_iface, sizeof(ctrl->host_iface), opts->host_iface,
				     "host interface");
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
	ctrl->opts.host_iface = ctrl->host_iface[0] ? ctrl->host_iface : NULL;
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
	ctrl->opts.tls_key = NULL;
	ctrl->concat = opts->tls_concat;
	if (opts->tls_key) {
		ret = nvmefs_tls_psk_new(opts->tls_key, ctrl->hostnqn, ctrl->subnqn,
					 (unsigned int)opts->tls_identity, opts->tls_compat,
					 &ctrl->tls_psk);
		if (ret < 0)
			goto fail;
	}

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

/* One suite is offered, the PSK's hash's (tcp_tls.c): the one every queue runs. */
const char *nvmefs_ctrl_tls_suite(const struct nvmefs_ctrl *ctrl)
{
	if (!ctrl->tls_psk)
		return NULL;
	return ctrl->tls_psk->key->hash == NVMEFS_AUTH_HASH_SHA384 ? "TLS_AES_256_GCM_SHA384" :
								    "TLS_AES_128_GCM_SHA256";
}
int nvmefs_ctrl_rkey_per_io(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->rkey_per_io;
}

void nvmefs_ctrl_rkey_stats(const struct nvmefs_ctrl *ctrl, struct nvmefs_rkey_stats *st)
{
	struct nvmefs_ctrl *c = (struct nvmefs_ctrl *)ctrl;

	st->per_io = ctrl->rkey_per_io;
	st->bound = atomic_load_explicit(&c->rkeys.bound, memory_order_relaxed);
	st->invalidated_by_target = atomic_load_explicit(&c->rkeys.invalidated_by_target,
							 memory_order_relaxed);
	st->invalidated_locally = atomic_load_explicit(&c->rkeys.invalidated_locally,
						       memory_order_relaxed);
}

int nvmefs_ctrl_is_discovery(const struct nvmefs_ctrl *ctrl) { return ctrl->discovery; }
const struct nvme_id_ctrl *nvmefs_ctrl_id(const struct nvmefs_ctrl *ctrl) { return &ctrl->id; }

int nvmefs_ctrl_get_property(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t *value)
{
	return nvmefs_prop_get(ctrl, offset, value);
}
