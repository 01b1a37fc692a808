/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the scripted target's files share: fake_script.c's steps,
 * fake_transport.c's queues (matched under one lock) and fake_exec.c's
 * running of commands without a script. */
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

#include "transport/queue.h"

/* What process() hands a queue next: a send completion or a response. */
struct fake_event {
	bool resp;			/* else a send completion */
	bool pause_after;		/* end this process() call after it */
	struct nvmefs_req *req;
	struct fake_step *step;
	struct nvmefs_cqe cqe;
};

/* The transport's side of a queue. */
struct fake_queue {
	union nvmefs_cmd *capsules;
	uint8_t *data;
	uint32_t slot_size;
	struct fake_event *ev;
	size_t nr_ev, ev_head, ev_cap;
	uint16_t sq_model;		/* the SQ head a controller that keeps up reports */
	uint16_t last_cid;
	bool have_last_cid;
	int efd;			/* queue_fd: an eventfd */
	bool armed;			/* queue_arm'ed: signal the next event */
	int cm_efd;			/* queue_event_fd: an eventfd */
	/* fake_disconnect(): what queue_check says; set by the test's thread,
	 * read by the queue's owner (an engine worker). */
	_Atomic int cm_error;
	bool stopped;
	uint16_t qid;
	/* fake_break(): the next process() fails. */
	_Atomic bool broken;
	/* fake_defer_posts: events of commands not handed to the device yet. */
	struct fake_event *unposted;
	size_t nr_unposted;
};

/* @ev to @fq's queue now, signalling its descriptor if armed. */
void fake_push_now(struct fake_queue *fq, const struct fake_event *ev);
/* The response @ev of @fq held back until fake_release() lets it go. */
void fake_hold(struct fake_queue *fq, const struct fake_event *ev);

/* fake_exec.c: fake_exec's side of submit() and of process(). */
int fake_exec_submit(struct nvmefs_queue *q, struct fake_queue *fq, struct nvmefs_req *req);
void fake_exec_reply(struct nvmefs_queue *q, struct fake_queue *fq, struct fake_event *ev);

/* Guards the steps, the held responses and the counters (fake_transport.c). */
extern pthread_mutex_t fake_lock;

/* Forget every step (fake_reset()'s part in fake_script.c). */
void fake_script_reset(void);
/* The step that @kind (and @req's command, or @q's address) must be; fails
 * the test if it is not the next one. */
struct fake_step *fake_next_step(enum fake_step_kind kind, const struct nvmefs_queue *q,
				 const struct nvmefs_req *req);

#endif /* NVMEFS_TESTS_FAKE_PRIV_H */
