/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controller's recovery policy and its own thread: Keep Alive while it
 * is live, and recovery after a failure, as Linux's nvme-rdma error
 * recovery and reconnect work do it.  The states and the transitions
 * between them are ctrl_state.c's; this file decides when to ask for one.
 *
 * Any thread may notice a failure (nvmefs_ctrl_fail(), ctrl_state.c): a
 * CM event or a work completion error on a queue, a timeout, a failed
 * Keep Alive, a protocol violation.  Each I/O queue is then stopped by the thread that
 * polls it, because only that thread may touch it: it stops posting, has
 * the transport take the queue pair down and wait for every flush, and
 * only then takes its requests back for resubmission (io_poll.c).  This thread
 * waits for that, tears the transports down and reconnects the admin queue
 * and every I/O queue in place, so the queues' owners keep their handles.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aen.h"
#include "recover.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../ctrl/admin.h"
#include "../ctrl/ctrl_setup.h"
#include "../io/io_queues.h"
#include "../io/namespaces.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../state/notify.h"
#include "../transport/mr.h"
#include "../transport/queue.h"

/* The first attempt goes at once, then the pause doubles from this. */
#define FIRST_BACKOFF_MS 250
/* After an attempt that started this early in an outage the pause grows to
 * YOUNG_PAUSE_MAX_MS at most, not to reconnect_delay. */
#define YOUNG_OUTAGE_MS 60000
#define YOUNG_PAUSE_MAX_MS 1000
/* While the target refuses at once, it is looked at again this soon, or
 * after four times what the refused attempt took if that is longer. */
#define REFUSED_PROBE_MS 100
/* How often the thread looks at the queues' owners while they stop. */
#define STOP_CHECK_MS 100
/* How often a live controller's admin queue is looked at: for connection
 * events (the target closing it) and an asynchronous event's completion. */
#define ADMIN_TICK_MS 100

/* ---------------------------------------------------------------------- */
/* The controller's thread                                                 */
/* ---------------------------------------------------------------------- */

