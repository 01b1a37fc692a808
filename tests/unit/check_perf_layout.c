/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The layout nvmefs perf chooses when its command line leaves it open: the
 * queues from the depth, the threads from the queues, the CPUs from the
 * process's affinity, and how a thread's depth spreads over its queues.
 */
#include "config.h"

#include <stdlib.h>

#include <check.h>

#include "test_util.h"
#include "../../src/cli/perf_layout.h"

/* --qd 32, as a user types it: the 4 queues of 8 that beat one queue of 32;
 * less depth, fewer queues, and never a queue without an I/O. */
START_TEST(test_auto_queues_from_depth)
{
	ck_assert_uint_eq(perf_auto_queues(32, 1), 4);
	ck_assert_uint_eq(perf_auto_queues(1, 1), 1);
	ck_assert_uint_eq(perf_auto_queues(8, 1), 1);
	ck_assert_uint_eq(perf_auto_queues(9, 1), 2);
	ck_assert_uint_eq(perf_auto_queues(16, 1), 2);
	ck_assert_uint_eq(perf_auto_queues(32, 2), 8);
	for (unsigned int qd = 1; qd <= 4095; qd++)
		ck_assert_uint_le(perf_auto_queues(qd, 1), qd);
}
END_TEST

/* Deep queues stop at what one thread polls, and the total at --queues' bound. */
START_TEST(test_auto_queues_bounded)
{
	ck_assert_uint_eq(perf_auto_queues(4095, 1), MAX_QUEUES_PER_THREAD);
	ck_assert_uint_eq(perf_auto_queues(4095, 16), PERF_MAX_QUEUES);
	ck_assert_uint_eq(perf_auto_queues(4095, 100), 200);
	ck_assert_uint_eq(perf_auto_queues(4095, PERF_MAX_QUEUES), PERF_MAX_QUEUES);
	ck_assert_uint_eq(perf_auto_queues(1, PERF_MAX_QUEUES), PERF_MAX_QUEUES);
}
END_TEST

START_TEST(test_auto_threads)
{
	ck_assert_uint_eq(perf_auto_threads(1), 1);
	ck_assert_uint_eq(perf_auto_threads(4), 1);
	ck_assert_uint_eq(perf_auto_threads(MAX_QUEUES_PER_THREAD), 1);
	ck_assert_uint_eq(perf_auto_threads(MAX_QUEUES_PER_THREAD + 1), 2);
	ck_assert_uint_eq(perf_auto_threads(PERF_MAX_QUEUES), PERF_MAX_QUEUES / MAX_QUEUES_PER_THREAD);
}
END_TEST

/* Pinned where the process may run (taskset, a container's cpuset), thread
 * t on the t-th such CPU; more threads than CPUs share them round robin. */
START_TEST(test_auto_cpus)
{
	unsigned int cpus[8];
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(2, &set);
	CPU_SET(5, &set);
	CPU_SET(7, &set);
	ck_assert_uint_eq(perf_auto_cpus(&set, 1, cpus, 8), 1);
	ck_assert_uint_eq(cpus[0], 2);
	ck_assert_uint_eq(perf_auto_cpus(&set, 2, cpus, 8), 2);
	ck_assert_uint_eq(cpus[1], 5);
	ck_assert_uint_eq(perf_auto_cpus(&set, 6, cpus, 8), 3);
	ck_assert_uint_eq(cpus[2], 7);
	ck_assert_uint_eq(perf_auto_cpus(&set, 6, cpus, 2), 2);
	CPU_ZERO(&set);
	ck_assert_uint_eq(perf_auto_cpus(&set, 1, cpus, 8), 0);
}
END_TEST

/* A thread's depth over its queues: every I/O placed, none more than one
 * apart, the first queues taking the remainder. */
START_TEST(test_queue_depth_spread)
{
	ck_assert_uint_eq(perf_queue_depth(32, 4, 0), 8);
	ck_assert_uint_eq(perf_queue_depth(32, 4, 3), 8);
	ck_assert_uint_eq(perf_queue_depth(10, 4, 0), 3);
	ck_assert_uint_eq(perf_queue_depth(10, 4, 1), 3);
	ck_assert_uint_eq(perf_queue_depth(10, 4, 2), 2);
	ck_assert_uint_eq(perf_queue_depth(10, 4, 3), 2);
	for (unsigned int qd = 1; qd <= 64; qd++) {
		for (unsigned int nq = 1; nq <= qd && nq <= MAX_QUEUES_PER_THREAD; nq++) {
			unsigned int sum = 0;

			for (unsigned int k = 0; k < nq; k++) {
				ck_assert_uint_ge(perf_queue_depth(qd, nq, k), 1);
				ck_assert_uint_le(perf_queue_depth(qd, nq, 0) - perf_queue_depth(qd, nq, k), 1);
				sum += perf_queue_depth(qd, nq, k);
			}
			ck_assert_uint_eq(sum, qd);
		}
	}
}
END_TEST

static Suite *layout_suite(void)
{
	Suite *s = suite_create("perf layout");
	TCase *tc = tcase_create("choices");

	tcase_add_test(tc, test_auto_queues_from_depth);
	tcase_add_test(tc, test_auto_queues_bounded);
	tcase_add_test(tc, test_auto_threads);
	tcase_add_test(tc, test_auto_cpus);
	tcase_add_test(tc, test_queue_depth_spread);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(layout_suite(), CK_NORMAL);
}
