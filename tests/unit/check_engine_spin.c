/*
 * A worker with one request in flight polls for it rather than sleep, for
 * a bounded time; with more in flight, or past that time, it sleeps; a
 * completion starts the next request's time afresh, and with nothing left
 * in flight the worker polls for the next request for as long.  The
 * worker's queue is a stand-in the link's wraps of nvmefs_mpq_* answer for
 * (every other queue goes to the library).
 */
#include "config.h"

#include <stdatomic.h>
#include <unistd.h>

#include <check.h>

#include "engine_harness.h"
#include "../../src/common/histogram.h"

/* The stand-in queue's address, and what it says. */
static char spin_queue;
static unsigned int spin_inflight;
static int spin_completions;
static unsigned int spin_arms;

#define IS_STAND_IN(mpq) ((const void *)(mpq) == (const void *)&spin_queue)

unsigned int __real_nvmefs_mpq_inflight(const struct nvmefs_mpq *mpq);
unsigned int __wrap_nvmefs_mpq_inflight(const struct nvmefs_mpq *mpq);
int __real_nvmefs_mpq_arm(struct nvmefs_mpq *mpq);
int __wrap_nvmefs_mpq_arm(struct nvmefs_mpq *mpq);
int __real_nvmefs_mpq_poll(struct nvmefs_mpq *mpq, int timeout_ms);
int __wrap_nvmefs_mpq_poll(struct nvmefs_mpq *mpq, int timeout_ms);
int __real_nvmefs_mpq_wait_ms(const struct nvmefs_mpq *mpq);
int __wrap_nvmefs_mpq_wait_ms(const struct nvmefs_mpq *mpq);

unsigned int __wrap_nvmefs_mpq_inflight(const struct nvmefs_mpq *mpq)
{
	return IS_STAND_IN(mpq) ? spin_inflight : __real_nvmefs_mpq_inflight(mpq);
}

int __wrap_nvmefs_mpq_arm(struct nvmefs_mpq *mpq)
{
	if (!IS_STAND_IN(mpq))
		return __real_nvmefs_mpq_arm(mpq);
	spin_arms++;
	return 0;
}

int __wrap_nvmefs_mpq_poll(struct nvmefs_mpq *mpq, int timeout_ms)
{
	int n = spin_completions;

	if (!IS_STAND_IN(mpq))
		return __real_nvmefs_mpq_poll(mpq, timeout_ms);
	spin_completions = 0;
	return n;
}

int __wrap_nvmefs_mpq_wait_ms(const struct nvmefs_mpq *mpq)
{
	return IS_STAND_IN(mpq) ? -1 : __real_nvmefs_mpq_wait_ms(mpq);
}

static struct exp spin_exp;
static struct exp_worker spin_worker;

static void spin_setup(void)
{
	spin_exp = (struct exp){ 0 };
	spin_worker = (struct exp_worker){ .e = &spin_exp, .mpq = (void *)&spin_queue };
	spin_inflight = 0;
	spin_completions = 0;
	spin_arms = 0;
}

/* Arms until the worker sleeps; how many times it chose to poll instead. */
static unsigned int spins_before_sleep(unsigned int max, int *wait)
{
	unsigned int spins = 0;

	while (!exp_worker_arm(&spin_worker, wait) && spins < max)
		spins++;
	return spins;
}

START_TEST(test_one_inflight_polls_then_sleeps)
{
	uint64_t start, slept;
	int wait;

	spin_inflight = 1;
	start = hist_now_ns();
	/* Polling, not armed: no sleep on the completion channel... */
	ck_assert(!exp_worker_arm(&spin_worker, &wait));
	ck_assert_uint_eq(spin_arms, 0);
	/* ... for the bound (1 ms), then the same request is slept on.  Only
	 * the lower end is asserted: a loaded host may keep the worker off its
	 * CPU past the bound between two calls, so how many polls fit varies. */
	ck_assert_uint_lt(spins_before_sleep(100000000, &wait), 100000000);
	slept = hist_now_ns();
	ck_assert_msg(slept - start >= 1000000, "the worker slept %lld ns after its request went "
		      "out, before the 1 ms bound", (long long)(slept - start));
	ck_assert_uint_eq(spin_arms, 1);
	ck_assert_int_eq(wait, 1000);
	/* ... and stays slept on: its time does not start again. */
	ck_assert(exp_worker_arm(&spin_worker, &wait));
	ck_assert_uint_eq(spin_arms, 2);
}
END_TEST

START_TEST(test_completion_restarts_the_bound)
{
	int wait;

	spin_inflight = 1;
	ck_assert(!exp_worker_arm(&spin_worker, &wait));
	usleep(2000);
	/* The request completed and the next went out: its own round trip. */
	spin_completions = 1;
	ck_assert(exp_worker_run(&spin_worker));
	ck_assert(!exp_worker_arm(&spin_worker, &wait));
	ck_assert_uint_eq(spin_arms, 0);
	/* The bound ends the polling; a run of them is not endless. */
	ck_assert_uint_lt(spins_before_sleep(100000000, &wait), 100000000);
	ck_assert_uint_eq(spin_arms, 1);
}
END_TEST

START_TEST(test_more_inflight_or_none_sleeps)
{
	int wait;

	spin_inflight = 2;
	ck_assert(exp_worker_arm(&spin_worker, &wait));
	spin_inflight = 0;
	ck_assert(exp_worker_arm(&spin_worker, &wait));
	ck_assert_uint_eq(spin_arms, 2);
	/* Down to one from more: that one is polled for. */
	spin_inflight = 1;
	ck_assert(!exp_worker_arm(&spin_worker, &wait));
	ck_assert_uint_eq(spin_arms, 2);
}
END_TEST

START_TEST(test_none_inflight_after_completion_polls_for_the_next)
{
	uint64_t done, slept;
	int wait;

	/* The last request in flight completed (no later than now): nothing
	 * is left... */
	spin_inflight = 1;
	spin_completions = 1;
	done = hist_now_ns();
	ck_assert(exp_worker_run(&spin_worker));
	spin_inflight = 0;
	/* ... and the worker polls for the next request rather than arm, for
	 * the bound after that completion, then sleeps.  Only that it slept no
	 * sooner is asserted, not that it polled some number of times: a
	 * loaded host may keep it off its CPU past the bound at once. */
	ck_assert_uint_lt(spins_before_sleep(100000000, &wait), 100000000);
	slept = hist_now_ns();
	ck_assert_msg(slept - done >= 1000000, "the worker slept %lld ns after its last completion, "
		      "before the 1 ms bound", (long long)(slept - done));
	ck_assert_uint_eq(spin_arms, 1);
	/* It stays asleep while nothing completes. */
	ck_assert(exp_worker_arm(&spin_worker, &wait));
	ck_assert_uint_eq(spin_arms, 2);
}
END_TEST

TCase *engine_spin_tcase(void)
{
	TCase *tc = tcase_create("spin");

	tcase_add_checked_fixture(tc, spin_setup, NULL);
	/* As engine_tcase()'s: Check's 4 s default, fork and exit (a
	 * sanitizer's leak scan) included, is too short on a loaded host. */
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_one_inflight_polls_then_sleeps);
	tcase_add_test(tc, test_completion_restarts_the_bound);
	tcase_add_test(tc, test_more_inflight_or_none_sleeps);
	tcase_add_test(tc, test_none_inflight_after_completion_polls_for_the_next);
	return tc;
}
