/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a controller tells its user, against a scripted controller: the
 * messages of its failures and recovery, with what the target sent in them
 * made safe for a terminal and a log; and the callbacks that tell them,
 * called from the library's own thread, free to call back into it, and
 * unable to hold up the controller's recovery.
 *
 * One job, kept in one file past 700 lines: what notify.c and the state
 * owner tell the user, each case one scripted failure.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <nvme/types.h>

#include "test_util.h"
#include "fake_transport.h"
#include "lifecycle/ctrl.h"
#include "state/ctrl_state.h"
#include "types/ctrl_types.h"

#define TRADDR "192.0.2.20"
#define SUBNQN "nqn.2024-01.io.example:events"
#define CNTLID 3

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0)
		;
}

/* What the event callback saw, in order. */
#define MAX_EVENTS 32
static struct {
	pthread_mutex_t lock;
	unsigned int n;
	char msg[MAX_EVENTS][1024];
	enum nvmefs_ctrl_state state[MAX_EVENTS];
} seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void record_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)arg;
	pthread_mutex_lock(&seen.lock);
	if (seen.n < MAX_EVENTS) {
		snprintf(seen.msg[seen.n], sizeof(seen.msg[0]), "%s", msg);
		seen.state[seen.n] = st->state;
		seen.n++;
	}
	pthread_mutex_unlock(&seen.lock);
}

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p >= 0x80)
			return true;
	return false;
}

static void setup(void)
{
	fake_setup();
	memset(seen.msg, 0, sizeof(seen.msg));
	seen.n = 0;
}

/* An NVM subsystem @subnqn's controller without I/O queues that reconnects
 * after a failure until @ctrl_loss_s. */
static struct nvmefs_ctrl *connect_recovering_as(const char *subnqn, int ctrl_loss_s)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	fake_opts(&opts, TRADDR, 0);
	opts.subnqn = subnqn;
	opts.kato_ms = 0;
	opts.ctrl_loss_tmo_s = ctrl_loss_s;
	opts.reconnect_delay_s = 1;
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
	ck_assert_msg(ret == 0, "connect: %d: %s", ret, nvmefs_errmsg());
	return ctrl;
}

static struct nvmefs_ctrl *connect_recovering(int ctrl_loss_s)
{
	return connect_recovering_as(SUBNQN, ctrl_loss_s);
}

/* Waits up to @max_ms for @ctrl to be in @state. */
static void wait_state(struct nvmefs_ctrl *ctrl, enum nvmefs_ctrl_state state, int max_ms)
{
	struct nvmefs_ctrl_status st;
	int64_t end = now_ms() + max_ms;

	for (;;) {
		nvmefs_ctrl_status(ctrl, &st);
		if (st.state == state)
			return;
		ck_assert_msg(now_ms() < end, "the controller is %s after %d ms, not %s (%s)",
			      nvmefs_ctrl_state_name(st.state), max_ms,
			      nvmefs_ctrl_state_name(state), st.reason);
		sleep_ms(5);
	}
}

/*
 * After a reconnect another subsystem answers, its NQN full of escape
 * sequences and bytes that are not UTF-8: the reason (stats' last_error)
 * and the event (syslog, the terminal) say so, with those bytes escaped.
 */
