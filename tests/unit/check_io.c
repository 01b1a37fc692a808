/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the I/O entry points over an I/O queue, against the scripted
 * transport: io.c (submitting, the caller's registered memory, what an
 * outage holds), io_pool.c (the queue's buffer pool) and io_sync.c (the
 * synchronous forms).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_fixture.h"

START_TEST(test_unregistered_buffer)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	unsigned int submits;
	uint8_t *plain, *reg;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	plain = malloc(8192);
	ck_assert_ptr_nonnull(plain);
	reg = reg_buf(ctrl, 8192, 0, &mr);
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 16, plain, on_io, &rec), -EFAULT);
	assert_msg_has("not in registered memory");
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 1, plain, on_io, &rec), -EFAULT);
	/* Half in, half out of a registration, at either end. */
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 16, reg + 512, on_io, &rec), -EFAULT);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 2, reg - 512, on_io, &rec), -EFAULT);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 0, reg, on_io, &rec), -EINVAL);
	ck_assert_uint_eq(fake_stats.submits, submits);
	ck_assert_uint_eq(rec.calls, 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	/* Exactly the registration is fine. */
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 16, 8192);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 16, reg, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	nvmefs_mr_dereg(mr);
	free(reg);
	free(plain);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_registered_keys)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_mr *mr1, *mr2, *bad = (struct nvmefs_mr *)0x1;
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *w, *r;
	uint8_t *b1, *b2, *pool;
	unsigned int regs, i;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	regs = fake_stats.mr_regs;
	b1 = reg_buf(ctrl, 65536, 0x11, &mr1);
	b2 = reg_buf(ctrl, 65536, 0x22, &mr2);
	ck_assert_uint_eq(fake_stats.mr_regs - regs, 2);
	ck_assert_uint_ne(mr1->rkey, mr2->rkey);
	for (i = 0; i < 4096; i++)
		b2[4096 + i] = (uint8_t)(i * 7);

	/* A write from the second registration carries its key. */
	w = fake_expect_rw(1, nvme_cmd_write, 1, 40, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 40, 8, b2 + 4096, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_ptr_eq(w->seen_mr, mr2);
	assert_keyed(&w->seen_sgl, b2 + 4096, 4096, mr2->rkey);
	ck_assert_uint_eq(w->captured_len, 4096);
	ck_assert_mem_eq(w->captured, b2 + 4096, 4096);

	/* A pool buffer: the pool's own registration and key. */
	pool = nvmefs_ioq_buf_get(ioq);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 1, 512);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 1, pool, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_ptr_nonnull(r->seen_mr);
	ck_assert_ptr_ne(r->seen_mr, mr1);
	ck_assert_ptr_ne(r->seen_mr, mr2);
	ck_assert(pool >= r->seen_mr->addr && pool + 512 <= r->seen_mr->addr + r->seen_mr->len);
	assert_keyed(&r->seen_sgl, pool, 512, r->seen_mr->rkey);
	nvmefs_ioq_buf_put(ioq, pool);

	/* Deregistered (not the list's head), its memory is refused. */
	nvmefs_mr_dereg(mr1);
	ck_assert_uint_eq(fake_stats.mr_deregs, 1);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 1, b1, on_io, &rec), -EFAULT);
	nvmefs_mr_dereg(mr2);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 1, b2, on_io, &rec), -EFAULT);
	nvmefs_mr_dereg(NULL);

	/* Registration failures reach the caller. */
	fake_mr_fail = -ENOMEM;
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, b1, 4096, &bad), -ENOMEM);
	assert_msg_has("registering 4096 bytes failed");
	ck_assert_ptr_eq(bad, (struct nvmefs_mr *)0x1);
	fake_mr_fail = 0;
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, NULL, 4096, &bad), -EINVAL);
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, b1, 0, &bad), -EINVAL);
	ck_assert_uint_eq(fake_stats.mr_regs - regs, 2);
	free(b1);
	free(b2);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_pool)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;
	struct nvmefs_ioq *ioq;
	uint8_t *b[5];
	unsigned int i, j;

	nvmefs_io_opts_init(&o);
	o.queue_size = 8;
	o.bufs_per_queue = 5;
	o.buf_size = 5000;
	fake_script_io_queues(1, 8, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	ck_assert_uint_eq(fake_stats.mr_regs, 1);
	/* Rounded up to whole pages. */
	ck_assert_uint_eq(nvmefs_ioq_buf_size(ioq), 8192);
	for (i = 0; i < 5; i++) {
		b[i] = nvmefs_ioq_buf_get(ioq);
		ck_assert_ptr_nonnull(b[i]);
		ck_assert_uint_eq((uintptr_t)b[i] % 4096, 0);
		for (j = 0; j < i; j++)
			ck_assert(b[i] + 8192 <= b[j] || b[j] + 8192 <= b[i]);
		memset(b[i], (int)i, 8192);	/* ASan: every byte is ours */
	}
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	nvmefs_ioq_buf_put(ioq, b[2]);
	ck_assert_ptr_eq(nvmefs_ioq_buf_get(ioq), b[2]);
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	nvmefs_ioq_buf_put(ioq, NULL);
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	for (i = 0; i < 5; i++)
		nvmefs_ioq_buf_put(ioq, b[i]);
	for (i = 0; i < 5; i++)
		ck_assert_ptr_nonnull(nvmefs_ioq_buf_get(ioq));
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	disconnect_io(ctrl, 1, false);
	ck_assert_uint_eq(fake_stats.mr_deregs, 1);
}
END_TEST

