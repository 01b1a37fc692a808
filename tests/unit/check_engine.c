/*
 * The export engine (src/export) without FUSE, through engine_harness.h:
 * requests read from the source, split, retried, reserved and counted.
 * Posted requests are check_engine_post.c's, the outages
 * check_engine_outage.c's.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <nvme/types.h>

#include "test_util.h"
#include "engine_harness.h"

/* ------------------------------------------------------------------------ */

/*
 * An unaligned read of 40000 bytes at byte 1000: blocks 1..80 (80 blocks),
 * which the library splits at MDTS (32 blocks) into three commands; the
 * read completes once, with the bytes from 488 into the first block.
 */
START_TEST(test_read_split_mdts)
{
	static uint8_t image[80 * 512];
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_16K, 0);
	engine_create(2);
	fill(image, sizeof(image), 3);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 1, 32, 32 * 512);
	fake_step_data(s, image, 32 * 512);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 33, 32, 32 * 512);
	fake_step_data(s, image + 32 * 512, 32 * 512);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 65, 16, 16 * 512);
	fake_step_data(s, image + 64 * 512, 16 * 512);
	engine_start();
	send_req(EXP_READ, 1000, 40000, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, 40000);
	ck_assert_mem_eq(d.data, image + 1000 - 512, 40000);
	ck_assert_uint_eq(t.refused, 0);
	finish();
}
END_TEST

/*
 * An unaligned write of 1000 bytes at byte 700 (blocks 1..3): the two
 * partial edge blocks are read, the whole one between written from the
 * request's own buffer, then the edges written back with the new bytes
 * laid over what the target held.  A second write overlapping it waits
 * for its reservation: its commands come only after the first's (the
 * script's order would fail otherwise).
 */
START_TEST(test_write_unaligned_reserved)
{
	uint8_t payload[1000], payload2[512], blk1[512], blk3[512], want[512];
	struct fake_step *r1, *r3, *w2, *w1, *w3, *b1;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(2);
	fill(payload, sizeof(payload), 11);
	fill(payload2, sizeof(payload2), 99);
	fill(blk1, sizeof(blk1), 40);
	fill(blk3, sizeof(blk3), 70);
	r1 = fake_expect_rw(1, nvme_cmd_read, 1, 1, 1, 512);
	fake_step_data(r1, blk1, sizeof(blk1));
	r3 = fake_expect_rw(1, nvme_cmd_read, 1, 3, 1, 512);
	fake_step_data(r3, blk3, sizeof(blk3));
	w2 = fake_expect_rw(1, nvme_cmd_write, 1, 2, 1, 512);
	w1 = fake_expect_rw(1, nvme_cmd_write, 1, 1, 1, 512);
	w3 = fake_expect_rw(1, nvme_cmd_write, 1, 3, 1, 512);
	/* The second: block 3, aligned, after the first is done. */
	b1 = fake_expect_rw(1, nvme_cmd_write, 1, 3, 1, 512);
	/* Both are waiting before the worker starts: it takes both at once. */
	send_req(EXP_WRITE, 700, sizeof(payload), 0, payload);
	send_req(EXP_WRITE, 3 * 512, sizeof(payload2), 1, payload2);
	engine_start();
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, sizeof(payload));
	d = wait_done(1, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, sizeof(payload2));
	/* The middle block straight from the payload. */
	ck_assert_uint_eq(w2->captured_len, 512);
	ck_assert_mem_eq(w2->captured, payload + (1024 - 700), 512);
	/* Block 1: the target's first 188 bytes, then the payload's first 324. */
	memcpy(want, blk1, 188);
	memcpy(want + 188, payload, 324);
	ck_assert_mem_eq(w1->captured, want, 512);
	/* Block 3: the payload's last 164 bytes, then the target's. */
	memcpy(want, payload + 1000 - 164, 164);
	memcpy(want + 164, blk3 + 164, 512 - 164);
	ck_assert_mem_eq(w3->captured, want, 512);
	ck_assert_mem_eq(b1->captured, payload2, 512);
	finish();
}
END_TEST

/* A status without DNR is retried below the engine; the request completes
 * once, with the data of the try that worked. */
START_TEST(test_retryable_status)
{
	uint8_t image[4096];
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	fill(image, sizeof(image), 5);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	engine_start();
	send_req(EXP_READ, 4096, 4096, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image, sizeof(image));
	finish();
}
END_TEST

/* A status with DNR is not retried: the request fails once, with EIO. */
START_TEST(test_dnr_status_fails)
{
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, true);
	engine_start();
	send_req(EXP_READ, 4096, 4096, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, EIO);
	ck_assert_ptr_null(d.data);
	finish();
}
END_TEST

