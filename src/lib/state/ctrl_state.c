/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controller's states, the one function that moves between them, and
 * the entry points that ask for a move (nvmefs_ctrl_fail() from any thread
 * that sees a failure, nvmefs_ctrl_stop_reconnect() from the caller) or
 * read the state (status, usable):
 *
 *   from        to
 *   new         live (connected and brought up), deleted (failed meanwhile)
 *   live        resetting (failed), deleted (failed, and may not reconnect)
 *   resetting   connecting (queues drained), deleted (given up)
 *   connecting  live (reconnected), deleted (given up, or another subsystem)
 *   deleted     nothing
 *
 * Beside the state, three atomics are read without state_lock on the I/O
 * path, one plain load per poll, and written here only:
 *  - failed: 0 while new or live, else the -errno that began the outage;
 *  - io_failing: held and new I/O fails (deleted, or fast_io_fail_tmo
 *    passed in an outage: a deadline inside the outage, as Linux's
 *    NVME_CTRL_FAILFAST_EXPIRED flag, not a state of its own);
 *  - gen: a generation counter, bumped by every failure, so that an I/O
 *    queue stopped for failure N is stopped again for failure N + 1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

#include "ctrl_state.h"
#include "../types/ctrl_types.h"
#include "notify.h"
#include "../base/clock.h"
#include "../base/error.h"

static const bool allowed[CTRL_NR_STATES][CTRL_NR_STATES] = {
	[CTRL_NEW] = { [CTRL_LIVE] = true, [CTRL_DELETED] = true },
	[CTRL_LIVE] = { [CTRL_RESETTING] = true, [CTRL_DELETED] = true },
	[CTRL_RESETTING] = { [CTRL_CONNECTING] = true, [CTRL_DELETED] = true },
	[CTRL_CONNECTING] = { [CTRL_LIVE] = true, [CTRL_DELETED] = true },
};

const char *nvmefs_ctrl_state_name(enum nvmefs_ctrl_state state)
{
	switch (state) {
	case NVMEFS_CTRL_LIVE: return "live";
	case NVMEFS_CTRL_RESETTING: return "resetting";
	case NVMEFS_CTRL_CONNECTING: return "connecting";
	case NVMEFS_CTRL_DELETED: return "deleted";
	}
	return "unknown";
}

const char *nvmefs_ctrl_state_str(enum ctrl_state state)
{
	return state == CTRL_NEW ? "new" : nvmefs_ctrl_state_name(nvmefs_ctrl_public_state(state));
}

/* A controller is new only inside nvmefs_ctrl_connect(), which has not
 * returned it yet: it is being connected. */
enum nvmefs_ctrl_state nvmefs_ctrl_public_state(enum ctrl_state state)
{
	switch (state) {
	case CTRL_NEW: return NVMEFS_CTRL_CONNECTING;
	case CTRL_LIVE: return NVMEFS_CTRL_LIVE;
	case CTRL_RESETTING: return NVMEFS_CTRL_RESETTING;
	case CTRL_CONNECTING: return NVMEFS_CTRL_CONNECTING;
	case CTRL_DELETED: return NVMEFS_CTRL_DELETED;
	}
	return NVMEFS_CTRL_DELETED;
}

int nvmefs_ctrl_change_state(struct nvmefs_ctrl *ctrl, enum ctrl_state to)
{
	enum ctrl_state from = ctrl->state;
	int64_t now;

	/* The caller looked at the state under state_lock and holds it still:
	 * if the lock can be taken here, nobody held it. */
	if (pthread_mutex_trylock(&ctrl->state_lock) == 0) {
		pthread_mutex_unlock(&ctrl->state_lock);
		return nvmefs_error(-EINVAL, "%s: changing the controller's state from %s to %s "
				    "without its lock (a bug in nvmefs)", ctrl->subnqn,
				    nvmefs_ctrl_state_str(from), nvmefs_ctrl_state_str(to));
	}
	if ((unsigned int)to >= CTRL_NR_STATES || !allowed[from][to])
		return nvmefs_error(-EINVAL, "%s: no transition from %s to %s (a bug in nvmefs)",
				    ctrl->subnqn, nvmefs_ctrl_state_str(from),
				    nvmefs_ctrl_state_str(to));
	now = nvmefs_now_ms();
	if ((from == CTRL_NEW || from == CTRL_LIVE) &&
	    (to == CTRL_RESETTING || to == CTRL_DELETED)) {
		ctrl->outage_start_ms = now;
		ctrl->status.attempts = 0;
		/* The cause is in place before the I/O path can see the failure. */
		atomic_fetch_add(&ctrl->gen, 1);
		atomic_store(&ctrl->failed, ctrl->status.error ? ctrl->status.error : -EIO);
	}
	if (to == CTRL_LIVE) {
		if (from == CTRL_CONNECTING) {
			int64_t outage = now - ctrl->outage_start_ms;

			ctrl->status.reconnects++;
			if (outage > ctrl->status.longest_outage_ms)
				ctrl->status.longest_outage_ms = outage;
		}
		atomic_store(&ctrl->io_failing, 0);
		atomic_store(&ctrl->failed, 0);
	}
	if (to == CTRL_DELETED)
		atomic_store(&ctrl->io_failing, 1);
	ctrl->state = to;
	ctrl->status.since_ms = now;
	pthread_cond_broadcast(&ctrl->state_cond);
	return 0;
}

bool nvmefs_ctrl_fail_io(struct nvmefs_ctrl *ctrl)
{
	if ((ctrl->state != CTRL_RESETTING && ctrl->state != CTRL_CONNECTING) ||
	    atomic_load(&ctrl->io_failing))
		return false;
	atomic_store(&ctrl->io_failing, 1);
	return true;
}

