/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of an I/O queue's outage (io_poll.c) against the scripted
 * transport: the failure path hands nothing back early, what the target
 * may still touch is handed back only once it cannot, and reconnect
 * attempts, refused or racing the queue's owner, hold I/O until they end.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_fixture.h"

/*
 * A command submitted but not yet posted when the controller fails is never
 * posted: once its caller is told it failed, its buffer is the caller's.
 */
START_TEST(test_outage_unposted_never_sent)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_defer_posts = true;
	s = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &a), 0);
	ck_assert_uint_eq(s->posted, 0);
	/* Another thread (keep-alive) finds the controller gone. */
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted keep-alive failure");
	/* Not reconnecting: new I/O fails at once, it is not held. */
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), -ECONNRESET);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ECONNRESET);
	ck_assert_uint_eq(fake_stats.stops, 1);
	/* The caller refills its buffer; arming must not send the old write. */
	nvmefs_ioq_arm(q);
	nvmefs_ioq_poll(q, 0);
	ck_assert_uint_eq(s->posted, 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

static void on_io_queue_stopped(void *arg, int status)
{
	struct cb_rec *r = arg;

	/* The target must no longer be able to write into the buffer. */
	ck_assert_msg(fake_queue_stopped(1), "the I/O was handed back before its queue was stopped");
	on_io(r, status);
}

/*
 * A read the target still holds when it times out: its buffer goes back to
 * the caller only after the queue pair was stopped and drained, and what the
 * target would still send never arrives.
 */
START_TEST(test_outage_buffer_back_after_stop)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 50);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io_queue_stopped, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 3000), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	/* The response the target held back can no longer come. */
	ck_assert_uint_eq(fake_held(), 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

/*
 * The target closing an I/O queue is noticed by a worker that only polls
 * without waiting, long before the I/O timeout, and wakes one asleep on the
 * queue's descriptor.
 */
START_TEST(test_outage_disconnect_noticed)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct pollfd pfd = { .events = POLLIN };
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	int64_t start;
	void *buf;

	q = read_held(ctrl, &a, &buf);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), 0);
	ck_assert_int_eq(nvmefs_ioq_arm(q), 0);
	pfd.fd = nvmefs_ioq_fd(q);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	start = now_ms();
	fake_disconnect(1);
	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
	poll_until(q, &a, 1000);
	ck_assert_int_lt(now_ms() - start, 1000);
	ck_assert_int_eq(a.status, -ECONNRESET);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -ECONNRESET);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

/*
 * A transport's arm that fails fails the queue through the controller's
 * path, as a failed poll does: arm says there is work (the outage), and the
 * I/O in flight ends at the next poll instead of waiting for its timeout.
 */
START_TEST(test_arm_error_fails_queue)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	void *buf;

	q = read_held(ctrl, &a, &buf);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), 0);
	fake_arm_error = -ENETDOWN;
	ck_assert_int_gt(nvmefs_ioq_arm(q), 0);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -ENETDOWN);
	poll_until(q, &a, 1000);
	ck_assert_int_eq(a.status, -ENETDOWN);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

/*
 * The RDMA device goes away (a NIC reset, soft-RoCE re-created), which the
 * kernel completes only once every user has let go of it: the controller
 * deregisters every region and releases its protection domain before it
 * reconnects, then registers the same memory again, and the held write goes
 * out again from the caller's region under its new key.
 */
START_TEST(test_outage_device_removed)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvmefs_mr *mr;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	uint32_t old_rkey;
	uint8_t *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 65536, 0x5a, &mr);
	old_rkey = mr->rkey;
	s = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	s->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_reconnect(32, &id);
	again = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &a), 0);
	fake_device_removed(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(fake_stats.bare_releases, 1);
	/* The pool and the caller's region, each registered again. */
	ck_assert_uint_eq(fake_stats.mr_regs - fake_stats.mr_deregs, 2);
	ck_assert_uint_ne(mr->rkey, old_rkey);
	ck_assert_ptr_eq(again->seen_mr, mr);
	assert_keyed(&again->seen_sgl, buf, 4096, mr->rkey);
	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * An attempt that fails lets go of the device as well: a link that went
 * down can take the device with it, and its removal would wait for us for
 * as long as the outage lasts.  The attempt that gets through registers the
 * pool again, and the held read lands in it under its new key.
 */
START_TEST(test_outage_failed_attempt_lets_go)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	uint32_t old_rkey;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 1000), 1);
	old_rkey = s->seen_mr->rkey;

	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	script_refused_attempt();
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_attempt(32, &id);
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &b), 0);
	fake_disconnect(1);
	poll_until(q, &b, 5000);
	ck_assert_int_eq(b.status, 0);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 2);
	ck_assert_uint_eq(fake_stats.bare_releases, 1);
	ck_assert_uint_eq(fake_stats.mr_regs - fake_stats.mr_deregs, 1);
	ck_assert_uint_ne(again->seen_mr->rkey, old_rkey);
	assert_keyed(&again->seen_sgl, buf, 4096, again->seen_mr->rkey);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static void count_failed_attempts(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)st;
	if (strstr(msg, "reconnect attempt"))
		(*(unsigned int *)arg)++;
}