START_TEST(test_other_subsystem_escaped)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	static const char evil[] = "nqn.evil\x1b]0;owned\x07\x1b[2J\xff\xc2\x9b";
	struct nvmefs_ctrl_status st;
	bool told = false;

	nvmefs_ctrl_set_event_cb(ctrl, record_event, NULL);
	fake_expect_destroy();
	/* The attempt: everything as before, but Identify names another subsystem. */
	memcpy(t.subnqn, evil, sizeof(evil) - 1);
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_expect_destroy();
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure");
	wait_state(ctrl, NVMEFS_CTRL_DELETED, 3000);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_msg(strstr(st.reason, "nqn.evil\\x1b]0;owned\\x07\\x1b[2J\\xff\\xc2\\x9b"),
		      "the reason does not show the NQN escaped: %s", st.reason);
	ck_assert_msg(!has_control(st.reason), "a raw byte of the target is in the reason");
	/* The event that told of it arrives; none carries a raw byte. */
	for (int64_t end = now_ms() + 3000; !told && now_ms() < end; sleep_ms(5)) {
		pthread_mutex_lock(&seen.lock);
		for (unsigned int i = 0; i < seen.n; i++) {
			ck_assert_msg(!has_control(seen.msg[i]), "event %u has a raw byte: %s", i,
				      seen.msg[i]);
			told |= strstr(seen.msg[i], "nqn.evil\\x1b") != NULL;
		}
		pthread_mutex_unlock(&seen.lock);
	}
	ck_assert_msg(told, "no event told of the other subsystem");
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/*
 * The session's NQN as long as the user may give it (NVMF_NQN_SIZE, 223
 * characters): a reconnect that finds it in Identify's 256-byte SUBNQN with
 * NULs after it is back; one that finds more characters after it, up to the
 * whole field without a NUL, reached another subsystem (however malformed its
 * NQN) and deletes the controller at once (ctrl_loss_tmo is 10 s), the reason
 * showing the whole of that NQN.
 */
START_TEST(test_longest_nqn_compared_whole)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	static const size_t tails[] = { 1, sizeof(t.subnqn) - NVMF_NQN_SIZE };
	char nqn[NVMF_NQN_SIZE + 1], other[sizeof(t.subnqn) + 1];
	struct nvmefs_ctrl_status st;
	struct nvmefs_ctrl *ctrl;

	memset(nqn, 'q', NVMF_NQN_SIZE);
	memcpy(nqn, "nqn.", 4);
	nqn[NVMF_NQN_SIZE] = '\0';
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		ctrl = connect_recovering_as(nqn, 10);
		/* The same subsystem: back, and its namespaces looked at again. */
		fake_expect_destroy();
		memset(t.subnqn, 0, sizeof(t.subnqn));
		memcpy(t.subnqn, nqn, NVMF_NQN_SIZE);
		fake_script_connect_kato(TRADDR, "4420", &t, 0);
		fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, NULL, 0));
		nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure 1");
		wait_state(ctrl, NVMEFS_CTRL_LIVE, 3000);
		nvmefs_ctrl_status(ctrl, &st);
		ck_assert_uint_eq(st.reconnects, 1);

		/* The same 223 characters and more: another subsystem. */
		fake_expect_destroy();
		memset(t.subnqn + NVMF_NQN_SIZE, 'x', tails[i]);
		fake_script_connect_kato(TRADDR, "4420", &t, 0);
		fake_expect_destroy();
		nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure 2");
		wait_state(ctrl, NVMEFS_CTRL_DELETED, 3000);
		nvmefs_ctrl_status(ctrl, &st);
		memcpy(other, t.subnqn, sizeof(t.subnqn));
		other[NVMF_NQN_SIZE + tails[i]] = '\0';
		ck_assert_msg(strstr(st.reason, other), "%zu characters more: %s", tails[i],
			      st.reason);
		nvmefs_ctrl_disconnect(ctrl);
		fake_assert_done();
		fake_reset();
	}
}
END_TEST

/*
 * Both NQNs as long as the user may give them (223 characters): the reason
 * (stats' last_error) that another subsystem took the place of the session's
 * is told whole, not cut at its 512 bytes.
 */
START_TEST(test_other_subsystem_reason_whole)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	static const char tail[] = "another subsystem took its place";
	char nqn[NVMF_NQN_SIZE + 1], other[NVMF_NQN_SIZE + 1];
	struct nvmefs_ctrl_status st;
	struct nvmefs_ctrl *ctrl;
	size_t len;

	memset(nqn, 'q', NVMF_NQN_SIZE);
	memcpy(nqn, "nqn.", 4);
	nqn[NVMF_NQN_SIZE] = '\0';
	memcpy(other, nqn, sizeof(other));
	other[NVMF_NQN_SIZE - 1] = 'r';
	ctrl = connect_recovering_as(nqn, 10);
	fake_expect_destroy();
	memcpy(t.subnqn, other, NVMF_NQN_SIZE);
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_expect_destroy();
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure");
	wait_state(ctrl, NVMEFS_CTRL_DELETED, 3000);
	nvmefs_ctrl_status(ctrl, &st);
	len = strlen(st.reason);
	ck_assert_msg(len >= sizeof(tail) - 1 && !strcmp(st.reason + len - (sizeof(tail) - 1), tail),
		      "the reason is cut: %s", st.reason);
	ck_assert_msg(strstr(st.reason, other), "the reason does not name %s: %s", other,
		      st.reason);
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/*
 * The first connect: a controller whose Identify names another subsystem
 * than the one asked for (the same 223 characters and one more, or another
 * one) is refused, in one line naming what it answered.  One naming the
 * subsystem asked for, or none (before NVMe 1.2.1), is taken.
 */
