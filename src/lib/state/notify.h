/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The notifier's queue, as ctrl_state.c fills it: an event is a notice
 * taken with nvmefs_notice_event(), filled in (message, status) and
 * posted; the notifier thread tells it (notify.c).
 */
#ifndef NVMEFS_NOTIFY_H
#define NVMEFS_NOTIFY_H

#include "../types/ctrl_types.h"

struct nvmefs_notice {
	struct nvmefs_notice *next;
	bool change;
	enum nvmefs_ctrl_change what;
	struct nvmefs_ctrl_status st;
	/* One size for every notice (a message is cut at 1 KiB, as before the
	 * notifier): they are made on one thread and freed on another, and
	 * messages of every length left the allocator's per-thread caches
	 * holding a little more after each outage. */
	char msg[1024];
};

/* A notice for an event, or NULL when no event callback would take it
 * (none set, or the notifier stopped) or memory is short. */
struct nvmefs_notice *nvmefs_notice_event(struct nvmefs_notifier *n);
/* Queues @notice for the event callback; the oldest event goes when the
 * queue is full. */
void nvmefs_notify_post(struct nvmefs_notifier *n, struct nvmefs_notice *notice);

/* The notifier thread, started once the controller is up and
 * stopped (after telling what is queued) as it goes. */
void nvmefs_notify_init(struct nvmefs_notifier *n);
int nvmefs_notify_start(struct nvmefs_notifier *n);
/* Tells what is queued and joins the thread; nothing is queued after it. */
void nvmefs_notify_stop(struct nvmefs_notifier *n);
void nvmefs_notify_fini(struct nvmefs_notifier *n);
/* Tells the caller's change callback, from the notifier thread; returns
 * at once. */
void nvmefs_ctrl_changed(struct nvmefs_ctrl *ctrl, enum nvmefs_ctrl_change what);

#endif
