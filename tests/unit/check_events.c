/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a controller tells its user, against a scripted controller: the
 * messages of its failures and recovery, with what the target sent in them
 * made safe for a terminal and a log.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <nvme/types.h>

#include "fake_transport.h"

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
	fake_reset();
	memset(seen.msg, 0, sizeof(seen.msg));
	seen.n = 0;
}

static void teardown(void)
{
	fake_assert_done();
	fake_reset();
}

/* An NVM subsystem's controller without I/O queues that reconnects after a
 * failure until @ctrl_loss_s. */
static struct nvmefs_ctrl *connect_recovering(int ctrl_loss_s)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = 0x3ff, .vs = 0x10400, .io = true };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	fake_opts(&opts, TRADDR, 0);
	opts.subnqn = SUBNQN;
	opts.kato_ms = 0;
	opts.ctrl_loss_tmo_s = ctrl_loss_s;
	opts.reconnect_delay_s = 1;
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
	ck_assert_msg(ret == 0, "connect: %d: %s", ret, nvmefs_errmsg());
	return ctrl;
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
	struct nvme_id_ctrl id;
	bool told = false;

	nvmefs_ctrl_set_event_cb(ctrl, record_event, NULL);
	fake_expect_destroy();
	/* The attempt: everything as before, but Identify names another subsystem. */
	fake_expect_create(TRADDR, "4420");
	fake_expect_connect(31, 0, CNTLID);
	fake_expect_prop_get(NVME_REG_CAP, t.cap);
	fake_expect_prop_get(NVME_REG_VS, t.vs);
	fake_expect_prop_set(NVME_REG_CC, 0x00460001u);
	fake_expect_prop_get(NVME_REG_CSTS, 1);
	fake_id_ctrl(&id, 0);
	memset(id.subnqn, 0, sizeof(id.subnqn));
	memcpy(id.subnqn, evil, sizeof(evil) - 1);
	fake_expect_identify(NVME_IDENTIFY_CNS_CTRL, 0, &id, sizeof(id));
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

static Suite *events_suite(void)
{
	Suite *s = suite_create("events");
	TCase *tc = tcase_create("messages");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_other_subsystem_escaped);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(events_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
