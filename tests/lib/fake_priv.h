/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the scripted target's two halves share: fake_script.c's steps and
 * fake_transport.c's queues, matched under one lock. */
#ifndef NVMEFS_TESTS_FAKE_PRIV_H
#define NVMEFS_TESTS_FAKE_PRIV_H

#include <pthread.h>

#include "fake_transport.h"

/* A broken expectation ends the test with its message: Check's failure in
 * the unit tests; where Check is not linked (the fuzzers, built with
 * FAKE_NO_CHECK), the message on stderr and abort(), which libFuzzer
 * reports with the input. */
#ifdef FAKE_NO_CHECK
#include <stdio.h>
#include <stdlib.h>
#define fake_abort(...) \
	(fprintf(stderr, "%s:%d: ", __FILE__, __LINE__), fprintf(stderr, __VA_ARGS__), \
	 fputc('\n', stderr), abort())
#else
#include <check.h>
#define fake_abort(...) ck_abort_msg(__VA_ARGS__)
#endif
#define fake_assert(cond, ...) \
	do { \
		if (!(cond)) \
			fake_abort(__VA_ARGS__); \
	} while (0)
/* The condition itself as the message. */
#define fake_assert_that(cond) fake_assert(cond, "%s", #cond)

/* Guards the steps, the held responses and the counters (fake_transport.c). */
extern pthread_mutex_t fake_lock;

/* Forget every step (fake_reset()'s part in fake_script.c). */
void fake_script_reset(void);
/* The step that @kind (and @req's command, or @q's address) must be; fails
 * the test if it is not the next one. */
struct fake_step *fake_next_step(enum fake_step_kind kind, const struct nvmefs_queue *q,
				 const struct nvmefs_req *req);

#endif /* NVMEFS_TESTS_FAKE_PRIV_H */