void nvmefs_ctrl_status_locked(struct nvmefs_ctrl *ctrl, struct nvmefs_ctrl_status *st)
{
	*st = ctrl->status;
	st->state = nvmefs_ctrl_public_state(ctrl->state);
	st->io_failing = atomic_load(&ctrl->io_failing);
	st->io_queues = atomic_load(&ctrl->nr_connected_ioqs);
}

int nvmefs_ctrl_failed(const struct nvmefs_ctrl *ctrl)
{
	return atomic_load(&((struct nvmefs_ctrl *)ctrl)->failed);
}

void nvmefs_ctrl_status(const struct nvmefs_ctrl *cctrl, struct nvmefs_ctrl_status *st)
{
	struct nvmefs_ctrl *ctrl = (struct nvmefs_ctrl *)cctrl;

	pthread_mutex_lock(&ctrl->state_lock);
	nvmefs_ctrl_status_locked(ctrl, st);
	pthread_mutex_unlock(&ctrl->state_lock);
}

void nvmefs_ctrl_set_reason(struct nvmefs_ctrl *ctrl, const char *msg)
{
	snprintf(ctrl->status.reason, sizeof(ctrl->status.reason), "%s", msg);
}

static bool can_reconnect(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->svc_running && !ctrl->no_reconnect && ctrl->opts.ctrl_loss_tmo_s != 0;
}

bool nvmefs_ctrl_usable(const struct nvmefs_ctrl *ctrl)
{
	return !atomic_load(&((struct nvmefs_ctrl *)ctrl)->failed) ||
	       (ctrl->svc_running && pthread_equal(pthread_self(), ctrl->svc_thread));
}

void nvmefs_ctrl_fail(struct nvmefs_ctrl *ctrl, int err, const char *msg)
{
	bool deleted;

	pthread_mutex_lock(&ctrl->state_lock);
	/* The first failure of an outage is its cause; the rest are its echoes.
	 * One while being connected the first time fails the connect. */
	if (ctrl->state != CTRL_LIVE && ctrl->state != CTRL_NEW) {
		pthread_mutex_unlock(&ctrl->state_lock);
		return;
	}
	snprintf(ctrl->fail_msg, sizeof(ctrl->fail_msg), "%s", msg);
	nvmefs_ctrl_set_reason(ctrl, msg);
	ctrl->status.error = err;
	deleted = ctrl->state == CTRL_NEW || !can_reconnect(ctrl);
	nvmefs_ctrl_change_state(ctrl, deleted ? CTRL_DELETED : CTRL_RESETTING);
	/* Queued under state_lock, as every transition's event is: told after
	 * it, a reconnect that the controller's thread starts at once (and a
	 * give-up during it) would seem to come before the failure. */
	if (deleted)
		nvmefs_ctrl_emit_locked(ctrl, "%s at %s failed: %s; not reconnecting, its I/O fails",
					ctrl->subnqn, nvmefs_ctrl_where(ctrl), msg);
	else
		nvmefs_ctrl_emit_locked(ctrl, "%s at %s failed: %s; stopping its queues to reconnect",
					ctrl->subnqn, nvmefs_ctrl_where(ctrl), msg);
	pthread_mutex_unlock(&ctrl->state_lock);
	nvmefs_io_wake(ctrl);
}

void nvmefs_ctrl_queue_stopped(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->state_lock);
	pthread_cond_broadcast(&ctrl->state_cond);
	pthread_mutex_unlock(&ctrl->state_lock);
}

void nvmefs_ctrl_stop_reconnect(struct nvmefs_ctrl *ctrl)
{
	bool now_deleted = false;

	pthread_mutex_lock(&ctrl->state_lock);
	ctrl->no_reconnect = true;
	if (ctrl->state == CTRL_RESETTING || ctrl->state == CTRL_CONNECTING)
		now_deleted = nvmefs_ctrl_change_state(ctrl, CTRL_DELETED) == 0;
	if (now_deleted)
		nvmefs_ctrl_emit_locked(ctrl, "%s at %s: reconnecting given up; its I/O fails",
					ctrl->subnqn, nvmefs_ctrl_where(ctrl));
	pthread_mutex_unlock(&ctrl->state_lock);
	if (now_deleted)
		nvmefs_io_wake(ctrl);
}

static void vemit(struct nvmefs_ctrl *ctrl, bool state_locked, const char *fmt, va_list ap)
{
	struct nvmefs_notice *notice = nvmefs_notice_event(&ctrl->notify);

	if (!notice)
		return;
	vsnprintf(notice->msg, sizeof(notice->msg), fmt, ap);
	/* The state this transition led to, not whatever it is when told. */
	if (state_locked)
		nvmefs_ctrl_status_locked(ctrl, &notice->st);
	else
		nvmefs_ctrl_status(ctrl, &notice->st);
	nvmefs_notify_post(&ctrl->notify, notice);
}

void nvmefs_ctrl_emit(struct nvmefs_ctrl *ctrl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(ctrl, false, fmt, ap);
	va_end(ap);
}

void nvmefs_ctrl_emit_locked(struct nvmefs_ctrl *ctrl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(ctrl, true, fmt, ap);
	va_end(ap);
}

const char *nvmefs_ctrl_where(const struct nvmefs_ctrl *ctrl)
{
	static _Thread_local char buf[300];

	snprintf(buf, sizeof(buf), strchr(ctrl->traddr, ':') ? "[%s]:%s" : "%s:%s",
		 ctrl->traddr, ctrl->trsvcid);
	return buf;
}

void nvmefs_io_wake(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; i < ctrl->nr_ioqs; i++)
		eventfd_write(ctrl->ioq_wake_fds[i], 1);
	atomic_fetch_add(&ctrl->wake_seq, 1);
	pthread_mutex_unlock(&ctrl->io_lock);
}
