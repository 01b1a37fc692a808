/*
 * The export engine through outages (engine_harness.h): requests to a held
 * namespace parked, and I/O carried for another worker's queue when the
 * target grants fewer queues.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <nvme/types.h>

#include "engine_harness.h"

/*
 * A read and a write to a namespace the queue holds (its controller
 * reconnecting), refused as held by their submit, are parked, copied out of
 * the buffers they came in, which are free again: both of the worker's two.
 * Once the controller is back they go from their copies, without being
 * handed to the front end again: the read completes with the target's
 * bytes, the write sends the payload it came with.
 */
START_TEST(test_held_namespace_parks)
{
	struct nvmefs_ioq *q;
	uint8_t image[4096], payload[4096];
	struct fake_step *s, *ws;
	bool parked = false;
	struct done d;
	int64_t end;

	q = outage_engine(2);
	fill(image, sizeof(image), 23);
	fill(payload, sizeof(payload), 41);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	ws = fake_expect_rw(1, nvme_cmd_write, 1, 8, 8, 4096);
	hold_namespace(q);
	send_req(EXP_READ, 0, 4096, 0, NULL);
	send_req(EXP_WRITE, 4096, 4096, 1, payload);
	for (end = now_ms() + 10000; !parked && now_ms() < end; usleep(1000))
		parked = atomic_load(&t.e->parked_bytes) > 4096 &&
			 atomic_load(&t.e->workers_with_free) == 1;
	ck_assert_msg(parked, "the held read and write were not parked with their buffers "
		      "free (%zu bytes parked)", atomic_load(&t.e->parked_bytes));
	ctrl_back();
	d = wait_done(0, 10000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image, sizeof(image));
	d = wait_done(1, 10000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(ws->captured_len, sizeof(payload));
	ck_assert_mem_eq(ws->captured, payload, sizeof(payload));
	ck_assert_uint_eq(t.dispatched, 2);
	ck_assert_uint_eq(atomic_load(&t.e->parked_bytes), 0);
	finish();
}
END_TEST

/* Asks of the library's "is this namespace held?", outside its submit
 * (the link wraps nvmefs_mpq_ns_held()). */
static atomic_uint held_asks;

int __real_nvmefs_mpq_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid);
int __wrap_nvmefs_mpq_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid);

int __wrap_nvmefs_mpq_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid)
{
	atomic_fetch_add(&held_asks, 1);
	return __real_nvmefs_mpq_ns_held(mpq, nsid);
}

/*
 * A read to a live namespace asks "held?" once, in the submit that sends
 * it (issue #36: submit says "held" itself), as Linux's
 * nvme_ns_head_submit_bio() decides requeue or submit once: the engine
 * does not ask the head beforehand.
 */
START_TEST(test_held_asked_once)
{
	static uint8_t image[4096];
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_16K, 0);
	engine_create(1);
	fill(image, sizeof(image), 5);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	engine_start();
	atomic_store(&held_asks, 0);
	send_req(EXP_READ, 0, 4096, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_msg(atomic_load(&held_asks) == 0, "the engine asked whether namespace 1 is "
		      "held %u time(s) before submitting one read, whose submit asks again",
		      atomic_load(&held_asks));
	finish();
}
END_TEST

/* CPU time the threads named nvmefs-worker (the front end's, serving the
 * workers) have used, in ms, each in @ms[] by the order /proc lists them;
 * returns how many there are. */
static unsigned int workers_cpu_ms(int64_t ms[], unsigned int max)
{
	long tick = sysconf(_SC_CLK_TCK);
	DIR *d = opendir("/proc/self/task");
	unsigned int n = 0;
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) && n < max) {
		unsigned long utime, stime;
		char path[300], comm[32];
		FILE *f;
		int ok;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
		 * majflt cmajflt utime stime */
		ok = fscanf(f, "%*d (%31[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			    comm, &utime, &stime) == 3;
		fclose(f);
		if (ok && !strcmp(comm, "nvmefs-worker"))
			ms[n++] = (int64_t)(utime + stime) * 1000 / tick;
	}
	closedir(d);
	return n;
}

/*
 * The target came back granting one I/O queue of two: worker 1's I/O goes
 * out on worker 0's queue, and worker 0 has no request of its own.  Under
 * a transport whose descriptor stays readable while a response waits and
 * whose arm says nothing (as tcp.c's did), worker 0 must still poll the
 * queue it carries I/O on: the read completes at once, not after the I/O
 * timeout, and no worker spins once it has.
 */