START_TEST(test_sync)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	static const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char want[256];
	struct nvmefs_ioq *ioq;
	struct fake_step *s;
	uint8_t *buf, plain[512] = { 0 };

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);

	/* LBA Out of Range, DNR: the status without DNR, and why. */
	s = fake_expect_rw(1, nvme_cmd_read, 1, 5, 8, 4096);
	fake_step_status(s, 0, 0x80, true);
	ck_assert_int_eq(nvmefs_ioq_read_sync(ioq, 1, 5, 8, buf), 0x80);
	snprintf(want, sizeof(want), "namespace 1, blocks 5+8: %s",
		 nvme_status_to_string(0x80, false));
	assert_msg_has(want);

	s = fake_expect_rw(1, nvme_cmd_read, 1, 6, 1, 512);
	fake_step_data(s, data, sizeof(data));
	memset(buf, 0xff, 512);
	ck_assert_int_eq(nvmefs_ioq_read_sync(ioq, 1, 6, 1, buf), 0);
	ck_assert_mem_eq(buf, data, sizeof(data));
	ck_assert_uint_eq(buf[8], 0);

	s = fake_expect_rw(1, nvme_cmd_write, 1, 9, 1, 512);
	ck_assert_int_eq(nvmefs_ioq_write_sync(ioq, 1, 9, 1, buf), 0);
	ck_assert_mem_eq(s->captured, data, sizeof(data));
	ck_assert_int_eq(nvmefs_ioq_write_sync(ioq, 1, 9, 1, plain), -EFAULT);

	fake_expect_io(1, nvme_cmd_flush, 1);
	ck_assert_int_eq(nvmefs_ioq_flush_sync(ioq, 1), 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * While the controller reconnects, new I/O would be held (what the mount
 * asks before giving a request a buffer); once live again, it goes.
 */
START_TEST(test_outage_ns_held)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	bool seen_held = false;
	int64_t end;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	/* Refused once: the attempt after it comes a tenth of a second later. */
	script_refused_attempt();
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_attempt(32, &id);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !a.calls && now_ms() < end; usleep(1000)) {
		nvmefs_ioq_poll(q, 0);
		if (!a.calls && nvmefs_ioq_ns_held(q, 1))
			seen_held = true;
	}
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_msg(seen_held, "I/O was never said to be held while the controller reconnected");
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * A head of one path (as a mount or perf of one path makes) behaves as the
 * path's queue: a read in flight when the connection drops is held, the
 * head says the namespace's I/O is held, and the read goes again once
 * reconnected; the head sleeps on the path's own descriptor.  Once the
 * controller is given up, what is in flight fails and new I/O fails with
 * the controller's own message, not a multipath one.
 */
