/*
 * What a mount pins (src/fuse/memlock.c, by src/export/limits.c's rule),
 * which the locked-memory check holds against RLIMIT_MEMLOCK: the request
 * buffers and FUSE over io_uring's payloads, once for each path over RDMA;
 * nothing over TCP.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <check.h>

#include "test_util.h"
#include "../../src/export/engine.h"
#include "../../src/fuse/fs.h"

/* One request buffer at max_io 128 KiB: the request and its FUSE header
 * slack (8 KiB), and two blocks for read-modify-write (4 KiB each). */
#define REQ_128K ((size_t)(128 + 16) << 10)

static struct nvmefs_fs_opts opts(unsigned int workers, unsigned int depth, size_t max_io)
{
	return (struct nvmefs_fs_opts){ .workers = workers, .depth = depth, .max_io = max_io };
}

START_TEST(test_tcp_pins_nothing)
{
	struct nvmefs_fs_opts o = opts(2, 16, 128 << 10);

	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 0, 0), 0);
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 0, 4), 0);
}
END_TEST

START_TEST(test_rdma_buffers_per_path)
{
	struct nvmefs_fs_opts o = opts(2, 16, 128 << 10);

	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 1, 0), 2 * 16 * REQ_128K);
	/* Registered with each path's device. */
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 2, 0), 2 * 2 * 16 * REQ_128K);
}
END_TEST

/* Each CPU's ring has an entry for every request the mount keeps in flight
 * (2 x 16), its payload max_io (rounded up to pages, 8 KiB at least, which
 * the kernel asks) after a page for the request's headers, all registered
 * on each RDMA path like the buffers when the mount starts. */
START_TEST(test_ring_payloads)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct nvmefs_fs_opts o = opts(2, 16, 128 << 10);
	size_t odd = (100 << 10) + 1;

	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 1, 4),
			  2 * 16 * (REQ_128K + 4 * (((size_t)128 << 10) + 4096)));
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 2, 4),
			  2 * 2 * 16 * (REQ_128K + 4 * (((size_t)128 << 10) + 4096)));
	o = opts(1, 1, odd);
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 1, 1),
			  odd + ((size_t)16 << 10) + (odd + page - 1) / page * page + 4096);
	o = opts(1, 1, 512);
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 1, 1), 512 + ((size_t)16 << 10) + 8192 + 4096);
}
END_TEST

/* A sum past size_t is one no limit covers, not a small one wrapped. */
START_TEST(test_saturates)
{
	struct nvmefs_fs_opts o = opts(UINT32_MAX, UINT32_MAX, SIZE_MAX / 4);

	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 1, 0), SIZE_MAX);
	o = opts(1, 1, (size_t)1 << 40);
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, 1, UINT32_MAX), SIZE_MAX);
	ck_assert_uint_eq(nvmefs_fs_pinned_need(&o, UINT32_MAX, 1), SIZE_MAX);
}
END_TEST

/* The limit keeps 1 MiB to spare, and a saturated sum is covered by no
 * limit rather than wrapped into a small one. */
START_TEST(test_limit_covers)
{
	ck_assert(exp_memlock_covers(2u << 20, 1u << 20));
	ck_assert(!exp_memlock_covers((2u << 20) - 1, 1u << 20));
	ck_assert(exp_memlock_covers(1u << 20, 0));
	ck_assert(!exp_memlock_covers(UINT64_MAX - 1, SIZE_MAX));
	ck_assert(!exp_memlock_covers(UINT64_MAX - 1, SIZE_MAX - 4096));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("memlock");
	TCase *tc = tcase_create("pinned");

	tcase_add_test(tc, test_tcp_pins_nothing);
	tcase_add_test(tc, test_rdma_buffers_per_path);
	tcase_add_test(tc, test_ring_payloads);
	tcase_add_test(tc, test_saturates);
	tcase_add_test(tc, test_limit_covers);
	suite_add_tcase(s, tc);
	return run_suite(s, CK_NORMAL);
}