START_TEST(test_forwarded_io_on_idle_worker)
{
	struct fake_target target = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				      .mdts = MDTS_1M, .io = true };
	struct nvmefs_ctrl_status st;
	uint8_t image[4096];
	struct nvme_id_ns id;
	struct fake_step *s;
	struct exp_post p;
	int64_t end, cpu[2], after[2];
	struct done d;

	connect_queues(MDTS_1M, 10, 2);
	engine_create_workers(2, 1);
	fill(image, sizeof(image), 41);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* I/O queue 2 */
	fake_expect_destroy();		/* the admin queue */
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_script_attempt(TRADDR, &target, 32, &id, 2, 1);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	fake_arm_level = true;
	engine_start();
	fake_disconnect(1);
	for (end = now_ms() + 5000; now_ms() < end; usleep(1000)) {
		nvmefs_ctrl_status(t.ctrl, &st);
		if (st.state == NVMEFS_CTRL_LIVE && st.reconnects == 1)
			break;
	}
	ck_assert_int_eq(st.state, NVMEFS_CTRL_LIVE);
	ck_assert_uint_eq(st.io_queues, 1);
	/* To worker 1, whose queue has no connection of its own. */
	post(1, &p, EXP_READ, 0, 4096, 0, NULL, false, NULL, 0);
	d = wait_done(0, 2000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image, sizeof(image));
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.reads), 0);
	ck_assert_uint_eq(atomic_load(&t.e->workers[1].stats.reads), 1);
	ck_assert_uint_eq(workers_cpu_ms(cpu, 2), 2);
	usleep(300000);
	ck_assert_uint_eq(workers_cpu_ms(after, 2), 2);
	for (unsigned int i = 0; i < 2; i++)
		ck_assert_msg(after[i] - cpu[i] < 100, "worker thread %u spun while idle: %lld ms "
			      "of CPU in 300 ms", i, (long long)(after[i] - cpu[i]));
	finish();
}
END_TEST

/*
 * The front end goes (a ublk device stopping, which waits for its I/O in
 * flight) while a read is parked for a namespace an outage holds: after
 * exp_going() the read fails with EIO at once, where it would wait for the
 * reconnect (refused here for the whole 10 s of ctrl_loss_tmo), while the
 * front end's threads still serve.
 */
START_TEST(test_going_fails_held)
{
	struct nvmefs_ioq *q;
	struct fake_step *s;
	bool parked = false;
	struct done d;
	int64_t end;

	connect_with(MDTS_1M, 10);
	engine_create(2);
	q = nvmefs_ctrl_io_queue(t.ctrl, 0);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	s = fake_expect_create(TRADDR, "4420");
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "nobody listens (scripted)");
	fake_repeat(s, 0, FAKE_UNLIMITED);
	hold_namespace(q);
	send_req(EXP_READ, 0, 4096, 0, NULL);
	for (end = now_ms() + 10000; !parked && now_ms() < end; usleep(1000))
		parked = atomic_load(&t.e->parked_bytes) > 0;
	ck_assert_msg(parked, "the held read was not parked");
	exp_going(t.e);
	d = wait_done(0, 2000);
	ck_assert_msg(d.calls == 1, "the held read was answered %u times in 2 s after "
		      "exp_going()", d.calls);
	ck_assert_int_eq(d.err, EIO);
	ck_assert_uint_eq(t.refused, 0);
	ck_assert_uint_eq(t.dispatched, 1);
	ck_assert_uint_eq(atomic_load(&t.e->parked_bytes), 0);
	/* The controller was given up: its queues are gone already. */
	fs_loop_stop(t.loop);
	t.loop = NULL;
	exp_destroy(t.e);
	nvmefs_subsys_destroy(t.head);
	fake_assert_done();
}
END_TEST

TCase *engine_outage_tcase(void)
{
	TCase *tc = engine_tcase("outages");

	tcase_add_test(tc, test_held_namespace_parks);
	tcase_add_test(tc, test_held_asked_once);
	tcase_add_test(tc, test_forwarded_io_on_idle_worker);
	tcase_add_test(tc, test_going_fails_held);
	return tc;
}
