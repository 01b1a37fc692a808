/*
 * The contract of a transport's queue_arm (transport_ops.h), one check for
 * every transport the unit tests can drive: the fake (check_io_poll) and
 * NVMe/TCP against its scripted loopback target (check_tcp).  RDMA needs a
 * device, and is left to the testbed.
 *
 * Callers sleep on the queue's descriptor and process the queue only when
 * arm says something waits; the descriptor may be level-triggered (a
 * socket).  So a response that has arrived must make arm report it, or a
 * worker with nothing of its own in flight never takes it and its
 * epoll_wait() returns at once, forever.
 */
#ifndef NVMEFS_TESTS_ARM_CONTRACT_H
#define NVMEFS_TESTS_ARM_CONTRACT_H

#include <poll.h>
#include <stdbool.h>

#include <check.h>

#include "types/ctrl_types.h"
#include "types/transport_ops.h"

struct arm_contract {
	/* A queue with one request in flight whose response has not come. */
	struct nvmefs_queue *q;
	/* Makes the target send that response. */
	void (*answer)(void *arg);
	/* Whether the request has ended. */
	bool (*ended)(void *arg);
	void *arg;
};

static inline void arm_contract_check(const struct arm_contract *c)
{
	const struct nvmefs_transport_ops *ops = c->q->ctrl->ops;
	struct pollfd pfd = { .fd = ops->queue_fd(c->q), .events = POLLIN };
	int n;

	/* What arming finds before the answer (a send completion) is taken. */
	for (int i = 0; (n = ops->queue_arm(c->q)) > 0; i++) {
		ck_assert_int_lt(i, 10);
		ck_assert_int_ge(ops->process(c->q, 0), 0);
	}
	ck_assert_int_eq(n, 0);
	ck_assert(!c->ended(c->arg));

	c->answer(c->arg);
	ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
	ck_assert_msg(ops->queue_arm(c->q) > 0, "%s: the queue's descriptor is readable with a "
		      "response waiting, and arm says nothing waits", ops->name);
	ck_assert_int_gt(ops->process(c->q, 0), 0);
	ck_assert(c->ended(c->arg));

	/* Taken: nothing waits, and the descriptor wakes nobody. */
	ck_assert_int_eq(ops->queue_arm(c->q), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
}

#endif /* NVMEFS_TESTS_ARM_CONTRACT_H */