START_TEST(test_first_connect_other_subsystem_refused)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	char nqn[NVMF_NQN_SIZE + 1], longer[NVMF_NQN_SIZE + 2];
	const char *answers[] = { longer, SUBNQN };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	memset(nqn, 'q', NVMF_NQN_SIZE);
	memcpy(nqn, "nqn.", 4);
	nqn[NVMF_NQN_SIZE] = '\0';
	memcpy(longer, nqn, NVMF_NQN_SIZE);
	memcpy(longer + NVMF_NQN_SIZE, "x", 2);
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		fake_opts(&opts, TRADDR, 0);
		opts.subnqn = nqn;
		opts.kato_ms = 0;
		memset(t.subnqn, 0, sizeof(t.subnqn));
		memcpy(t.subnqn, answers[i], strlen(answers[i]));
		fake_script_connect_kato(TRADDR, "4420", &t, 0);
		fake_expect_destroy();
		ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
		ck_assert_msg(ret == -ESTALE, "answering as %s: %d (%s)", answers[i], ret,
			      nvmefs_errmsg());
		ck_assert_msg(strstr(nvmefs_errmsg(), answers[i]) && !strchr(nvmefs_errmsg(), '\n'),
			      "the message does not name %s in one line: %s", answers[i],
			      nvmefs_errmsg());
		fake_assert_done();
		fake_reset();
	}
	for (size_t i = 0; i < 2; i++) {
		memset(t.subnqn, 0, sizeof(t.subnqn));
		if (i)
			memcpy(t.subnqn, nqn, NVMF_NQN_SIZE);
		fake_script_connect_kato(TRADDR, "4420", &t, 0);
		ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
		ck_assert_msg(ret == 0, "answering as %s: %d (%s)", t.subnqn, ret, nvmefs_errmsg());
		fake_script_disconnect();
		nvmefs_ctrl_disconnect(ctrl);
		fake_assert_done();
		fake_reset();
	}
}
END_TEST

/*
 * Discovery by the well-known NQN reaches whatever discovery controller
 * listens: one that names its own unique discovery NQN (TP 8013), as nvmet
 * does when given one, is taken, as nvme-cli takes it.
 */
START_TEST(test_first_connect_discovery_any_nqn)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400 };
	static const char *const answers[] = { NVME_DISC_SUBSYS_NAME,
					       "nqn.2024-01.io.example:discovery" };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		fake_opts(&opts, TRADDR, 0);
		memset(t.subnqn, 0, sizeof(t.subnqn));
		memcpy(t.subnqn, answers[i], strlen(answers[i]));
		fake_script_connect(TRADDR, "4420", &t);
		ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
		ck_assert_msg(ret == 0, "answering as %s: %d (%s)", answers[i], ret,
			      nvmefs_errmsg());
		fake_script_disconnect();
		nvmefs_ctrl_disconnect(ctrl);
		fake_assert_done();
		fake_reset();
	}
}
END_TEST

/*
 * The reason (stats' last_error) and the -errno (stats' error) tell the same
 * failure: once a reconnect attempt is refused, both are the refusal, not
 * the reset that began the outage.
 */
START_TEST(test_error_agrees_with_reason)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct fake_step *s;

	fake_expect_destroy();
	s = fake_expect_create(TRADDR, "4420");
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "%s refused the connection (scripted)",
		 TRADDR);
	fake_repeat(s, 1, 1000);
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted reset");
	for (int64_t end = now_ms() + 3000;; sleep_ms(5)) {
		nvmefs_ctrl_status(ctrl, &st);
		if (strstr(st.reason, "refused the connection"))
			break;
		ck_assert_msg(now_ms() < end, "no attempt was refused in 3 s: %s", st.reason);
	}
	ck_assert_msg(st.error == -ECONNREFUSED, "error %d (%s), reason: %s", st.error,
		      strerror(-st.error), st.reason);
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Where and how callbacks run                                              */
/* ------------------------------------------------------------------------ */

