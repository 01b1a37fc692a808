/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controller's states and the one function that moves between them:
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

#include "internal.h"

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
