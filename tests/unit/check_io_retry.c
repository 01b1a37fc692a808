/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of io_retry.c against the scripted transport: a status
 * without DNR retried after the controller's Command Retry Delay, and a
 * path error on a controller with one path.
 */
#include "config.h"

#include <time.h>
#include <unistd.h>

#include "io_fixture.h"

/* A status without DNR is retried (as Linux does); with DNR it is not. */
START_TEST(test_retry_without_dnr)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	poll_until(q, &a, 2000);
	ck_assert_int_eq(a.status, 0);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, true);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &b), 0);
	poll_until(q, &b, 2000);
	ck_assert_int_eq(b.status, NVME_SC_INTERNAL);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * A path error that names no ANA state, with no other path (nvmet's answer
 * for a namespace disabled on it): tried again 100 ms later, not at once, as
 * Linux holds it until its rescan; after the retries it fails with the
 * target's status.
 */
START_TEST(test_path_error_one_path)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	int64_t start;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_PATH, NVME_SC_ANA_INTERNAL_PATH_ERROR, false);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	start = now_ms();
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	poll_until(q, &a, 2000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_int_ge(now_ms() - start, 100);
	for (int i = 0; i < 6; i++) {
		s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
		fake_step_status(s, NVME_SCT_PATH, NVME_SC_ANA_INTERNAL_PATH_ERROR, false);
	}
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &b), 0);
	poll_until(q, &b, 3000);
	ck_assert_int_eq(b.status, NVME_SCT_PATH << NVME_SCT_SHIFT | NVME_SC_ANA_INTERNAL_PATH_ERROR);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * A command the controller asks to retry after its Command Retry Delay waits
 * it out asleep: arming says there is nothing to poll for, tells how long to
 * sleep, and a synchronous wait does not spin through the delay.
 */
START_TEST(test_retry_delay_sleeps)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	double cpu;
	int wait = -1;
	void *buf;

	ctrl->id.crdt1 = nvmefs_cpu_to_le16(20);	/* 2 s */
	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	s->status |= 1u << 11;			/* CRD 1 */
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	for (int i = 0; i < 100 && wait <= 0; i++) {
		nvmefs_ioq_poll(q, 0);
		wait = nvmefs_ioq_arm(q) == 0 ? nvmefs_ioq_wait_ms(q) : -1;
		if (wait <= 0)
			usleep(1000);
	}
	ck_assert_uint_eq(a.calls, 0);
	ck_assert_int_gt(wait, 0);
	ck_assert_int_le(wait, 2000);
	cpu = cpu_ms();
	ck_assert_int_eq(nvmefs_ioq_poll(q, 5000), 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_msg(cpu_ms() - cpu < 200, "waiting out a %d ms retry delay took %.0f ms of CPU",
		      wait, cpu_ms() - cpu);
	ck_assert_int_eq(nvmefs_ioq_wait_ms(q), -1);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static Suite *io_retry_suite(void)
{
	Suite *s = suite_create("io_retry");
	TCase *tc;

	tc = tcase_create("retry");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_retry_without_dnr);
	tcase_add_test(tc, test_path_error_one_path);
	tcase_add_test(tc, test_retry_delay_sleeps);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_retry_suite());
}