/* What a callback that calls back into the library did. */
static struct {
	pthread_mutex_t lock;
	struct nvmefs_ctrl *ctrl;
	pthread_t threads[MAX_EVENTS];
	unsigned int calls, later_calls;
	bool changed_setting;
} reentrant = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Later events: counted, to show the setting made inside the callback took. */
static void later_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)arg;
	(void)st;
	(void)msg;
	pthread_mutex_lock(&reentrant.lock);
	reentrant.later_calls++;
	pthread_mutex_unlock(&reentrant.lock);
}

/* The first event gives up reconnecting and hands over to later_event. */
static void reentrant_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	unsigned int call;

	(void)arg;
	(void)st;
	(void)msg;
	pthread_mutex_lock(&reentrant.lock);
	call = reentrant.calls++;
	if (call < MAX_EVENTS)
		reentrant.threads[call] = pthread_self();
	pthread_mutex_unlock(&reentrant.lock);
	if (call)
		return;
	nvmefs_ctrl_stop_reconnect(reentrant.ctrl);
	nvmefs_ctrl_set_event_cb(reentrant.ctrl, later_event, NULL);
	pthread_mutex_lock(&reentrant.lock);
	reentrant.changed_setting = true;
	pthread_mutex_unlock(&reentrant.lock);
}

/* An I/O queue's owner that finds the controller failed. */
static void *failing_io_thread(void *arg)
{
	nvmefs_ctrl_fail(arg, -ECONNRESET, "the I/O thread's scripted failure");
	return NULL;
}

/*
 * The failure an I/O thread notices is told from the library's own
 * thread, neither the failing thread nor the controller's, and the
 * callback may give up reconnecting and change the callback: neither
 * thread deadlocks (each bounded here), and the new setting takes.
 */
START_TEST(test_event_callback_reenters)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct timespec until;
	struct fake_step *s;
	pthread_t io;
	int64_t end;

	reentrant.ctrl = ctrl;
	nvmefs_ctrl_set_event_cb(ctrl, reentrant_event, NULL);
	/* The controller's thread takes the admin queue down, and may try to
	 * reconnect before the callback gives up. */
	fake_expect_destroy();
	s = fake_expect_create(TRADDR, "4420");
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "scripted: nothing listens");
	fake_repeat(s, 0, FAKE_UNLIMITED);
	ck_assert_int_eq(pthread_create(&io, NULL, failing_io_thread, ctrl), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	ck_assert_msg(pthread_timedjoin_np(io, NULL, &until) == 0,
		      "nvmefs_ctrl_fail() on the I/O thread did not return within 3 s: deadlocked");
	for (end = now_ms() + 3000; now_ms() < end; sleep_ms(5)) {
		pthread_mutex_lock(&reentrant.lock);
		if (reentrant.changed_setting && reentrant.later_calls) {
			pthread_mutex_unlock(&reentrant.lock);
			break;
		}
		pthread_mutex_unlock(&reentrant.lock);
	}
	pthread_mutex_lock(&reentrant.lock);
	ck_assert_msg(reentrant.changed_setting, "the callback did not return within 3 s: deadlocked");
	ck_assert_msg(reentrant.later_calls >= 1, "the callback set inside a callback got no event");
	ck_assert(!pthread_equal(reentrant.threads[0], io));
	ck_assert(!pthread_equal(reentrant.threads[0], pthread_self()));
	ck_assert(!pthread_equal(reentrant.threads[0], ctrl->svc_thread));
	pthread_mutex_unlock(&reentrant.lock);
	wait_state(ctrl, NVMEFS_CTRL_DELETED, 3000);
	nvmefs_ctrl_status(ctrl, &st);
	/* The failure, or an attempt refused before the callback gave up. */
	ck_assert_int_eq(st.error, strstr(st.reason, "nothing listens") ? -ECONNREFUSED
			 : -ECONNRESET);
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* A change callback that blocks, as a FUSE notification waiting for a
 * request can, until released or 10 s. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool entered, release;
} blocker = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void blocking_change(void *arg, enum nvmefs_ctrl_change what)
{
	struct timespec until;

	(void)arg;
	(void)what;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&blocker.lock);
	blocker.thread = pthread_self();
	blocker.entered = true;
	pthread_cond_broadcast(&blocker.cond);
	while (!blocker.release && pthread_cond_timedwait(&blocker.cond, &blocker.lock, &until) == 0)
		;
	pthread_mutex_unlock(&blocker.lock);
}