/*
 * A target that refuses at once (its port not listening yet: a restart) is
 * looked at again within a fraction of the schedule's pause, so I/O resumes
 * as soon as it listens; the repeated refusals are reported once.
 */
START_TEST(test_outage_refused_probed_soon)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 };
	unsigned int reported = 0;
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	int64_t start, took;
	void *buf;

	nvmefs_ctrl_set_event_cb(ctrl, count_failed_attempts, &reported);
	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	for (int i = 0; i < 3; i++) {
		script_refused_attempt();
	}
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_attempt(32, &id);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	start = now_ms();
	fake_disconnect(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	took = now_ms() - start;
	/* The schedule alone would wait 0.25 + 0.5 + 1 s before the fourth attempt;
	 * probing every 0.1 s takes about 0.3 s, and up to 1 s on a loaded
	 * machine under ASan (1017 ms seen): 1.5 s still tells the two apart. */
	ck_assert_int_lt(took, 1500);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 4);
	/* Told once per pause of the schedule (0.25 s, then 0.5 s): once when
	 * the probes came quickly, as they do; on a loaded host the three
	 * refusals may span a pause or two, and each adds one. */
	ck_assert_uint_ge(reported, 1);
	ck_assert_uint_le(reported, 1 + (took >= 250) + (took >= 750));
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* The I/O queue 1 create of an attempt that got the admin queue back fails. */
static void script_create_refused(const struct nvme_id_ns *id, const char *msg)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				 .mdts = MDTS_1M, .io = true };
	struct fake_step *s;

	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_expect_set_nr_queues(1, 0);
	/* Floating as script_attempt()'s are, and matched before them. */
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, id, sizeof(*id)));
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0));
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	s->create_ret = -ECONNRESET;
	snprintf(s->create_msg, sizeof(s->create_msg), "%s", msg);
	fake_expect_destroy();		/* the admin queue */
}

/* Polls @q as its owner does until the controller's last failure reason has @needle. */
static void poll_until_reason(struct nvmefs_ctrl *ctrl, struct nvmefs_ioq *q, const char *needle,
			      int max_ms)
{
	struct nvmefs_ctrl_status st;
	int64_t end = now_ms() + max_ms;

	for (;;) {
		nvmefs_ioq_poll(q, 0);
		nvmefs_ctrl_status(ctrl, &st);
		if (strstr(st.reason, needle) || now_ms() >= end)
			break;
		usleep(1000);
	}
	ck_assert_msg(strstr(st.reason, needle), "no '%s' within %d ms (reason '%s')", needle,
		      max_ms, st.reason);
}

/* The next attempt's admin Connect, on the controller's thread: waits (up
 * to 5 s) until the test has submitted its read, so that the read comes
 * while I/O queue 1 is still as the failed attempt left it. */
static void wait_for_read(struct fake_step *s, void *arg)
{
	const atomic_bool *read_in = arg;
	int64_t end = now_ms() + 5000;

	(void)s;
	while (!atomic_load(read_in) && now_ms() < end)
		usleep(1000);
}

/*
 * An attempt gets the admin queue back but I/O queue 1's create fails: the
 * queue is left without a transport, and a read issued in the backoff that
 * follows is held, not sent on it (its request slots point into what the
 * transport freed), then goes out and completes after the next attempt.
 */
START_TEST(test_outage_create_fails_read_held)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *refused, *third, *again;
	atomic_bool read_in = false;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	/* The first attempt finds nothing; the second gets the admin queue back,
	 * not I/O queue 1. */
	refused = fake_expect_create(TRADDR, "4420");
	refused->create_ret = -ETIMEDOUT;
	snprintf(refused->create_msg, sizeof(refused->create_msg), "no route yet (scripted)");
	script_create_refused(&id, "I/O queue 1 refused (scripted)");
	third = script_attempt(32, &id);
	third->on_match = wait_for_read;
	third->on_match_arg = &read_in;
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_disconnect(1);
	poll_until_reason(ctrl, q, "I/O queue 1 refused", 5000);
	/* After the second attempt, before the third gets to the I/O queue. */
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_int_eq(st.state, NVMEFS_CTRL_CONNECTING);
	ck_assert_uint_eq(again->posted, 0);
	atomic_store(&read_in, true);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(again->posted, 1);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 3);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