START_TEST(test_outage_single_head_holds)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_subsys *s = NULL;
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_mpq *mpq;
	struct nvme_id_ns id;
	struct fake_step *step;
	bool seen_held = false;
	int64_t end;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ck_assert_int_eq(nvmefs_subsys_create_single(ctrl, &s), 0);
	ck_assert(!nvmefs_subsys_multipath(s));
	ck_assert_uint_eq(nvmefs_subsys_path_count(s), 1);
	mpq = nvmefs_subsys_queue(s, 0);
	ck_assert_int_eq(nvmefs_mpq_fd(mpq), nvmefs_ioq_fd(nvmefs_ctrl_io_queue(ctrl, 0)));
	buf = nvmefs_mpq_buf_get(mpq);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 0);
	step = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	step->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_reconnect(32, &id);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_mpq_read(mpq, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !a.calls && now_ms() < end; usleep(1000)) {
		nvmefs_mpq_poll(mpq, 0);
		if (!a.calls && nvmefs_mpq_ns_held(mpq, 1))
			seen_held = true;
	}
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_msg(seen_held, "I/O was never said to be held while the controller reconnected");
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), 0);
	ck_assert_uint_eq(nvmefs_mpq_inflight(mpq), 0);

	/* Given up: the read in flight fails, and so does what comes after. */
	step = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	step->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	ck_assert_int_eq(nvmefs_mpq_read(mpq, 1, 8, 8, buf, on_io, &b), 0);
	nvmefs_ctrl_stop_reconnect(ctrl);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !b.calls && now_ms() < end;)
		nvmefs_mpq_poll(mpq, 10);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_lt(b.status, 0);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 0);
	ck_assert_int_lt(nvmefs_mpq_read(mpq, 1, 0, 8, buf, on_io, &b), 0);
	ck_assert_msg(strstr(nvmefs_errmsg(), "the controller failed") &&
		      strstr(nvmefs_errmsg(), "is deleted"), "message: %s", nvmefs_errmsg());
	ck_assert_int_lt(nvmefs_mpq_poll(mpq, 0), 0);
	ck_assert_msg(strstr(nvmefs_errmsg(), "I/O queue 1 failed"), "message: %s",
		      nvmefs_errmsg());
	nvmefs_mpq_buf_put(mpq, buf);
	nvmefs_subsys_destroy(s);
}
END_TEST

/*
 * One namespace given up (a block device deleted while the controller
 * reconnects): the read held for it fails with EIO at the next poll and
 * new I/O to it fails at once, while the controller goes on reconnecting;
 * another namespace given up holds on to none of its I/O.
 */
START_TEST(test_outage_give_up_ns)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_subsys *s = NULL;
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct nvmefs_mpq *mpq;
	struct fake_step *step;
	int64_t end;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ck_assert_int_eq(nvmefs_subsys_create_single(ctrl, &s), 0);
	mpq = nvmefs_subsys_queue(s, 0);
	buf = nvmefs_mpq_buf_get(mpq);
	step = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	step->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	step = fake_expect_create(TRADDR, "4420");
	step->create_ret = -ECONNREFUSED;
	snprintf(step->create_msg, sizeof(step->create_msg), "nobody listens (scripted)");
	fake_repeat(step, 1, 100000);
	ck_assert_int_eq(nvmefs_mpq_read(mpq, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !nvmefs_mpq_ns_held(mpq, 1) && now_ms() < end;)
		nvmefs_mpq_poll(mpq, 10);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 1);
	/* Asked not to hold it, the queue says "held" and keeps nothing: @c
	 * never comes back. */
	ck_assert_int_eq(nvmefs_mpq_submit(mpq, NVMEFS_IO_WRITE, 1, 8, 8, buf, NVMEFS_MPQ_NO_HOLD,
					   on_io, &c), NVMEFS_MPQ_HELD);
	ck_assert_uint_eq(nvmefs_mpq_inflight(mpq), 1);
	nvmefs_subsys_give_up_ns(s, 2);
	for (int i = 0; i < 5; i++)
		nvmefs_mpq_poll(mpq, 10);
	ck_assert_uint_eq(a.calls, 0);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 1);

	nvmefs_subsys_give_up_ns(s, 1);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 0);
	ck_assert_int_gt(nvmefs_mpq_arm(mpq), 0);
	nvmefs_mpq_poll(mpq, 0);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -EIO);
	ck_assert_int_eq(nvmefs_mpq_read(mpq, 1, 8, 8, buf, on_io, &b), -EIO);
	ck_assert_msg(strstr(nvmefs_errmsg(), "namespace 1's user gave up waiting"), "message: %s",
		      nvmefs_errmsg());
	ck_assert_uint_eq(b.calls, 0);
	ck_assert_uint_eq(c.calls, 0);
	ck_assert_uint_eq(nvmefs_mpq_inflight(mpq), 0);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_int_ne(st.state, NVMEFS_CTRL_DELETED);
	ck_assert_int_ne(st.state, NVMEFS_CTRL_LIVE);
	nvmefs_mpq_buf_put(mpq, buf);
	nvmefs_ctrl_stop_reconnect(ctrl);
	nvmefs_subsys_destroy(s);
}
END_TEST

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc;

	tc = tcase_create("memory");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_unregistered_buffer);
	tcase_add_test(tc, test_registered_keys);
	tcase_add_test(tc, test_pool);
	suite_add_tcase(s, tc);

	tc = tcase_create("sync");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_sync);
	suite_add_tcase(s, tc);

	tc = tcase_create("outage");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_outage_ns_held);
	tcase_add_test(tc, test_outage_single_head_holds);
	tcase_add_test(tc, test_outage_give_up_ns);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_suite());
}
