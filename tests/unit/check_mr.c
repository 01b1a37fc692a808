/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of registered memory under concurrent use: queues' owners
 * look regions up without a lock on every I/O while another thread
 * registers and releases regions.  Built three ways: plain, under ASan (a
 * record freed under a reader is a use after free) and under TSan (an
 * unsynchronized write to what a reader follows is a race).
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include <check.h>

#include "test_util.h"
#include "fake_transport.h"
#include "types/ctrl_types.h"
#include "transport/mr.h"

#define CHURNED 8
#define CYCLES 20000
#define READERS 3

struct stress {
	struct nvmefs_ctrl *ctrl;
	uint8_t *stable;
	struct nvmefs_mr *stable_mr;
	uint8_t *churned[CHURNED];
	atomic_bool stop;
	atomic_uint wrong;
	atomic_ulong lookups;
};

static void *reader(void *arg)
{
	struct stress *st = arg;
	unsigned long n = 0;

	while (!atomic_load(&st->stop)) {
		if (nvmefs_mr_find(st->ctrl, st->stable + 4096, 4096) != st->stable_mr)
			atomic_fetch_add(&st->wrong, 1);
		for (unsigned int i = 0; i < CHURNED; i++) {
			struct nvmefs_mr *mr = nvmefs_mr_find(st->ctrl, st->churned[i] + 512, 512);

			/* Found or not, as the writer stands; found, it is that region. */
			if (mr && mr->addr != st->churned[i])
				atomic_fetch_add(&st->wrong, 1);
		}
		n++;
	}
	atomic_fetch_add(&st->lookups, n);
	return NULL;
}

/*
 * Three readers look up a stable region and eight churned ones while the
 * test registers and releases the churned ones 20000 times: the stable one
 * is always found, a churned one only as itself, and (ASan, TSan) nothing a
 * reader follows is freed or written under it.
 */
START_TEST(test_lookup_while_churning)
{
	struct stress st = { 0 };
	pthread_t readers[READERS];
	struct nvmefs_mr *mr;

	st.ctrl = fake_connect("192.0.2.1", NULL, 0);
	st.stable = aligned_alloc(4096, 65536);
	ck_assert_ptr_nonnull(st.stable);
	ck_assert_int_eq(nvmefs_mr_reg(st.ctrl, st.stable, 65536, &st.stable_mr), 0);
	for (unsigned int i = 0; i < CHURNED; i++) {
		st.churned[i] = aligned_alloc(4096, 4096);
		ck_assert_ptr_nonnull(st.churned[i]);
	}
	for (unsigned int r = 0; r < READERS; r++)
		ck_assert_int_eq(pthread_create(&readers[r], NULL, reader, &st), 0);
	for (unsigned int c = 0; c < CYCLES; c++) {
		uint8_t *buf = st.churned[c % CHURNED];

		ck_assert_int_eq(nvmefs_mr_reg(st.ctrl, buf, 4096, &mr), 0);
		nvmefs_mr_dereg(mr);
	}
	atomic_store(&st.stop, true);
	for (unsigned int r = 0; r < READERS; r++)
		pthread_join(readers[r], NULL);
	ck_assert_uint_eq(atomic_load(&st.wrong), 0);
	ck_assert_uint_gt(atomic_load(&st.lookups), 0);
	nvmefs_mr_dereg(st.stable_mr);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(st.ctrl);
	for (unsigned int i = 0; i < CHURNED; i++)
		free(st.churned[i]);
	free(st.stable);
}
END_TEST

/* What a registration pins is the pages it touches, as the kernel counts
 * them (ib_umem_get): 4 KiB pages here. */
START_TEST(test_pinned_span)
{
	ck_assert_uint_eq(nvmefs_pinned_span(0x10000, 0, 4096), 0);
	ck_assert_uint_eq(nvmefs_pinned_span(0x10000, 1, 4096), 4096);
	ck_assert_uint_eq(nvmefs_pinned_span(0x10000, 4096, 4096), 4096);
	ck_assert_uint_eq(nvmefs_pinned_span(0x10000, 4097, 4096), 8192);
	ck_assert_uint_eq(nvmefs_pinned_span(0x10fff, 2, 4096), 8192);
	ck_assert_uint_eq(nvmefs_pinned_span(0x10800, 4096, 4096), 8192);
	ck_assert_uint_eq(nvmefs_pinned_span(0x10000, 147456 * 16, 4096), 147456 * 16);
}
END_TEST

/* A controller's pinned bytes follow its regions: up by each region's
 * pages as it is registered, down as it goes, back where they were. */
START_TEST(test_pinned_follows_regions)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *buf = aligned_alloc(page, 4 * page);
	struct nvmefs_mr *whole, *odd;
	uint64_t base;

	ck_assert_ptr_nonnull(buf);
	base = nvmefs_ctrl_pinned_bytes(ctrl);
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, buf, 2 * page, &whole), 0);
	ck_assert_uint_eq(nvmefs_ctrl_pinned_bytes(ctrl), base + 2 * page);
	/* Two bytes across a page boundary pin both pages. */
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, buf + 3 * page - 1, 2, &odd), 0);
	ck_assert_uint_eq(nvmefs_ctrl_pinned_bytes(ctrl), base + 4 * page);
	nvmefs_mr_dereg(whole);
	ck_assert_uint_eq(nvmefs_ctrl_pinned_bytes(ctrl), base + 2 * page);
	nvmefs_mr_dereg(odd);
	ck_assert_uint_eq(nvmefs_ctrl_pinned_bytes(ctrl), base);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
	free(buf);
}
END_TEST

static Suite *mr_suite(void)
{
	Suite *s = suite_create("mr");
	TCase *tc = tcase_create("registry");

	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lookup_while_churning);
	tcase_add_test(tc, test_pinned_span);
	tcase_add_test(tc, test_pinned_follows_regions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(mr_suite(), CK_ENV);
}