static bool blocker_entered(int max_ms)
{
	int64_t end = now_ms() + max_ms;
	bool entered;

	for (;;) {
		pthread_mutex_lock(&blocker.lock);
		entered = blocker.entered;
		pthread_mutex_unlock(&blocker.lock);
		if (entered || now_ms() >= end)
			return entered;
		sleep_ms(5);
	}
}

/*
 * The change callback a reconnect calls blocks; meanwhile the controller
 * fails again and the target stays away: ctrl_loss_tmo still deletes it
 * on time, and the events of it all still reach their callback, none on
 * the controller's thread.
 */
START_TEST(test_blocked_change_callback)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	struct nvmefs_ctrl *ctrl = connect_recovering(1);
	struct fake_step *s;
	int64_t start;

	nvmefs_ctrl_set_event_cb(ctrl, record_event, NULL);
	nvmefs_ctrl_set_change_cb(ctrl, blocking_change, NULL);
	/* The first outage: down, back at once, the namespaces looked at again. */
	fake_expect_destroy();
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, NULL, 0));
	/* The second: down, and nothing listens any more. */
	fake_expect_destroy();
	s = fake_expect_create(TRADDR, "4420");
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "scripted: nothing listens");
	fake_repeat(s, 1, FAKE_UNLIMITED);

	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure 1");
	ck_assert_msg(blocker_entered(3000), "the reconnect told no change within 3 s");
	wait_state(ctrl, NVMEFS_CTRL_LIVE, 1000);
	start = now_ms();
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure 2");
	/* ctrl_loss_tmo is 1 s; the controller's thread is not held up. */
	wait_state(ctrl, NVMEFS_CTRL_DELETED, 3000);
	ck_assert_int_lt(now_ms() - start, 3000);
	pthread_mutex_lock(&blocker.lock);
	ck_assert(!blocker.release);
	ck_assert(!pthread_equal(blocker.thread, ctrl->svc_thread));
	blocker.release = true;
	pthread_cond_broadcast(&blocker.cond);
	pthread_mutex_unlock(&blocker.lock);
	/* Every event was told, the last one the deletion. */
	for (int64_t end = now_ms() + 3000; now_ms() < end; sleep_ms(5)) {
		pthread_mutex_lock(&seen.lock);
		if (seen.n && seen.state[seen.n - 1] == NVMEFS_CTRL_DELETED) {
			pthread_mutex_unlock(&seen.lock);
			break;
		}
		pthread_mutex_unlock(&seen.lock);
	}
	pthread_mutex_lock(&seen.lock);
	ck_assert_msg(seen.n >= 4 && seen.state[seen.n - 1] == NVMEFS_CTRL_DELETED,
		      "%u events, the last not the deletion", seen.n);
	pthread_mutex_unlock(&seen.lock);
	nvmefs_ctrl_set_change_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* Events told while the controller is let go of: the most times its
 * transport had been released (each failed attempt releases it too) when
 * one was told. */
static struct {
	pthread_mutex_t lock;
	unsigned int calls;
	unsigned int releases_seen;
} late = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The first event holds the notifier 300 ms, so that the recovery's next
 * events are still queued when the caller disconnects. */
static void late_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	unsigned int call;

	(void)arg;
	(void)st;
	(void)msg;
	pthread_mutex_lock(&late.lock);
	call = late.calls++;
	pthread_mutex_unlock(&late.lock);
	if (!call) {
		sleep_ms(300);
		return;
	}
	pthread_mutex_lock(&late.lock);
	if (fake_stats.releases > late.releases_seen)
		late.releases_seen = fake_stats.releases;
	pthread_mutex_unlock(&late.lock);
}

