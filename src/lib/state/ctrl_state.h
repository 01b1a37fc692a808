/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controller's state has one owner: ctrl_state.c performs every
 * transition and refuses those not in its table, as Linux's
 * nvme_change_ctrl_state() does.  recover.c decides when to fail, give up
 * or reconnect, and asks for the transition.
 */
#ifndef NVMEFS_CTRL_STATE_H
#define NVMEFS_CTRL_STATE_H

#include <stdbool.h>

#include "../types/ctrl_types.h"
#include "nvmefs/nvmefs.h"

/*
 * Moves @ctrl to @to, under state_lock, with what entering @to brings:
 * status.since_ms; leaving new or live for resetting or deleted begins an
 * outage (its cause, status.error, is set by the caller first), bumps gen
 * and sets failed; live clears failed and io_failing (and counts the
 * outage when it ends one); deleted sets io_failing.  Every waiter on
 * state_cond is woken.  Returns 0, or -EINVAL (with a message) for a
 * transition not in the table, the state unchanged.
 */
int nvmefs_ctrl_change_state(struct nvmefs_ctrl *ctrl, enum ctrl_state to);
/* In an outage, once fast_io_fail_tmo passed: held and new I/O fail while
 * reconnecting goes on.  Under state_lock; whether it was not so already. */
bool nvmefs_ctrl_fail_io(struct nvmefs_ctrl *ctrl);
/* What nvmefs_ctrl_status() tells of @state. */
enum nvmefs_ctrl_state nvmefs_ctrl_public_state(enum ctrl_state state);
const char *nvmefs_ctrl_state_str(enum ctrl_state state);

/* nvmefs_ctrl_status() under state_lock. */
void nvmefs_ctrl_status_locked(struct nvmefs_ctrl *ctrl, struct nvmefs_ctrl_status *st);
/* The controller failed: a live one starts recovering (the first failure
 * of an outage wins) and its I/O queues' owners are woken. */
void nvmefs_ctrl_fail(struct nvmefs_ctrl *ctrl, int err, const char *msg);
/* Whether the calling thread may use the controller's queues: it is live,
 * or this is the controller's own thread reconnecting it. */
bool nvmefs_ctrl_usable(const struct nvmefs_ctrl *ctrl);
/* An I/O queue's owner stopped its queue for failure @gen. */
void nvmefs_ctrl_queue_stopped(struct nvmefs_ctrl *ctrl);
/* Tells the caller's event callback @fmt... with the status as it is now,
 * from the notifier thread; returns at once.  Not under state_lock. */
__attribute__((format(printf, 2, 3)))
void nvmefs_ctrl_emit(struct nvmefs_ctrl *ctrl, const char *fmt, ...);
/* The same under state_lock, right after the transition it tells: queued
 * in the order of the transitions, never after a later one's. */
__attribute__((format(printf, 2, 3)))
void nvmefs_ctrl_emit_locked(struct nvmefs_ctrl *ctrl, const char *fmt, ...);
/* Wake every I/O queue's owner: the controller's state changed. */
void nvmefs_io_wake(struct nvmefs_ctrl *ctrl);
/* A "traddr:trsvcid" label for messages, with IPv6 in brackets. */
const char *nvmefs_ctrl_where(const struct nvmefs_ctrl *ctrl);
/* The outage's reason in the status, under state_lock. */
void nvmefs_ctrl_set_reason(struct nvmefs_ctrl *ctrl, const char *msg);

#endif
