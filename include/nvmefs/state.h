/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file state.h
 * @brief A controller's state through failures and reconnects, and the
 * callbacks that tell its transitions and the changes the target reports.
 * Part of <nvmefs/nvmefs.h>.
 */
#ifndef NVMEFS_PUBLIC_STATE_H
#define NVMEFS_PUBLIC_STATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h>; this header needs only a pointer to it. */
struct nvmefs_ctrl;

/**
 * The controller's failure, if it is not live: a keep-alive or command
 * timeout, a broken connection, a protocol violation.  0 while live, else
 * a negative errno.  While the controller reconnects, I/O is held (see
 * struct nvmefs_connect_opts); once it is deleted, every I/O fails.
 */
int nvmefs_ctrl_failed(const struct nvmefs_ctrl *ctrl);

/** A controller's state, as Linux names them in sysfs. */
enum nvmefs_ctrl_state {
	/** Connected; I/O flows. */
	NVMEFS_CTRL_LIVE,
	/** Failed: its queues are being stopped and drained. */
	NVMEFS_CTRL_RESETTING,
	/** Between and during reconnect attempts. */
	NVMEFS_CTRL_CONNECTING,
	/** Given up (ctrl_loss_tmo, or a target that is no longer the same):
	 *  every I/O fails, no more attempts. */
	NVMEFS_CTRL_DELETED,
};

/** "live", "resetting", "connecting" or "deleted". */
const char *nvmefs_ctrl_state_name(enum nvmefs_ctrl_state state);

/** What nvmefs_ctrl_status() tells. */
struct nvmefs_ctrl_status {
	enum nvmefs_ctrl_state state;
	/** The -errno of the failure that @reason tells; 0: none yet. */
	int error;
	/** The failure that began the current or last outage, or the last
	 *  reconnect attempt's, in one line. */
	char reason[512];
	/** Reconnect attempts in the current outage (or the last one, once live). */
	unsigned int attempts;
	/** Outages recovered from since connecting. */
	unsigned int reconnects;
	/** When the state last changed, on the CLOCK_MONOTONIC clock, in ms. */
	int64_t since_ms;
	/** The longest time from a failure to live again, in ms. */
	int64_t longest_outage_ms;
	/** Non-zero when held and new I/O fails (fast_io_fail_tmo, or deleted). */
	int io_failing;
	/**
	 * I/O queues with a connection of their own.  Fewer than were created
	 * while the target grants fewer since a reconnect: the others' I/O then
	 * goes through these, and every I/O queue handle stays usable.
	 */
	unsigned int io_queues;
};

/** Fill @st with the controller's state; safe from any thread. */
void nvmefs_ctrl_status(const struct nvmefs_ctrl *ctrl, struct nvmefs_ctrl_status *st);

/**
 * Called once for every state transition, in order, from the library's own
 * thread for @ctrl (never the thread that noticed the failure, nor the one
 * that keeps the controller alive and reconnects it): @msg is one line
 * saying what happened and what comes next (as the kernel logs
 * "Reconnecting in 10 seconds..."), @st the status the transition led to.
 * No lock of the library is held: the callback may call any function of
 * the library but nvmefs_ctrl_disconnect(), nvmefs_ctrl_stop_reconnect()
 * and the callback setters included.  A callback that blocks delays the
 * callbacks after it, not the controller.
 */
typedef void (*nvmefs_ctrl_event_cb)(void *arg, const struct nvmefs_ctrl_status *st,
				     const char *msg);
/**
 * Set (or with NULL clear) the transition callback of @ctrl.  Once this
 * returns, the old callback is not running and is not called again (unless
 * called from a callback of @ctrl, which does not wait for itself).
 */
void nvmefs_ctrl_set_event_cb(struct nvmefs_ctrl *ctrl, nvmefs_ctrl_event_cb cb, void *arg);

/** What changed on the target, for nvmefs_ctrl_set_change_cb(). */
enum nvmefs_ctrl_change {
	/** Namespaces were added, removed, resized or replaced: see
	 *  nvmefs_ctrl_ns_list() and nvmefs_ns_info() (-ENODEV: gone). */
	NVMEFS_CHANGE_NAMESPACES,
	/** A discovery controller's log changed: read it again. */
	NVMEFS_CHANGE_DISCOVERY_LOG,
	/** Asymmetric Namespace Access states changed: see nvmefs_ns_ana_state(). */
	NVMEFS_CHANGE_ANA,
};

/**
 * Called when the controller reports a change with an Asynchronous Event
 * (Namespace Attribute Changed, Discovery Log Page Change), after the
 * library has taken it in, and after every reconnect (what changed while
 * it was away was not reported); from the same thread as the transition
 * callback, in order with it.  A change not yet told is told once.  No lock
 * of the library is held: the callback may send admin commands, and may
 * block without holding up the controller's Keep Alive, recovery or
 * deadlines.
 */
typedef void (*nvmefs_ctrl_change_cb)(void *arg, enum nvmefs_ctrl_change what);
/**
 * Set (or with NULL clear) the change callback of @ctrl, waiting as
 * nvmefs_ctrl_set_event_cb() does.  Asynchronous Event Requests are kept
 * outstanding on a controller that offers the events and has a keep-alive
 * (its own thread), callback or not.
 */
void nvmefs_ctrl_set_change_cb(struct nvmefs_ctrl *ctrl, nvmefs_ctrl_change_cb cb, void *arg);

/**
 * Stop reconnecting, as when a user gives up on an outage: a controller
 * that is not live is deleted now and its held I/O fails; a live one is
 * deleted at its next failure instead of reconnecting.  For shutting down
 * without waiting up to ctrl_loss_tmo for I/O held by an outage.
 */
void nvmefs_ctrl_stop_reconnect(struct nvmefs_ctrl *ctrl);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_STATE_H */