#define RACE_READS 8

/* The owner's reads against the controller's thread reconnecting its queue. */
struct race {
	struct nvmefs_ctrl *ctrl;
	atomic_bool in_connect;		/* I/O queue 1's Connect is in flight */
	atomic_uint tries;		/* reads the owner submitted meanwhile */
	atomic_uint early;		/* reads that reached the target before the controller was live */
};

/* I/O queue 1's Connect, on the controller's thread: held open until the
 * owner has submitted every read (or 2 s passed). */
static void connect_while_owner_submits(struct fake_step *s, void *arg)
{
	struct race *r = arg;
	int64_t end = now_ms() + 2000;

	(void)s;
	atomic_store(&r->in_connect, true);
	while (atomic_load(&r->tries) < RACE_READS && now_ms() < end)
		usleep(1000);
	atomic_store(&r->in_connect, false);
}

static void read_reaches_target(struct fake_step *s, void *arg)
{
	struct race *r = arg;

	(void)s;
	if (nvmefs_ctrl_failed(r->ctrl))
		atomic_fetch_add(&r->early, 1);
}

/*
 * The owner submits while the controller's thread connects its queue again:
 * nothing is sent, and no request slot taken, before the attempt is through
 * and the controller live; then every read goes out in order and completes.
 */
START_TEST(test_outage_submit_races_attempt)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				 .mdts = MDTS_1M, .io = true };
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct race r = { .ctrl = ctrl };
	struct cb_rec recs[RACE_READS] = { { 0 } };
	void *bufs[RACE_READS];
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	uint32_t list[NVMEFS_NS_LIST_LEN] = { 0 };
	int64_t end;
	unsigned int i, done;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_expect_set_nr_queues(1, 0);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, &id, sizeof(id));
	fake_float(s);
	fake_repeat(s, 2, 2);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0);
	fake_float(s);
	fake_repeat(s, 2, 2);
	list[0] = nvmefs_cpu_to_le32(1);
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list)));
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	s = fake_expect_io_connect(1, 31, CNTLID);
	s->on_match = connect_while_owner_submits;
	s->on_match_arg = &r;
	for (i = 0; i < RACE_READS; i++) {
		s = fake_expect_rw(1, nvme_cmd_read, 1, i * 8, 8, 4096);
		s->on_match = read_reaches_target;
		s->on_match_arg = &r;
		bufs[i] = nvmefs_ioq_buf_get(q);
	}
	fake_disconnect(1);
	end = now_ms() + 5000;
	while (!atomic_load(&r.in_connect) && now_ms() < end) {
		nvmefs_ioq_poll(q, 0);
		usleep(500);
	}
	ck_assert_msg(atomic_load(&r.in_connect), "I/O queue 1's Connect did not come within 5 s");
	for (i = 0; i < RACE_READS; i++) {
		ck_assert_int_eq(nvmefs_ioq_read(q, 1, i * 8, 8, bufs[i], on_io, &recs[i]), 0);
		nvmefs_ioq_poll(q, 0);
		atomic_fetch_add(&r.tries, 1);
		usleep(1000);
	}
	end = now_ms() + 5000;
	do {
		nvmefs_ioq_poll(q, 0);
		for (i = 0, done = 0; i < RACE_READS; i++)
			done += recs[i].calls;
		usleep(1000);
	} while (done < RACE_READS && now_ms() < end);
	ck_assert_uint_eq(atomic_load(&r.early), 0);
	for (i = 0; i < RACE_READS; i++) {
		ck_assert_uint_eq(recs[i].calls, 1);
		ck_assert_int_eq(recs[i].status, 0);
		if (i)
			ck_assert_uint_lt(recs[i - 1].order, recs[i].order);
		nvmefs_ioq_buf_put(q, bufs[i]);
	}
	disconnect_io(ctrl, 1, false);
}
END_TEST

static Suite *io_outage_suite(void)
{
	Suite *s = suite_create("io_outage");
	TCase *tc;

	tc = tcase_create("outage");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_outage_unposted_never_sent);
	tcase_add_test(tc, test_outage_buffer_back_after_stop);
	tcase_add_test(tc, test_outage_disconnect_noticed);
	tcase_add_test(tc, test_arm_error_fails_queue);
	tcase_add_test(tc, test_outage_device_removed);
	tcase_add_test(tc, test_outage_failed_attempt_lets_go);
	tcase_add_test(tc, test_outage_refused_probed_soon);
	tcase_add_test(tc, test_outage_create_fails_read_held);
	tcase_add_test(tc, test_outage_submit_races_attempt);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_outage_suite());
}
