/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of io_poll.c against the scripted transport: the descriptor a
 * caller sleeps on and the arm contract, and failure: a command timeout or
 * a failed keep-alive fails the controller and every queue's outstanding
 * I/O.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>

#include "io_fixture.h"
#include "arm_contract.h"

START_TEST(test_fd_arm)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct pollfd pfd;
	struct fake_step *r;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	pfd.fd = nvmefs_ioq_fd(ioq);
	pfd.events = POLLIN;
	ck_assert_int_ge(pfd.fd, 0);
	ck_assert_int_eq(nvmefs_ioq_arm(ioq), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);

	buf = nvmefs_ioq_buf_get(ioq);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	r->hold = true;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 8, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);	/* the send completion */
	ck_assert_int_eq(nvmefs_ioq_arm(ioq), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	fake_release(1);
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(nvmefs_ioq_arm(ioq), 1);	/* poll first */
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 1);
	ck_assert_uint_eq(rec.calls, 1);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* The arm contract every transport keeps (arm_contract.h), here the fake's. */
static void answer_release(void *arg)
{
	(void)arg;
	ck_assert_uint_eq(fake_release(1), 1);
}

static bool rec_ended(void *arg)
{
	return ((const struct cb_rec *)arg)->calls == 1;
}

START_TEST(test_arm_contract)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct arm_contract c = { .answer = answer_release, .ended = rec_ended, .arg = &rec };
	struct nvmefs_ioq *ioq;
	void *buf;

	ioq = read_held(ctrl, &rec, &buf);
	c.q = &ioq->q;
	arm_contract_check(&c);
	ck_assert_int_eq(rec.status, 0);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_timeout_fails_ctrl)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct nvmefs_ioq *q1, *q2;
	struct fake_step *s;
	void *buf1, *buf2;
	int64_t start, took;

	create_ioqs(ctrl, 2, 32, 50);
	q1 = nvmefs_ctrl_io_queue(ctrl, 0);
	q2 = nvmefs_ctrl_io_queue(ctrl, 1);
	buf1 = nvmefs_ioq_buf_get(q1);
	buf2 = nvmefs_ioq_buf_get(q2);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->delivery = FAKE_NO_RESP;
	s = fake_expect_rw(2, nvme_cmd_read, 1, 8, 8, 4096);
	s->delivery = FAKE_NO_RESP;
	ck_assert_int_eq(nvmefs_ioq_read(q1, 1, 0, 8, buf1, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 8, 8, buf2, on_io, &b), 0);

	start = now_ms();
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 5000), -ETIMEDOUT);
	took = now_ms() - start;
	ck_assert_int_ge(took, 50);
	ck_assert_int_lt(took, 2000);
	assert_msg_has("I/O queue 1 failed");
	assert_msg_has("within 50 ms");
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q1), 0);

	/* The other queue's I/O fails too, at its next poll. */
	ck_assert_uint_eq(b.calls, 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 0), -ETIMEDOUT);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_eq(b.status, -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q2), 0);

	/* New I/O is refused at once, without its callback. */
	ck_assert_int_eq(nvmefs_ioq_read(q1, 1, 0, 8, buf1, on_io, &c), -ETIMEDOUT);
	assert_msg_has("the controller failed");
	ck_assert_int_eq(nvmefs_ioq_flush(q2, 1, on_io, &c), -ETIMEDOUT);
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 0), -ETIMEDOUT);
	ck_assert_uint_eq(c.calls, 0);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_uint_eq(b.calls, 1);
	nvmefs_ioq_buf_put(q1, buf1);
	nvmefs_ioq_buf_put(q2, buf2);
	disconnect_io(ctrl, 2, true);
}
END_TEST

START_TEST(test_timeout_fails_pending)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *s;
	uint8_t *buf;

	/* One slot: the first of three commands goes and is never answered;
	 * the other two wait for the slot.  The I/O still ends, once. */
	create_ioqs(ctrl, 1, 2, 50);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 16, 8192);
	s->delivery = FAKE_NO_RESP;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 48, buf, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 3000), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