/*
 * Disconnecting with events still queued: they are told before anything
 * of the controller goes (the header lets a callback ask for the status,
 * the namespaces or an admin command), not from a controller whose
 * transport, queues and locks are already gone.
 */
START_TEST(test_queued_events_told_before_release)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct fake_step *s;

	nvmefs_ctrl_set_event_cb(ctrl, late_event, NULL);
	fake_expect_destroy();
	s = fake_expect_create(TRADDR, "4420");
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "scripted: nothing listens");
	fake_repeat(s, 0, FAKE_UNLIMITED);
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure");
	/* The first event is being told, and the reset's is queued behind it. */
	for (int64_t end = now_ms() + 3000; now_ms() < end; sleep_ms(5)) {
		struct nvmefs_ctrl_status st;

		nvmefs_ctrl_status(ctrl, &st);
		if (st.state == NVMEFS_CTRL_CONNECTING)
			break;
	}
	nvmefs_ctrl_disconnect(ctrl);
	pthread_mutex_lock(&late.lock);
	ck_assert_msg(late.calls >= 2, "%u events told; the queued ones were lost", late.calls);
	ck_assert_msg(late.releases_seen < fake_stats.releases,
		      "events were told after the disconnect released the transport");
	pthread_mutex_unlock(&late.lock);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The order and the bounds of what is told                                 */
/* ------------------------------------------------------------------------ */

/* Waits up to @max_ms for an event whose message has @needle; its index. */
static unsigned int wait_event(const char *needle, int max_ms)
{
	int64_t end = now_ms() + max_ms;

	for (;;) {
		pthread_mutex_lock(&seen.lock);
		for (unsigned int i = 0; i < seen.n; i++) {
			if (strstr(seen.msg[i], needle)) {
				pthread_mutex_unlock(&seen.lock);
				return i;
			}
		}
		pthread_mutex_unlock(&seen.lock);
		ck_assert_msg(now_ms() < end, "no event said \"%s\" within %d ms", needle, max_ms);
		sleep_ms(5);
	}
}

static void give_up(struct fake_step *s, void *arg)
{
	(void)s;
	nvmefs_ctrl_stop_reconnect(arg);
}

/*
 * The user gives up while a reconnect attempt is under way, and the
 * attempt then fails: once "given up" is told, no event says an attempt
 * failed and another comes, and every event after it is of the deleted
 * controller.
 */
START_TEST(test_given_up_told_last)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct fake_step *s;
	unsigned int given_up;

	nvmefs_ctrl_set_event_cb(ctrl, record_event, NULL);
	fake_expect_destroy();
	fake_expect_create(TRADDR, "4420");
	s = fake_expect_connect(31, 0, CNTLID);
	s->status = FAKE_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL, true);
	s->on_match = give_up;
	s->on_match_arg = ctrl;
	fake_expect_destroy();
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted failure");
	given_up = wait_event("given up", 3000);
	wait_state(ctrl, NVMEFS_CTRL_DELETED, 3000);
	/* Whatever the attempt still had to say has been queued by now. */
	sleep_ms(200);
	pthread_mutex_lock(&seen.lock);
	for (unsigned int i = given_up; i < seen.n; i++) {
		ck_assert_msg(!strstr(seen.msg[i], "attempt"), "told after giving up: %s",
			      seen.msg[i]);
		ck_assert_int_eq(seen.state[i], NVMEFS_CTRL_DELETED);
	}
	pthread_mutex_unlock(&seen.lock);
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* An event callback held until released; what it was told after. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool release;
	unsigned int told;
	char first[2][1200];		/* the first two told */
	char last[1200];
} held = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void held_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)arg;
	(void)st;
	pthread_mutex_lock(&held.lock);
	while (!held.release)
		pthread_cond_wait(&held.cond, &held.lock);
	if (held.told < 2)
		snprintf(held.first[held.told], sizeof(held.first[0]), "%s", msg);
	snprintf(held.last, sizeof(held.last), "%s", msg);
	held.told++;
	pthread_mutex_unlock(&held.lock);
}

