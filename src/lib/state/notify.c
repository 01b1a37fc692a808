/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller's event and change callbacks, called by a thread of the
 * controller's own that does nothing else.  Any thread may have something
 * to tell (an I/O queue's owner that saw the failure, the controller's
 * thread as it recovers, an asynchronous event): it queues a notice and
 * goes on.  So a callback runs on no thread of the caller's and on no
 * thread the controller needs: one that blocks (a FUSE notification
 * waiting for a request to finish) holds up later callbacks only, never
 * the controller's Keep Alive, recovery or deadlines; and no lock of the
 * library is held while it runs, so it may call back into the library,
 * including nvmefs_ctrl_stop_reconnect() and the setters below.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../types/ctrl_types.h"
#include "notify.h"
#include "../base/error.h"

/* Events waiting beyond this drop the oldest: a callback that does not
 * return must not make the controller's memory grow without end, and the
 * last event told must still be the controller's last transition. */
#define MAX_QUEUED 1024

static void *notifier_main(void *arg)
{
	struct nvmefs_notifier *n = arg;
	struct nvmefs_notice *notice;
	nvmefs_ctrl_event_cb event_cb;
	nvmefs_ctrl_change_cb change_cb;
	void *event_arg, *change_arg;
	unsigned int dropped;
	char msg[sizeof(notice->msg) + 128];

	pthread_mutex_lock(&n->lock);
	for (;;) {
		while (!n->head && !n->stop)
			pthread_cond_wait(&n->cond, &n->lock);
		/* What was told before the controller went is still told. */
		if (!n->head)
			break;
		notice = n->head;
		n->head = notice->next;
		if (!n->head)
			n->tail = NULL;
		n->queued--;
		dropped = 0;
		if (notice->change) {
			n->changes_queued &= ~(1u << notice->what);
		} else {
			dropped = n->dropped;
			n->dropped = 0;
		}
		event_cb = n->event_cb;
		event_arg = n->event_arg;
		change_cb = n->change_cb;
		change_arg = n->change_arg;
		n->delivering = true;
		pthread_mutex_unlock(&n->lock);
		if (notice->change && change_cb)
			change_cb(change_arg, notice->what);
		else if (!notice->change && event_cb && !dropped)
			event_cb(event_arg, &notice->st, notice->msg);
		else if (!notice->change && event_cb) {
			snprintf(msg, sizeof(msg), "%s (%u events before it were not told: the "
				 "event callback fell %d behind)", notice->msg, dropped, MAX_QUEUED);
			event_cb(event_arg, &notice->st, msg);
		}
		free(notice);
		pthread_mutex_lock(&n->lock);
		n->delivering = false;
		n->delivered++;
		pthread_cond_broadcast(&n->idle);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

void nvmefs_notify_init(struct nvmefs_notifier *n)
{
	memset(n, 0, sizeof(*n));
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	pthread_cond_init(&n->idle, NULL);
}

int nvmefs_notify_start(struct nvmefs_notifier *n)
{
	int ret = pthread_create(&n->thread, NULL, notifier_main, n);

	if (ret)
		return nvmefs_error(-ret, "starting the controller's notifier thread failed: %s",
				    strerror(ret));
	pthread_setname_np(n->thread, "nvmefs-notify");
	n->running = true;
	return 0;
}

void nvmefs_notify_stop(struct nvmefs_notifier *n)
{
	bool running;

	pthread_mutex_lock(&n->lock);
	running = n->running;
	n->stop = true;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (!running)
		return;
	pthread_join(n->thread, NULL);
	/* From now on nothing is queued: emit and changed look at running. */
	pthread_mutex_lock(&n->lock);
	n->running = false;
	pthread_mutex_unlock(&n->lock);
}

void nvmefs_notify_fini(struct nvmefs_notifier *n)
{
	struct nvmefs_notice *notice;

	nvmefs_notify_stop(n);
	while ((notice = n->head)) {
		n->head = notice->next;
		free(notice);
	}
	pthread_cond_destroy(&n->idle);
	pthread_cond_destroy(&n->cond);
	pthread_mutex_destroy(&n->lock);
}

/* Under n->lock, the new setting in place: a callback of the old setting
 * may still be under way on the notifier; the caller may free what it used
 * once this returns.  Only that one is waited for: the next takes the new
 * setting, and waiting for the notifier to be idle never ends while events
 * keep coming.  The notifier itself (a callback changing the callbacks)
 * does not wait for itself. */
static void wait_idle(struct nvmefs_notifier *n)
{
	unsigned long delivered = n->delivered;

	if (n->running && pthread_equal(pthread_self(), n->thread))
		return;
	while (n->delivering && n->delivered == delivered)
		pthread_cond_wait(&n->idle, &n->lock);
}

/* Under n->lock, the queue full: the oldest event goes (changes are few,
 * one of each kind at most). */
static void drop_oldest_event(struct nvmefs_notifier *n)
{
	struct nvmefs_notice **p, *prev = NULL, *old;

	for (p = &n->head; *p && (*p)->change; p = &(*p)->next)
		prev = *p;
	old = *p;
	if (!old)
		return;
	*p = old->next;
	if (n->tail == old)
		n->tail = prev;
	n->queued--;
	n->dropped++;
	free(old);
}

static void enqueue(struct nvmefs_notifier *n, struct nvmefs_notice *notice)
{
	notice->next = NULL;
	if (n->tail)
		n->tail->next = notice;
	else
		n->head = notice;
	n->tail = notice;
	n->queued++;
	pthread_cond_signal(&n->cond);
}

void nvmefs_ctrl_set_event_cb(struct nvmefs_ctrl *ctrl, nvmefs_ctrl_event_cb cb, void *arg)
{
	struct nvmefs_notifier *n = &ctrl->notify;

	pthread_mutex_lock(&n->lock);
	n->event_cb = cb;
	n->event_arg = arg;
	wait_idle(n);
	pthread_mutex_unlock(&n->lock);
}

void nvmefs_ctrl_set_change_cb(struct nvmefs_ctrl *ctrl, nvmefs_ctrl_change_cb cb, void *arg)
{
	struct nvmefs_notifier *n = &ctrl->notify;

	pthread_mutex_lock(&n->lock);
	n->change_cb = cb;
	n->change_arg = arg;
	wait_idle(n);
	pthread_mutex_unlock(&n->lock);
}

struct nvmefs_notice *nvmefs_notice_event(struct nvmefs_notifier *n)
{
	struct nvmefs_notice *notice;
	bool wanted;

	pthread_mutex_lock(&n->lock);
	wanted = n->event_cb && n->running;
	pthread_mutex_unlock(&n->lock);
	if (!wanted)
		return NULL;
	notice = malloc(sizeof(*notice));
	if (!notice)
		return NULL;
	notice->change = false;
	return notice;
}

void nvmefs_notify_post(struct nvmefs_notifier *n, struct nvmefs_notice *notice)
{
	pthread_mutex_lock(&n->lock);
	if (n->queued >= MAX_QUEUED)
		drop_oldest_event(n);
	enqueue(n, notice);
	pthread_mutex_unlock(&n->lock);
}

void nvmefs_ctrl_changed(struct nvmefs_ctrl *ctrl, enum nvmefs_ctrl_change what)
{
	struct nvmefs_notifier *n = &ctrl->notify;
	struct nvmefs_notice *notice;

	pthread_mutex_lock(&n->lock);
	/* A change not yet told is told once: the callback looks at the
	 * state as it is when it runs. */
	if (!n->change_cb || !n->running || (n->changes_queued & 1u << what)) {
		pthread_mutex_unlock(&n->lock);
		return;
	}
	notice = calloc(1, sizeof(*notice));
	if (notice) {
		notice->change = true;
		notice->what = what;
		n->changes_queued |= 1u << what;
		enqueue(n, notice);
	}
	pthread_mutex_unlock(&n->lock);
}