START_TEST(test_timeout_fails_stalled_pending)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q1, *q2;
	struct fake_step *s;
	uint8_t *buf1, *buf2;
	unsigned int k;

	/* Queue 1 (4 entries): A's first three commands complete, but the
	 * controller reports SQ head 1, as if it had taken none of them, so
	 * the fourth may not go: A waits with nothing in flight.  When queue
	 * 2's command times out and fails the controller, A must end too. */
	create_ioqs(ctrl, 2, 4, 50);
	q1 = nvmefs_ctrl_io_queue(ctrl, 0);
	q2 = nvmefs_ctrl_io_queue(ctrl, 1);
	buf1 = nvmefs_ioq_buf_get(q1);
	buf2 = nvmefs_ioq_buf_get(q2);
	for (k = 0; k < 3; k++) {
		s = fake_expect_rw(1, nvme_cmd_read, 1, k * 16, 16, 8192);
		s->sq_head = 1;
	}
	/* A queue.c that trusts an empty queue to have an empty SQ sends
	 * the fourth; it is never answered either. */
	s = fake_expect_rw(1, nvme_cmd_read, 1, 48, 16, 8192);
	s->hold = true;
	s->min = 0;
	ck_assert_int_eq(nvmefs_ioq_read(q1, 1, 0, 64, buf1, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 0), 0);
	ck_assert_uint_eq(a.calls, 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q1), 1);

	s = fake_expect_rw(2, nvme_cmd_read, 1, 0, 8, 4096);
	s->delivery = FAKE_NO_RESP;
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 0, 8, buf2, on_io, &b), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 3000), -ETIMEDOUT);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 0), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q1), 0);
	nvmefs_ioq_buf_put(q1, buf1);
	nvmefs_ioq_buf_put(q2, buf2);
	disconnect_io(ctrl, 2, true);
}
END_TEST

START_TEST(test_keep_alive_failure_fails_io)
{
	/* Keep Alive every KATO/2 = 100 ms; the first is refused. */
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 200);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *ka, *r;
	int64_t start;
	void *buf;
	int ret;

	ka = fake_expect_cmd(nvme_admin_keep_alive);
	ka->match |= FAKE_M_QID | FAKE_M_LEN;
	fake_step_status(ka, 0, 0x06, false);	/* Internal Error */
	fake_float(ka);
	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	r->hold = true;		/* never answered: only the failure ends it */
	r->min = 0;		/* unless the keep-alive failed first */

	start = now_ms();
	ret = nvmefs_ioq_read(ioq, 1, 0, 8, buf, on_io, &rec);
	if (ret == 0) {
		ck_assert_int_eq(nvmefs_ioq_poll(ioq, 3000), -EIO);
		ck_assert_uint_eq(rec.calls, 1);
		ck_assert_int_eq(rec.status, -EIO);
	} else {
		/* A slow machine: the keep-alive failed before the read. */
		ck_assert_int_eq(ret, -EIO);
		ck_assert_uint_eq(rec.calls, 0);
	}
	ck_assert_int_lt(now_ms() - start, 2000);
	assert_msg_has("keep-alive to " SUBNQN " failed");
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -EIO);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), -EIO);
	ck_assert_uint_eq(ka->used, 1);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

static Suite *io_poll_suite(void)
{
	Suite *s = suite_create("io_poll");
	TCase *tc;

	tc = tcase_create("arm");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_fd_arm);
	tcase_add_test(tc, test_arm_contract);
	suite_add_tcase(s, tc);

	tc = tcase_create("failure");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_timeout_fails_ctrl);
	tcase_add_test(tc, test_timeout_fails_pending);
	tcase_add_test(tc, test_timeout_fails_stalled_pending);
	tcase_add_test(tc, test_keep_alive_failure_fails_io);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_poll_suite());
}