/* A write, then a flush, then zeroing and punching: each in order, each
 * completed once; the write from the request's buffer. */
START_TEST(test_flush_after_writes)
{
	uint8_t payload[8192];
	struct fake_step *w, *s;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	fill(payload, sizeof(payload), 17);
	w = fake_expect_rw(1, nvme_cmd_write, 1, 0, 16, 8192);
	fake_expect_io(1, nvme_cmd_flush, 1);
	s = fake_expect_io(1, nvme_cmd_write_zeroes, 1);
	s->match |= FAKE_M_CDW10 | FAKE_M_CDW12;
	s->cdw10 = 32;
	s->cdw12 = 7;		/* 8 blocks, 0's based */
	engine_start();
	send_req(EXP_WRITE, 0, sizeof(payload), 0, payload);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, sizeof(payload));
	ck_assert_mem_eq(w->captured, payload, sizeof(payload));
	send_req(EXP_FLUSH, 0, 0, 1, NULL);
	d = wait_done(1, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, 0);
	send_req(EXP_ZERO, 32 * 512, 4096, 2, NULL);
	d = wait_done(2, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.writes), 1);
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.flushes), 1);
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.write_zeroes), 1);
	finish();
}
END_TEST

/* The number after "@key": in the stats' JSON @text. */
static uint64_t json_number(const char *text, const char *key)
{
	char quoted[64];
	const char *at;
	unsigned long long v;

	snprintf(quoted, sizeof(quoted), "\"%s\":", key);
	at = strstr(text, quoted);
	ck_assert_msg(at, "no %s in %s", key, text);
	ck_assert_int_eq(sscanf(at + strlen(quoted), " %llu", &v), 1);
	return v;
}

/*
 * The stats' pinned_bytes: what the controller registered before the
 * export (its queues' pools), plus the export's request buffers, depth x
 * (max_io + header slack + two edge blocks), registered once.
 */
START_TEST(test_stats_pinned_bytes)
{
	uint64_t before;
	size_t len;
	char *text;

	connect_with(MDTS_1M, 0);
	before = nvmefs_ctrl_pinned_bytes(t.ctrl);
	engine_create(3);
	text = exp_stats_json(t.e, &t.ns, 1, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(json_number(text, "pinned_bytes"),
			  before + 3 * (MAX_IO + EXP_BUF_SLACK + 2 * EXP_MAX_LBA_SIZE));
	ck_assert_uint_eq(json_number(text, "pinned_bytes"), nvmefs_ctrl_pinned_bytes(t.ctrl));
	free(text);
	engine_start();
	finish();
}
END_TEST

/* The stats' remote_keys: the controller's key counts, and whether its
 * keys are per I/O (the scripted transport's are standing). */
START_TEST(test_stats_remote_keys)
{
	size_t len;
	char *text, *at;

	connect_with(MDTS_1M, 0);
	atomic_store(&t.ctrl->rkeys.bound, 7);
	atomic_store(&t.ctrl->rkeys.invalidated_by_target, 5);
	atomic_store(&t.ctrl->rkeys.invalidated_locally, 2);
	engine_create(3);
	text = exp_stats_json(t.e, &t.ns, 1, &len);
	ck_assert_ptr_nonnull(text);
	at = strstr(text, "\"remote_keys\":");
	ck_assert_msg(at, "no remote_keys in %s", text);
	ck_assert_uint_eq(json_number(at, "bound"), 7);
	ck_assert_uint_eq(json_number(at, "invalidated_by_target"), 5);
	ck_assert_uint_eq(json_number(at, "invalidated_locally"), 2);
	ck_assert_msg(strstr(at, "\"per_io\": false") || strstr(at, "\"per_io\":false"),
		      "remote_keys.per_io is not false in %s", text);
	free(text);
	engine_start();
	finish();
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = engine_tcase("requests");

	tcase_add_test(tc, test_read_split_mdts);
	tcase_add_test(tc, test_write_unaligned_reserved);
	tcase_add_test(tc, test_retryable_status);
	tcase_add_test(tc, test_dnr_status_fails);
	tcase_add_test(tc, test_flush_after_writes);
	tcase_add_test(tc, test_stats_pinned_bytes);
	tcase_add_test(tc, test_stats_remote_keys);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, engine_post_tcase());
	suite_add_tcase(s, engine_outage_tcase());
	suite_add_tcase(s, engine_spin_tcase());
	return s;
}

int main(void)
{
	return run_suite(engine_suite(), CK_NORMAL);
}