static struct timespec abs_time(int64_t ms)
{
	return (struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
}

/* Under state_lock: sleeps until @until_ms, a state change, or stop. */
static void wait_until(struct nvmefs_ctrl *ctrl, int64_t until_ms)
{
	struct timespec ts = abs_time(until_ms);

	pthread_cond_timedwait(&ctrl->state_cond, &ctrl->state_lock, &ts);
}

/* The outage's deadlines, under state_lock; returns the next one (or INT64_MAX). */
static int64_t check_deadlines(struct nvmefs_ctrl *ctrl, const char **what)
{
	int64_t now = nvmefs_now_ms(), next = INT64_MAX;
	const struct nvmefs_connect_opts *o = &ctrl->opts;

	*what = NULL;
	if (ctrl->state != CTRL_RESETTING && ctrl->state != CTRL_CONNECTING)
		return next;
	if (o->ctrl_loss_tmo_s > 0) {
		int64_t at = ctrl->outage_start_ms + (int64_t)o->ctrl_loss_tmo_s * 1000;

		if (now >= at) {
			nvmefs_ctrl_change_state(ctrl, CTRL_DELETED);
			*what = "ctrl_loss_tmo";
			return next;
		}
		next = at;
	}
	if (o->fast_io_fail_tmo_s >= 0 && !atomic_load(&ctrl->io_failing)) {
		int64_t at = ctrl->outage_start_ms + (int64_t)o->fast_io_fail_tmo_s * 1000;

		if (now >= at) {
			nvmefs_ctrl_fail_io(ctrl);
			*what = "fast_io_fail_tmo";
		} else if (at < next) {
			next = at;
		}
	}
	return next;
}

/* check_deadlines(), then tells what passed (drops and retakes state_lock). */
static int64_t deadlines(struct nvmefs_ctrl *ctrl)
{
	const char *what;
	int64_t next = check_deadlines(ctrl, &what);

	if (!what)
		return next;
	pthread_mutex_unlock(&ctrl->state_lock);
	nvmefs_io_wake(ctrl);
	if (!strcmp(what, "ctrl_loss_tmo"))
		nvmefs_ctrl_emit(ctrl, "%s at %s: not reconnected within ctrl_loss_tmo (%d s): deleted, its I/O "
		     "fails", ctrl->subnqn, nvmefs_ctrl_where(ctrl), ctrl->opts.ctrl_loss_tmo_s);
	else
		nvmefs_ctrl_emit(ctrl, "%s at %s: fast_io_fail_tmo (%d s) passed: held I/O fails while "
		     "reconnecting goes on", ctrl->subnqn, nvmefs_ctrl_where(ctrl),
		     ctrl->opts.fast_io_fail_tmo_s);
	pthread_mutex_lock(&ctrl->state_lock);
	return next;
}

static void keep_alive(struct nvmefs_ctrl *ctrl)
{
	union nvmefs_cmd cmd;
	char msg[600];
	int ret;

	nvmefs_sqe_init(&cmd.sqe, nvme_admin_keep_alive, 0);
	/* Missed after KATO, as Linux times its Keep Alive out, or sooner if
	 * --timeout asks. */
	ret = nvmefs_admin_exec_within(ctrl, &cmd, ctrl->kato_ms < ctrl->opts.timeout_ms
				       ? ctrl->kato_ms : ctrl->opts.timeout_ms);
	if (ret == 0)
		return;
	/* A failed Keep Alive fails the controller, so I/O stops promptly
	 * instead of hanging on a target that has already let go. */
	snprintf(msg, sizeof(msg), "keep-alive to %s failed: %s", ctrl->subnqn,
		 ret == -EREMOTEIO ? "the controller refused it" : nvmefs_errmsg());
	nvmefs_ctrl_fail(ctrl, ret == -EREMOTEIO ? -EIO : ret, msg);
}

/*
 * Resetting: the admin queue is stopped here (under its lock, which a
 * caller in the middle of a command gives up within 100 ms once it sees
 * the failure); each I/O queue by its owner.  Then the transports go.
 * Called and returns with state_lock held.
 */
static void reset(struct nvmefs_ctrl *ctrl)
{
	unsigned int gen = atomic_load(&ctrl->gen);
	bool stopped;

	pthread_mutex_unlock(&ctrl->state_lock);
	pthread_mutex_lock(&ctrl->admin_lock);
	nvmefs_queue_stop(&ctrl->admin, atomic_load(&ctrl->failed));
	pthread_mutex_unlock(&ctrl->admin_lock);
	pthread_mutex_lock(&ctrl->state_lock);
	for (;;) {
		deadlines(ctrl);
		if (ctrl->svc_stop || ctrl->state == CTRL_LIVE)
			return;
		pthread_mutex_unlock(&ctrl->state_lock);
		stopped = nvmefs_io_all_stopped(ctrl, gen);
		pthread_mutex_lock(&ctrl->state_lock);
		if (stopped)
			break;
		wait_until(ctrl, nvmefs_now_ms() + STOP_CHECK_MS);
	}
	pthread_mutex_unlock(&ctrl->state_lock);
	nvmefs_io_disconnect(ctrl);
	nvmefs_ctrl_admin_down(ctrl);
	/* A removed device goes only once every user has let go of it. */
	if (atomic_load(&ctrl->failed) == -ENODEV)
		nvmefs_ctrl_release_device(ctrl);
	pthread_mutex_lock(&ctrl->state_lock);
	if (ctrl->state == CTRL_RESETTING) {
		nvmefs_ctrl_change_state(ctrl, CTRL_CONNECTING);
		pthread_mutex_unlock(&ctrl->state_lock);
		nvmefs_ctrl_emit(ctrl, "%s at %s: queues stopped and drained; reconnecting", ctrl->subnqn,
		     nvmefs_ctrl_where(ctrl));
		pthread_mutex_lock(&ctrl->state_lock);
	}
}

/* Connects everything again in place; on failure leaves nothing connected. */
static int reconnect(struct nvmefs_ctrl *ctrl)
{
	struct nvme_id_ctrl *id = malloc(sizeof(*id));
	int ret;

	if (!id)
		return nvmefs_error(-ENOMEM, "out of memory");
	ret = nvmefs_ctrl_admin_up(ctrl, id);
	/* Before the I/O queues connect: a TCP queue takes its in-capsule
	 * size as it is created, and the held I/O goes once they are up. */
	if (ret == 0)
		nvmefs_io_take_limits(ctrl, id);
	if (ret == 0)
		ret = nvmefs_ctrl_register_again(ctrl);
	if (ret == 0)
		ret = nvmefs_io_reconnect(ctrl);
	if (ret < 0) {
		nvmefs_io_disconnect(ctrl);
		nvmefs_ctrl_admin_down(ctrl);
		/*
		 * An outage that outlasts an attempt may be the device itself
		 * going (a link down can break it for good, and a NIC reset
		 * re-creates it), and its removal waits for our registrations:
		 * let go of it until an attempt gets through.
		 */
		nvmefs_ctrl_release_device(ctrl);
	}
	free(id);
	return ret;
}

/* Pauses double from FIRST_BACKOFF_MS up to @cap_ms. */
static int64_t doubling_ms(int64_t cap_ms, unsigned int n)
{
	int64_t ms;

	if (n <= 1)
		return 0;
	ms = n - 2 >= 16 ? cap_ms : (int64_t)FIRST_BACKOFF_MS << (n - 2);
	return ms < cap_ms ? ms : cap_ms;
}

/*
 * The first attempt goes at once, then the pause doubles, but only up to
 * YOUNG_PAUSE_MAX_MS after an attempt that started in the outage's first
 * YOUNG_OUTAGE_MS, and to reconnect_delay after that.  Most outages (a
 * port relinked, a target restarted, a link flap) end within a minute,
 * and a pause doubled to reconnect_delay by then left I/O waiting most of
 * one after the target was back (16 s for an 8 s outage with the default
 * 10 s).  An attempt against a target that is away costs a resolve that
 * times out or a connect that is refused at once, in one sleeping thread.
 */
int64_t nvmefs_reconnect_pause_ms(int delay_s, unsigned int n, int64_t started_ms)
{
	int64_t cap = (int64_t)delay_s * 1000;

	if (started_ms < YOUNG_OUTAGE_MS && cap > YOUNG_PAUSE_MAX_MS)
		cap = YOUNG_PAUSE_MAX_MS;
	return doubling_ms(cap, n);
}

/* Connecting: one attempt when it is due.  Called and returns with state_lock held. */
static void connecting(struct nvmefs_ctrl *ctrl, int64_t *next_attempt)
{
	int64_t now = nvmefs_now_ms(), next = deadlines(ctrl), outage, took, pause, sched, probe;
	int64_t started = now - ctrl->outage_start_ms;
	unsigned int attempt, connected;
	char msg[512], fewer[128] = "";
	bool repeat;
	int ret;

	if (ctrl->state != CTRL_CONNECTING || ctrl->svc_stop)
		return;
	if (now < *next_attempt) {
		wait_until(ctrl, next < *next_attempt ? next : *next_attempt);
		return;
	}
	attempt = ++ctrl->status.attempts;
	pthread_mutex_unlock(&ctrl->state_lock);
	ret = reconnect(ctrl);
	snprintf(msg, sizeof(msg), "%s", ret < 0 ? nvmefs_errmsg() : "");
	pthread_mutex_lock(&ctrl->state_lock);
	took = nvmefs_now_ms() - now;
	if (ret == 0 && ctrl->state != CTRL_CONNECTING) {
		/* Given up while the attempt ran: what it connected goes again. */
		pthread_mutex_unlock(&ctrl->state_lock);
		nvmefs_io_disconnect(ctrl);
		nvmefs_ctrl_admin_down(ctrl);
		pthread_mutex_lock(&ctrl->state_lock);
		return;
	}
	if (ret == 0) {
		connected = atomic_load(&ctrl->nr_connected_ioqs);
		if (connected < ctrl->nr_ioqs)
			snprintf(fewer, sizeof(fewer), "; the target grants only %u of the %u I/O "
				 "queues: the others' I/O goes through them", connected, ctrl->nr_ioqs);
		nvmefs_ctrl_change_state(ctrl, CTRL_LIVE);
		outage = ctrl->status.since_ms - ctrl->outage_start_ms;
		pthread_mutex_unlock(&ctrl->state_lock);
		nvmefs_io_wake(ctrl);
		nvmefs_ctrl_emit(ctrl, "%s at %s: reconnected (controller %u) after %u attempt%s and %lld ms%s%s",
		     ctrl->subnqn, nvmefs_ctrl_where(ctrl), ctrl->cntlid, attempt,
		     attempt == 1 ? "" : "s", (long long)outage,
		     ctrl->nr_ioqs ? "; held I/O is sent again" : "", fewer);
		/* What changed while we were away raised no event for us. */
		nvmefs_aen_enable(ctrl);
		if (!ctrl->discovery)
			nvmefs_io_rescan(ctrl);
		nvmefs_ctrl_changed(ctrl, ctrl->discovery ? NVMEFS_CHANGE_DISCOVERY_LOG
				    : NVMEFS_CHANGE_NAMESPACES);
		pthread_mutex_lock(&ctrl->state_lock);
		return;
	}
	/* Given up while the attempt ran: that was told, and nothing after it
	 * may say that another attempt comes. */
	if (ctrl->state != CTRL_CONNECTING)
		return;
	repeat = strcmp(msg, ctrl->status.reason) == 0;
	nvmefs_ctrl_set_reason(ctrl, msg);
	ctrl->status.error = ret;
	if (ret == -ESTALE) {
		/* Not the same subsystem: nothing may be written to it. */
		nvmefs_ctrl_change_state(ctrl, CTRL_DELETED);
		pthread_mutex_unlock(&ctrl->state_lock);
		nvmefs_io_wake(ctrl);
		nvmefs_ctrl_emit(ctrl, "%s: deleted, its I/O fails", msg);
		pthread_mutex_lock(&ctrl->state_lock);
		return;
	}
	now = nvmefs_now_ms();
	pause = sched = nvmefs_reconnect_pause_ms(ctrl->opts.reconnect_delay_s, attempt + 1, started);
	/*
	 * Refused at once (nothing listens on the port, or the target turned
	 * the Connect down): the target's host is up and only its port or
	 * subsystem is not back yet, which costs it nothing to tell us again.
	 * Looking again soon, rather than a whole pause later, is what lets a
	 * restarted target be used as soon as it listens; the pause stays at
	 * least four times the attempt, so probing takes a fifth of the time
	 * at most.
	 */
	if (ret == -ECONNREFUSED) {
		probe = took * 4 > REFUSED_PROBE_MS ? took * 4 : REFUSED_PROBE_MS;
		if (probe < pause)
			pause = probe;
	}
	*next_attempt = now + pause;
	/* The same failure again is told once per pause of the schedule as it
	 * would be without the short pauses of a young outage: a few lines in
	 * its first minute, then one per reconnect_delay. */
	if (repeat && now < ctrl->next_report_ms)
		return;
	ctrl->next_report_ms = now + doubling_ms((int64_t)ctrl->opts.reconnect_delay_s * 1000,
						 attempt + 1);
	/* Under state_lock: a give-up after it is told after it. */
	nvmefs_ctrl_emit_locked(ctrl, "%s at %s: reconnect attempt %u failed: %s; next in %.2f s%s",
				ctrl->subnqn, nvmefs_ctrl_where(ctrl), attempt, msg,
				(double)pause / 1000,
				pause < sched ? ", and as often while refused at once" : "");
}

static int64_t ka_period_ms(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->kato_ms / 4;
}

static void *ctrl_thread(void *arg)
{
	struct nvmefs_ctrl *ctrl = arg;
	int64_t next_ka = nvmefs_now_ms() + ka_period_ms(ctrl), next_attempt = 0, now;

	nvmefs_aen_enable(ctrl);
	pthread_mutex_lock(&ctrl->state_lock);
	while (!ctrl->svc_stop) {
		switch (ctrl->state) {
		case CTRL_LIVE:
			pthread_mutex_unlock(&ctrl->state_lock);
			nvmefs_admin_tick(ctrl);
			pthread_mutex_lock(&ctrl->state_lock);
			if (ctrl->state != CTRL_LIVE || ctrl->svc_stop)
				break;
			/* Without commands the controller drops us after KATO.
			 * A silent link is found when a Keep Alive times out,
			 * so one goes every KATO/4 from the last one's start
			 * (its round trip not added), whatever the I/O: found
			 * 1 to 1.25 KATO after the link fell silent.  Linux,
			 * with the traffic based keep-alive nvmet offers,
			 * looks every KATO/4 but skips a Keep Alive when
			 * commands completed since: 1.25 to 1.5 KATO under I/O. */
			now = nvmefs_now_ms();
			if (ctrl->kato_ms && now >= next_ka) {
				pthread_mutex_unlock(&ctrl->state_lock);
				keep_alive(ctrl);
				pthread_mutex_lock(&ctrl->state_lock);
				next_ka = now + ka_period_ms(ctrl);
				break;
			}
			wait_until(ctrl, ctrl->kato_ms && next_ka < now + ADMIN_TICK_MS ? next_ka
				   : now + ADMIN_TICK_MS);
			break;
		case CTRL_RESETTING:
			reset(ctrl);
			next_attempt = 0;
			break;
		case CTRL_CONNECTING:
			connecting(ctrl, &next_attempt);
			if (ctrl->state == CTRL_LIVE)
				next_ka = nvmefs_now_ms() + ka_period_ms(ctrl);
			break;
		/* Started once live: never new here. */
		case CTRL_NEW:
		case CTRL_DELETED:
			pthread_cond_wait(&ctrl->state_cond, &ctrl->state_lock);
			break;
		}
	}
	pthread_mutex_unlock(&ctrl->state_lock);
	return NULL;
}

int nvmefs_ctrl_start_thread(struct nvmefs_ctrl *ctrl)
{
	int ret;

	/* A discovery controller without keep-alive is read once and let go. */
	if (!ctrl->kato_ms && (ctrl->discovery || ctrl->opts.ctrl_loss_tmo_s == 0))
		return 0;
	/* svc_running is set before the thread looks at it (nvmefs_ctrl_usable). */
	pthread_mutex_lock(&ctrl->state_lock);
	ctrl->svc_running = true;
	ret = pthread_create(&ctrl->svc_thread, NULL, ctrl_thread, ctrl);
	if (ret)
		ctrl->svc_running = false;
	else	/* Its CPU time, apart from the caller's threads', in top -H and /proc. */
		pthread_setname_np(ctrl->svc_thread, "nvmefs-ctrl");
	pthread_mutex_unlock(&ctrl->state_lock);
	if (ret)
		return nvmefs_error(-ret, "starting the controller's thread failed: %s", strerror(ret));
	return 0;
}

void nvmefs_ctrl_stop_thread(struct nvmefs_ctrl *ctrl)
{
	if (!ctrl->svc_running)
		return;
	pthread_mutex_lock(&ctrl->state_lock);
	ctrl->svc_stop = true;
	pthread_cond_broadcast(&ctrl->state_cond);
	pthread_mutex_unlock(&ctrl->state_lock);
	pthread_join(ctrl->svc_thread, NULL);
	ctrl->svc_running = false;
}
