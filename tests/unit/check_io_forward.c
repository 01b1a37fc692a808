/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of io_forward.c against the scripted transport: I/O queues
 * sharing a connection while the target grants fewer queues than were
 * created.
 */
#include "config.h"

#include <unistd.h>

#include "io_fixture.h"

/* Polls @a and @b as their two owners would, without waiting, until @r is called. */
static void poll_both_until(struct nvmefs_ioq *a, struct nvmefs_ioq *b, const struct cb_rec *r,
			    int max_ms)
{
	int64_t end = now_ms() + max_ms;

	while (!r->calls && now_ms() < end) {
		nvmefs_ioq_poll(a, 0);
		nvmefs_ioq_poll(b, 0);
		usleep(1000);
	}
	ck_assert_msg(r->calls, "the I/O did not complete within %d ms", max_ms);
}

/*
 * The target grants one I/O queue where there were two (nvmet's
 * attr_qid_max lowered while we were away): the controller comes back with
 * one, and the second queue's I/O, held and new, goes out on the first
 * one's connection, while its caller is still called from the second
 * queue's poll.  Once the target grants two again, each has its own.
 */
START_TEST(test_outage_fewer_queues_shared)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct nvmefs_ctrl_status st;
	struct nvmefs_ioq *q1, *q2;
	struct nvme_id_ns id;
	struct fake_step *s, *again, *fresh;
	void *buf;

	create_ioqs(ctrl, 2, 32, 0);
	q1 = nvmefs_ctrl_io_queue(ctrl, 0);
	q2 = nvmefs_ctrl_io_queue(ctrl, 1);
	buf = nvmefs_ioq_buf_get(q2);
	s = fake_expect_rw(2, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* I/O queue 2 */
	fake_expect_destroy();		/* the admin queue */
	script_attempt_queues(32, &id, 2, 1);
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(2);
	poll_both_until(q1, q2, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(again->posted, 1);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_int_eq(st.state, NVMEFS_CTRL_LIVE);
	ck_assert_uint_eq(st.io_queues, 1);

	/* New I/O on the second queue: sent by the first queue's owner, its
	 * caller called by the second's. */
	fresh = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 8, 8, buf, on_io, &b), 0);
	for (int i = 0; i < 50 && !fresh->posted; i++)
		nvmefs_ioq_poll(q1, 10);
	ck_assert_uint_eq(fresh->posted, 1);
	nvmefs_ioq_poll(q1, 10);
	ck_assert_uint_eq(b.calls, 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 1000), 1);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_eq(b.status, 0);

	/* The target grants two again: each queue has its own connection. */
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	script_attempt_queues(32, &id, 2, 2);
	fresh = fake_expect_rw(2, nvme_cmd_read, 1, 16, 8, 4096);
	fake_disconnect(1);
	for (int i = 0; i < 500; i++) {
		nvmefs_ioq_poll(q1, 0);
		nvmefs_ioq_poll(q2, 0);
		nvmefs_ctrl_status(ctrl, &st);
		if (st.reconnects == 2 && st.state == NVMEFS_CTRL_LIVE)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(st.reconnects, 2);
	ck_assert_uint_eq(st.io_queues, 2);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 16, 8, buf, on_io, &c), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 1000), 1);
	ck_assert_int_eq(c.status, 0);
	ck_assert_uint_eq(fresh->posted, 1);
	nvmefs_ioq_buf_put(q2, buf);
	disconnect_io(ctrl, 2, false);
}
END_TEST

static Suite *io_forward_suite(void)
{
	Suite *s = suite_create("io_forward");
	TCase *tc;

	tc = tcase_create("outage");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_outage_fewer_queues_shared);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_forward_suite());
}
