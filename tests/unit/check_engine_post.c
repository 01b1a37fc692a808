/*
 * The export engine: requests a front end keeps in its own memory and
 * starts on the thread serving a worker (exp_worker_post(), as FUSE over
 * io_uring's entries are started), through engine_harness.h.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include <check.h>
#include <nvme/types.h>

#include "engine_harness.h"

/*
 * Posted rather than read from the source: an aligned read lands in the
 * poster's registered buffer and completes from there (no copy), a write
 * goes to the target from the poster's buffer, and more posts than the
 * worker has buffers wait for one.
 */
START_TEST(test_posted_requests)
{
	static uint8_t ring[3][8192] __attribute__((aligned(4096)));
	struct nvmefs_subsys_mr *mr;
	struct exp_post p[3];
	uint8_t image[8192];
	struct fake_step *s, *w;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	ck_assert_int_eq(nvmefs_subsys_mr_reg(t.head, ring, sizeof(ring), &mr), 0);
	fill(image, sizeof(image), 31);
	fill(ring[1], 4096, 77);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 16, 16, 8192);
	fake_step_data(s, image, sizeof(image));
	w = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 1, 1, 512);
	fake_step_data(s, image, 512);
	engine_start();
	post(0, &p[0], EXP_READ, 8192, 8192, 0, NULL, false, ring[0], sizeof(ring[0]));
	post(0, &p[1], EXP_WRITE, 0, 4096, 1, ring[1], false, NULL, 0);
	/* Unaligned: read into the worker's buffer, completed from there. */
	post(0, &p[2], EXP_READ, 600, 100, 2, NULL, false, ring[2], sizeof(ring[2]));
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_ptr_eq(d.from, ring[0]);
	ck_assert_mem_eq(ring[0], image, sizeof(image));
	d = wait_done(1, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, 4096);
	ck_assert_mem_eq(w->captured, ring[1], 4096);
	d = wait_done(2, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, 100);
	ck_assert_ptr_ne(d.from, ring[2] + 88);
	ck_assert_mem_eq(d.data, image + 88, 100);
	ck_assert_uint_eq(atomic_load(&t.e->writes_inflight_max), 1);
	ck_assert_uint_eq(atomic_load(&t.e->writes_inflight), 0);
	fs_loop_stop(t.loop);
	t.loop = NULL;
	nvmefs_subsys_mr_dereg(mr);
	finish();
}
END_TEST

/* The replies a thread makes as its I/O completes are flushed (ring.c:
 * committed in one io_uring_enter) before it sleeps again, not left for
 * the next request to carry. */
START_TEST(test_posted_replies_flushed)
{
	struct exp_post p[2];
	uint8_t image[4096];
	struct fake_step *s;
	int64_t end;

	connect_with(MDTS_1M, 0);
	engine_create(4);
	fill(image, sizeof(image), 5);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	engine_start();
	post(0, &p[0], EXP_READ, 0, 4096, 0, NULL, false, NULL, 0);
	post(0, &p[1], EXP_READ, 4096, 4096, 1, NULL, false, NULL, 0);
	ck_assert_int_eq(wait_done(0, 5000).err, 0);
	ck_assert_int_eq(wait_done(1, 5000).err, 0);
	end = now_ms() + 2000;
	pthread_mutex_lock(&t.lock);
	while (t.flushed < 2 && now_ms() < end) {
		pthread_mutex_unlock(&t.lock);
		usleep(1000);
		pthread_mutex_lock(&t.lock);
	}
	ck_assert_msg(t.flushed == 2, "%u of 2 completed requests' replies flushed", t.flushed);
	pthread_mutex_unlock(&t.lock);
	fs_loop_stop(t.loop);
	t.loop = NULL;
	finish();
}
END_TEST

/* A write posted with a payload that is not registered is copied into the
 * worker's buffer and sent from there. */
START_TEST(test_posted_copy)
{
	uint8_t payload[4096];
	struct exp_post p;
	struct fake_step *w;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	fill(payload, sizeof(payload), 5);
	w = fake_expect_rw(1, nvme_cmd_write, 1, 8, 8, 4096);
	engine_start();
	post(0, &p, EXP_WRITE, 4096, sizeof(payload), 0, payload, true, NULL, 0);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(w->captured, payload, sizeof(payload));
	finish();
}
END_TEST

/*
 * Posted reads to a namespace the queue holds (its controller reconnecting)
 * are parked, as the source's are: the worker's one buffer stays free for
 * I/O that can go.  Once the controller is back they go, in order.
 */
START_TEST(test_posted_held_namespace_parks)
{
	uint8_t image[2][4096];
	struct nvmefs_ioq *q;
	struct exp_post p[2];
	struct fake_step *s;
	bool parked = false;
	struct done d;
	int64_t end;

	q = outage_engine(1);
	fill(image[0], sizeof(image[0]), 41);
	fill(image[1], sizeof(image[1]), 43);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_data(s, image[0], sizeof(image[0]));
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_data(s, image[1], sizeof(image[1]));
	hold_namespace(q);
	post(0, &p[0], EXP_READ, 0, 4096, 0, NULL, false, NULL, 0);
	post(0, &p[1], EXP_READ, 4096, 4096, 1, NULL, false, NULL, 0);
	for (end = now_ms() + 10000; !parked && now_ms() < end; usleep(1000))
		parked = atomic_load(&t.e->parked_bytes) > 0 && !posts_waiting(0);
	ck_assert_msg(parked, "the posted reads to the held namespace were not parked");
	ck_assert_msg(atomic_load(&t.e->workers_with_free) == 1,
		      "a posted read to the held namespace took the worker's buffer");
	ctrl_back();
	d = wait_done(0, 10000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image[0], sizeof(image[0]));
	d = wait_done(1, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image[1], sizeof(image[1]));
	ck_assert_uint_eq(atomic_load(&t.e->parked_bytes), 0);
	finish();
}
END_TEST

TCase *engine_post_tcase(void)
{
	TCase *tc = engine_tcase("posted");

	tcase_add_test(tc, test_posted_requests);
	tcase_add_test(tc, test_posted_copy);
	tcase_add_test(tc, test_posted_replies_flushed);
	tcase_add_test(tc, test_posted_held_namespace_parks);
	return tc;
}