/*
 * The callback is held while more events come than the notifier keeps:
 * the ones it lets go are the oldest, so that the last event told is the
 * last transition, and the first told after the gap says events went.
 */
START_TEST(test_overflow_keeps_newest)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	bool last_told = false;

	nvmefs_ctrl_set_event_cb(ctrl, held_event, NULL);
	for (unsigned int i = 0; i < 1100; i++)
		nvmefs_ctrl_emit(ctrl, "scripted event %u", i);
	nvmefs_ctrl_emit(ctrl, "the last transition");
	pthread_mutex_lock(&held.lock);
	held.release = true;
	pthread_cond_broadcast(&held.cond);
	pthread_mutex_unlock(&held.lock);
	for (int64_t end = now_ms() + 5000; !last_told && now_ms() < end; sleep_ms(5)) {
		pthread_mutex_lock(&held.lock);
		last_told = !strcmp(held.last, "the last transition");
		pthread_mutex_unlock(&held.lock);
	}
	/* Nothing comes after it. */
	sleep_ms(100);
	pthread_mutex_lock(&held.lock);
	ck_assert_msg(!strcmp(held.last, "the last transition"), "the last told: %s", held.last);
	ck_assert_uint_le(held.told, 1 + 1024);
	ck_assert_msg(strstr(held.first[0], "were not told") || strstr(held.first[1], "were not told"),
		      "no event says some were not told: %s / %s", held.first[0], held.first[1]);
	pthread_mutex_unlock(&held.lock);
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* A callback that takes a while, and a source that keeps it busy. */
static void slow_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)arg;
	(void)st;
	(void)msg;
	sleep_ms(1);
}

/* The same, another setting. */
static void slow_event_too(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	slow_event(arg, st, msg);
}

struct flood {
	struct nvmefs_ctrl *ctrl;
	atomic_bool stop;
};

static void *flood_events(void *arg)
{
	struct flood *f = arg;
	int64_t end = now_ms() + 5000;

	while (!atomic_load(&f->stop) && now_ms() < end) {
		nvmefs_ctrl_emit(f->ctrl, "scripted flood");
	}
	return NULL;
}

/*
 * Events keep coming to a callback that takes a while, and keep coming to
 * its replacement: changing the callback waits for the one under way, not
 * for a pause that never comes.
 */
START_TEST(test_setter_not_starved)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct flood f = { .ctrl = ctrl };
	pthread_t flooder;
	int64_t start, took;

	nvmefs_ctrl_set_event_cb(ctrl, slow_event, NULL);
	ck_assert_int_eq(pthread_create(&flooder, NULL, flood_events, &f), 0);
	sleep_ms(100);
	start = now_ms();
	nvmefs_ctrl_set_event_cb(ctrl, slow_event_too, NULL);
	took = now_ms() - start;
	atomic_store(&f.stop, true);
	pthread_join(flooder, NULL);
	ck_assert_msg(took < 1000, "setting the callback took %lld ms while events came",
		      (long long)took);
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

static Suite *events_suite(void)
{
	Suite *s = suite_create("events");
	TCase *tc = tcase_create("messages");

	tcase_add_checked_fixture(tc, setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_other_subsystem_escaped);
	tcase_add_test(tc, test_longest_nqn_compared_whole);
	tcase_add_test(tc, test_other_subsystem_reason_whole);
	tcase_add_test(tc, test_first_connect_other_subsystem_refused);
	tcase_add_test(tc, test_first_connect_discovery_any_nqn);
	tcase_add_test(tc, test_error_agrees_with_reason);
	suite_add_tcase(s, tc);

	tc = tcase_create("callbacks");
	tcase_add_checked_fixture(tc, setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_event_callback_reenters);
	tcase_add_test(tc, test_blocked_change_callback);
	tcase_add_test(tc, test_queued_events_told_before_release);
	suite_add_tcase(s, tc);

	tc = tcase_create("order");
	tcase_add_checked_fixture(tc, setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_given_up_told_last);
	tcase_add_test(tc, test_overflow_keeps_newest);
	tcase_add_test(tc, test_setter_not_starved);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(events_suite(), CK_ENV);
}
