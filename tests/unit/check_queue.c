/*
 * Unit tests of queue.c: request slots, command ids, the rule that a
 * request ends only after both its send completion and its response,
 * command id validation, timeouts and SQ head flow control.
 *
 * The first part drives a queue by hand through a recording transport,
 * so each step is under the test's control; the second goes through a
 * connected controller and the scripted transport (fake_transport.c).
 *
 * One job, kept in one file past 700 lines: the life of a request on a
 * queue, from its slot to its end.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "test_util.h"
#include "fake_transport.h"
#include "types/ctrl_types.h"
#include "base/error.h"
#include "ctrl/admin.h"
#include "transport/queue.h"
#include "types/transport_ops.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------ */
/* A recording transport: submit() remembers, process() only waits.          */
/* ------------------------------------------------------------------------ */

#define REC_MAX 4096

static union nvmefs_cmd rec_capsules[REC_MAX];
static struct nvmefs_req *rec_sent[64];
static unsigned int rec_nr_sent, rec_nr_process;
static struct nvmefs_ctrl *rec_ctrl;

static int rec_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	(void)q;
	ck_assert_uint_lt(rec_nr_sent, 64);
	rec_sent[rec_nr_sent++] = req;
	return 0;
}

static int rec_process(struct nvmefs_queue *q, int timeout_ms)
{
	struct timespec ts = { .tv_sec = timeout_ms / 1000,
			       .tv_nsec = (long)(timeout_ms % 1000) * 1000000 };

	(void)q;
	rec_nr_process++;
	nanosleep(&ts, NULL);
	return 0;
}

static const struct nvmefs_transport_ops rec_ops = {
	.name = "recorder",
	.submit = rec_submit,
	.process = rec_process,
};

static void rec_setup(void)
{
	rec_ctrl = calloc(1, sizeof(*rec_ctrl));
	ck_assert_ptr_nonnull(rec_ctrl);
	rec_ctrl->ops = &rec_ops;
	rec_nr_sent = 0;
	rec_nr_process = 0;
	memset(rec_capsules, 0, sizeof(rec_capsules));
}

static void rec_teardown(void)
{
	free(rec_ctrl);
	rec_ctrl = NULL;
}

/* A queue of @size entries whose slots have capsules, as a transport gives. */
static void rec_queue(struct nvmefs_queue *q, uint16_t size)
{
	struct nvmefs_queue_params p = { .qid = 3, .size = size };
	uint16_t i;

	ck_assert_int_eq(nvmefs_queue_init(q, rec_ctrl, &p), 0);
	for (i = 0; i < q->nr_reqs; i++)
		q->reqs[i].cmd = &rec_capsules[i];
}

static struct nvmefs_cqe cqe_for(uint16_t cid, uint16_t sq_head, uint32_t dw0)
{
	struct nvmefs_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.cid = nvmefs_cpu_to_le16(cid);
	cqe.sq_head = nvmefs_cpu_to_le16(sq_head);
	cqe.sq_id = nvmefs_cpu_to_le16(3);
	cqe.result.dw.dw0 = nvmefs_cpu_to_le32(dw0);
	return cqe;
}

/* Counts done() calls per slot and keeps the error each ended with. */
static unsigned int done_calls[REC_MAX];
static int done_error[REC_MAX];

static void on_done(struct nvmefs_req *req)
{
	done_calls[req->slot]++;
	done_error[req->slot] = req->error;
}

static struct nvmefs_req *get_submitted(struct nvmefs_queue *q)
{
	struct nvmefs_req *req = nvmefs_req_get(q);

	ck_assert_ptr_nonnull(req);
	req->done = on_done;
	done_calls[req->slot] = 0;
	done_error[req->slot] = 1;
	ck_assert_int_eq(nvmefs_req_submit(req), 0);
	return req;
}

START_TEST(test_queue_init)
{
	struct nvmefs_queue q;
	struct nvmefs_req *got[31], *r;
	int i;

	ck_assert_int_eq(nvmefs_queue_init(&q, rec_ctrl,
					   &(struct nvmefs_queue_params){ .qid = 1, .size = 1 }),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "at least 2 entries"));

	rec_queue(&q, 2);
	ck_assert_uint_eq(q.nr_reqs, 1);
	ck_assert_uint_eq(q.cid_slot_bits, 0);
	nvmefs_queue_fini(&q);

	rec_queue(&q, 4096);
	ck_assert_uint_eq(q.nr_reqs, 4095);
	ck_assert_uint_eq(q.cid_slot_bits, 12);
	nvmefs_queue_fini(&q);

	/* A full SQ holds size - 1 entries: that many slots, then none. */
	rec_queue(&q, 32);
	ck_assert_uint_eq(q.nr_reqs, 31);
	ck_assert_uint_eq(q.cid_slot_bits, 5);
	for (i = 0; i < 31; i++) {
		got[i] = nvmefs_req_get(&q);
		ck_assert_ptr_nonnull(got[i]);
		ck_assert_uint_eq(got[i]->slot, i);
	}
	ck_assert_ptr_null(nvmefs_req_get(&q));
	nvmefs_req_put(got[17]);
	r = nvmefs_req_get(&q);
	ck_assert_ptr_eq(r, got[17]);
	ck_assert_ptr_null(nvmefs_req_get(&q));
	nvmefs_queue_fini(&q);
	ck_assert_ptr_null(q.reqs);
}
END_TEST

START_TEST(test_cid_layout)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a, *b;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	b = get_submitted(&q);
	/* slot | generation << 5, the generation counting submissions. */
	ck_assert_uint_eq(a->cid, 0x0020);
	ck_assert_uint_eq(b->cid, 0x0041);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(a->cmd->sqe.cid), 0x0020);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(b->cmd->sqe.cid), 0x0041);
	ck_assert_uint_eq(rec_nr_sent, 2);
	ck_assert_ptr_eq(rec_sent[0], a);
	ck_assert_uint_eq(q.nr_inflight, 2);
	ck_assert_uint_eq(q.sq_tail, 2);
	ck_assert_uint_eq(a->wait, NVMEFS_REQ_WAIT_SEND | NVMEFS_REQ_WAIT_RESP);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_response_before_send_completion)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a;
	struct nvmefs_cqe cqe;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	cqe = cqe_for(a->cid, 1, 0xabcd1234);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	/* The HCA may still read the capsule: the request is not over. */
	ck_assert(a->inflight);
	ck_assert_uint_eq(a->wait, NVMEFS_REQ_WAIT_SEND);
	ck_assert_uint_eq(done_calls[a->slot], 0);
	ck_assert_uint_eq(q.nr_inflight, 1);
	nvmefs_queue_send_done(&q, a);
	ck_assert(!a->inflight);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert_int_eq(done_error[a->slot], 0);
	ck_assert_uint_eq(nvmefs_cqe_dw0(&a->cqe), 0xabcd1234);
	ck_assert_uint_eq(q.nr_inflight, 0);
	ck_assert_int_eq(q.failed, 0);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_send_completion_before_response)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a;
	struct nvmefs_cqe cqe;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	nvmefs_queue_send_done(&q, a);
	ck_assert(a->inflight);
	ck_assert_uint_eq(a->wait, NVMEFS_REQ_WAIT_RESP);
	ck_assert_uint_eq(done_calls[a->slot], 0);
	cqe = cqe_for(a->cid, 1, 7);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	ck_assert(!a->inflight);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert_uint_eq(nvmefs_cqe_dw0(&a->cqe), 7);
	ck_assert_uint_eq(q.nr_inflight, 0);
	nvmefs_queue_fini(&q);
}
END_TEST

/* A response naming a slot with nothing in flight, or no slot at all. */
START_TEST(test_unknown_cid)
{
	static const uint16_t bad[] = {
		0x0025,		/* slot 5, never used */
		0x003f,		/* slot 31: beyond the 31 slots */
		0x0000,		/* slot 0, generation 0: never issued */
	};
	struct nvmefs_queue q;
	struct nvmefs_req *a, *b;
	struct nvmefs_cqe cqe;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	b = get_submitted(&q);
	cqe = cqe_for(bad[_i], 1, 0);
	nvmefs_set_error("none");
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), -EPROTO);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "not in flight"));
	ck_assert_int_eq(q.failed, -EPROTO);
	/* Nothing is handed back before the transport has stopped the queue. */
	ck_assert(a->inflight && b->inflight);
	ck_assert_uint_eq(done_calls[a->slot], 0);
	nvmefs_queue_stop(&q, -EPROTO);
	/* Then everything in flight ended with the queue's error. */
	ck_assert(!a->inflight && !b->inflight);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert_uint_eq(done_calls[b->slot], 1);
	ck_assert_int_eq(done_error[a->slot], -EPROTO);
	ck_assert_int_eq(done_error[b->slot], -EPROTO);
	ck_assert_uint_eq(q.nr_inflight, 0);
	/* A late send completion changes nothing. */
	nvmefs_queue_send_done(&q, a);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert_uint_eq(q.nr_inflight, 0);
	/* A failed queue takes no more commands. */
	nvmefs_req_put(a);
	a = nvmefs_req_get(&q);
	ck_assert_int_eq(nvmefs_req_submit(a), -EPROTO);
	ck_assert_uint_eq(rec_nr_sent, 2);
	ck_assert(!a->inflight);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_stale_cid)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a, *b;
	struct nvmefs_cqe cqe;
	uint16_t old_cid;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	old_cid = a->cid;
	cqe = cqe_for(old_cid, 1, 0);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	nvmefs_queue_send_done(&q, a);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	nvmefs_req_put(a);

	/* The same slot again, a new generation. */
	b = get_submitted(&q);
	ck_assert_ptr_eq(b, a);
	ck_assert_uint_ne(b->cid, old_cid);
	ck_assert_uint_eq(b->cid & 0x1f, old_cid & 0x1f);
	/* The old command's id again: not the request now in the slot. */
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), -EPROTO);
	ck_assert_int_eq(q.failed, -EPROTO);
	ck_assert(b->inflight);
	nvmefs_queue_stop(&q, -EPROTO);
	ck_assert(!b->inflight);
	ck_assert_int_eq(done_error[b->slot], -EPROTO);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_duplicate_response)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a;
	struct nvmefs_cqe cqe;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	cqe = cqe_for(a->cid, 1, 0);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	/* Waiting for its send completion, the request takes no second response. */
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), -EPROTO);
	ck_assert_int_eq(q.failed, -EPROTO);
	nvmefs_queue_stop(&q, -EPROTO);
	ck_assert(!a->inflight);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert_int_eq(done_error[a->slot], -EPROTO);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_timeout_fails_everything)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a, *b, *c;
	int64_t t0, took;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	b = get_submitted(&q);
	c = nvmefs_req_get(&q);
	t0 = now_ms();
	ck_assert_int_eq(nvmefs_req_exec(c, 50), -ETIMEDOUT);
	took = now_ms() - t0;
	ck_assert_int_ge(took, 49);
	ck_assert_int_lt(took, 1000);
	ck_assert_uint_ge(rec_nr_process, 1);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "within 50 ms"));
	ck_assert_int_eq(q.failed, -ETIMEDOUT);
	ck_assert(!a->inflight && !b->inflight && !c->inflight);
	ck_assert_int_eq(a->error, -ETIMEDOUT);
	ck_assert_int_eq(b->error, -ETIMEDOUT);
	ck_assert_int_eq(c->error, -ETIMEDOUT);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert_uint_eq(done_calls[b->slot], 1);
	ck_assert_uint_eq(q.nr_inflight, 0);
	/* A response that comes after all is refused, not matched. */
	{
		struct nvmefs_cqe cqe = cqe_for(a->cid, 1, 0);

		ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), -EPROTO);
		ck_assert_uint_eq(done_calls[a->slot], 1);
		ck_assert_int_eq(q.failed, -ETIMEDOUT);
	}
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_sq_head_flow_control)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a, *b, *c, *d;
	struct nvmefs_cqe cqe;

	/* 4 entries: at most 3 in the SQ. */
	rec_queue(&q, 4);
	a = get_submitted(&q);
	b = get_submitted(&q);
	/* A completes, but the controller says it has not moved its head. */
	cqe = cqe_for(a->cid, 0, 0);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	nvmefs_queue_send_done(&q, a);
	nvmefs_req_put(a);
	ck_assert_uint_eq(q.sq_head, 0);
	c = get_submitted(&q);
	ck_assert_uint_eq(q.sq_tail, 3);
	/* A slot is free, but the SQ is full by the controller's head. */
	d = nvmefs_req_get(&q);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(nvmefs_req_submit(d), -EAGAIN);
	ck_assert_uint_eq(rec_nr_sent, 3);
	ck_assert(!d->inflight);
	ck_assert_uint_eq(q.nr_inflight, 2);
	ck_assert_int_eq(q.failed, 0);
	/* A head out of range is ignored. */
	cqe = cqe_for(b->cid, 9, 0);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	ck_assert_uint_eq(q.sq_head, 0);
	ck_assert_int_eq(nvmefs_req_submit(d), -EAGAIN);
	/* The head moves: room again. */
	cqe = cqe_for(c->cid, 2, 0);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	ck_assert_uint_eq(q.sq_head, 2);
	ck_assert_int_eq(nvmefs_req_submit(d), 0);
	ck_assert_uint_eq(q.sq_tail, 0);
	ck_assert_uint_eq(rec_nr_sent, 4);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_sq_head_untracked)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a, *b, *c, *d;
	struct nvmefs_cqe cqe;

	rec_queue(&q, 4);
	a = get_submitted(&q);
	b = get_submitted(&q);
	/* SQ flow control disabled: SQHD 0xFFFF, no head to respect. */
	cqe = cqe_for(a->cid, 0xffff, 0);
	ck_assert_int_eq(nvmefs_queue_response(&q, &cqe), 0);
	nvmefs_queue_send_done(&q, a);
	nvmefs_req_put(a);
	ck_assert_uint_eq(q.sq_head, 0xffff);
	c = get_submitted(&q);
	d = nvmefs_req_get(&q);
	ck_assert_int_eq(nvmefs_req_submit(d), 0);
	ck_assert_uint_eq(rec_nr_sent, 4);
	(void)b;
	(void)c;
	nvmefs_queue_fini(&q);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Through a connected controller and the scripted transport                */
/* ------------------------------------------------------------------------ */

START_TEST(test_admin_response_before_send)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct fake_step *s;
	unsigned int calls;
	uint64_t v = 0;

	s = fake_expect_prop_get(NVME_REG_VS, 0x00010400);
	s->delivery = FAKE_RESP_THEN_SEND;
	calls = fake_stats.process_calls;
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), 0);
	ck_assert_uint_eq(v, 0x00010400);
	ck_assert_msg(s->inflight_between, "the request ended on its response alone");
	/* One process() for the response, one for the send completion. */
	ck_assert_uint_eq(fake_stats.process_calls - calls, 2);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

START_TEST(test_admin_bogus_cid)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct fake_step *s;
	unsigned int submits;
	uint64_t v = 0;

	s = fake_expect_prop_get(NVME_REG_VS, 0x00010400);
	s->delivery = FAKE_BOGUS_CID;
	s->bogus_cid = 0x1e;	/* slot 30, idle */
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), -EPROTO);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "command id 0x1e"));
	ck_assert_int_eq(ctrl->admin.failed, -EPROTO);
	ck_assert_uint_eq(ctrl->admin.nr_inflight, 0);
	/* The queue was stopped before the command was handed back. */
	ck_assert_uint_eq(fake_stats.stops, 1);
	/* Nothing more goes out to a failed controller. */
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), -ENOTCONN);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "not live"));
	ck_assert_uint_eq(fake_stats.submits, submits);
	/* No shutdown over a broken queue: straight to teardown. */
	fake_expect_destroy();
	nvmefs_ctrl_disconnect(ctrl);
	ck_assert_uint_eq(fake_stats.releases, 1);
}
END_TEST

START_TEST(test_admin_stale_cid)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct fake_step *first, *second;
	uint64_t v = 0;

	first = fake_expect_prop_get(NVME_REG_VS, 0x00010400);
	second = fake_expect_prop_get(NVME_REG_VS, 0x00010400);
	second->delivery = FAKE_STALE_CID;
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), 0);
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), -EPROTO);
	/* Same slot, the next generation: the old id is refused. */
	ck_assert_uint_eq(first->cid & 0x1f, second->cid & 0x1f);
	ck_assert_uint_ne(first->cid, second->cid);
	ck_assert_int_eq(ctrl->admin.failed, -EPROTO);
	fake_expect_destroy();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

START_TEST(test_admin_duplicate_response)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct fake_step *s;
	uint64_t v = 0;

	s = fake_expect_prop_get(NVME_REG_VS, 0x00010400);
	s->delivery = FAKE_DUP_RESP;
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), -EPROTO);
	ck_assert_int_eq(ctrl->admin.failed, -EPROTO);
	fake_expect_destroy();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

START_TEST(test_admin_timeout)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 50);
	struct fake_step *s;
	int64_t t0, took;
	uint64_t v = 0;

	s = fake_expect_prop_get(NVME_REG_VS, 0x00010400);
	s->delivery = FAKE_NO_RESP;
	t0 = now_ms();
	ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_VS, &v), -ETIMEDOUT);
	took = now_ms() - t0;
	ck_assert_int_ge(took, 49);
	ck_assert_int_lt(took, 1000);
	ck_assert_uint_ge(fake_stats.timeouts, 1);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "within 50 ms"));
	ck_assert_int_eq(ctrl->admin.failed, -ETIMEDOUT);
	ck_assert_uint_eq(ctrl->admin.nr_inflight, 0);
	ck_assert_uint_eq(v, 0);
	fake_expect_destroy();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* The command id the fake saw is the one the queue assigned, and a
 * controller that completes in order reuses slot 0 with new generations. */
START_TEST(test_admin_cids_advance)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct fake_step *s[3];
	uint64_t v;
	int i;

	for (i = 0; i < 3; i++)
		s[i] = fake_expect_prop_get(NVME_REG_CSTS, 1);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(nvmefs_ctrl_get_property(ctrl, NVME_REG_CSTS, &v), 0);
	for (i = 1; i < 3; i++)
		ck_assert_uint_eq(s[i]->cid, (uint16_t)(s[i - 1]->cid + 0x20));
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Per-I/O remote keys                                                      */
/* ------------------------------------------------------------------------ */

/*
 * A device that binds each request's data to a key of its own, as rdma.c
 * does with memory windows: the target's RDMA access succeeds only while
 * the key is bound, and a key dies when the target's Send with Invalidate
 * arrives or when a local invalidation completes.
 */
#define KEY_MAX 16
#define KEY_FIRST 0x8000100u
static uint32_t key_next;
static bool key_bound[KEY_MAX];
static struct nvmefs_req *key_inv_req;
static bool key_bound_at_done[REC_MAX];

static bool target_access(uint32_t rkey)
{
	return rkey >= KEY_FIRST && rkey < KEY_FIRST + KEY_MAX && key_bound[rkey - KEY_FIRST];
}

static void key_kill(uint32_t rkey)
{
	key_bound[rkey - KEY_FIRST] = false;
}

static int key_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	ck_assert_uint_lt(key_next, KEY_FIRST + KEY_MAX);
	req->rkey = key_next++;
	key_bound[req->rkey - KEY_FIRST] = true;
	req->wait |= NVMEFS_REQ_WAIT_KEY;
	return rec_submit(q, req);
}

static int key_invalidate(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	(void)q;
	ck_assert_ptr_null(key_inv_req);
	key_inv_req = req;
	return 0;
}

static const struct nvmefs_transport_ops key_ops = {
	.name = "keys",
	.submit = key_submit,
	.process = rec_process,
	.invalidate = key_invalidate,
};

static void on_key_done(struct nvmefs_req *req)
{
	key_bound_at_done[req->slot] = target_access(req->rkey);
	on_done(req);
}

/* The controller's key counts are @bound, @by_target and @locally. */
static void assert_keys(uint64_t bound, uint64_t by_target, uint64_t locally)
{
	struct nvmefs_rkey_stats st;

	nvmefs_ctrl_rkey_stats(rec_ctrl, &st);
	ck_assert_uint_eq(st.bound, bound);
	ck_assert_uint_eq(st.invalidated_by_target, by_target);
	ck_assert_uint_eq(st.invalidated_locally, locally);
}

/* A request whose key was bound and whose send completed, as rdma.c
 * reports them. */
static struct nvmefs_req *key_submitted(struct nvmefs_queue *q)
{
	struct nvmefs_req *req;

	rec_ctrl->ops = &key_ops;
	key_next = KEY_FIRST;
	memset(key_bound, 0, sizeof(key_bound));
	key_inv_req = NULL;
	rec_queue(q, 32);
	req = get_submitted(q);
	req->done = on_key_done;
	ck_assert(target_access(req->rkey));
	assert_keys(0, 0, 0);
	nvmefs_queue_key_bound(q);
	nvmefs_queue_send_done(q, req);
	return req;
}

START_TEST(test_key_invalidated_by_target)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a = key_submitted(&q);
	struct nvmefs_cqe cqe = cqe_for(a->cid, 1, 0);
	uint32_t rkey = a->rkey;

	/* The device kills the key as the Send with Invalidate lands. */
	key_kill(rkey);
	ck_assert_int_eq(nvmefs_queue_response_inv(&q, &cqe, &rkey), 0);
	ck_assert_ptr_null(key_inv_req);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert(!key_bound_at_done[a->slot]);
	/* The key of a completed request is refused: a remote access error. */
	ck_assert(!target_access(rkey));
	assert_keys(1, 1, 0);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_key_invalidated_locally)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a = key_submitted(&q);
	struct nvmefs_cqe cqe = cqe_for(a->cid, 1, 0);

	/* A target that ignores the invalidate flag leaves the key alive: the
	 * buffer is not handed back until the local invalidation is done. */
	ck_assert_int_eq(nvmefs_queue_response_inv(&q, &cqe, NULL), 0);
	ck_assert_ptr_eq(key_inv_req, a);
	ck_assert(a->inflight);
	ck_assert_uint_eq(done_calls[a->slot], 0);
	ck_assert(target_access(a->rkey));
	assert_keys(1, 0, 0);
	key_kill(a->rkey);
	nvmefs_queue_key_done(&q, a);
	assert_keys(1, 0, 1);
	ck_assert_uint_eq(done_calls[a->slot], 1);
	ck_assert(!key_bound_at_done[a->slot]);
	ck_assert(!target_access(a->rkey));
	ck_assert_int_eq(q.failed, 0);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_key_invalidated_wrong)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a = key_submitted(&q);
	struct nvmefs_cqe cqe = cqe_for(a->cid, 1, 0);
	char want[200];
	uint32_t other = a->rkey + 1;

	ck_assert_int_eq(nvmefs_queue_response_inv(&q, &cqe, &other), -EPROTO);
	ck_assert_int_eq(q.failed, -EPROTO);
	ck_assert_uint_eq(done_calls[a->slot], 0);
	snprintf(want, sizeof(want), "queue 3: the target invalidated remote key %#x with its "
		 "response to command id %#x, which does not own it: the target is confused",
		 other, a->cid);
	ck_assert_str_eq(nvmefs_errmsg(), want);
	/* Another request's key, or none: not one of ours killed. */
	assert_keys(1, 0, 0);
	nvmefs_queue_fini(&q);
}
END_TEST

START_TEST(test_key_invalidated_without_key)
{
	struct nvmefs_queue q;
	struct nvmefs_req *a;
	struct nvmefs_cqe cqe;
	uint32_t rkey = KEY_FIRST;

	rec_queue(&q, 32);
	a = get_submitted(&q);
	nvmefs_queue_send_done(&q, a);
	cqe = cqe_for(a->cid, 1, 0);
	ck_assert_int_eq(nvmefs_queue_response_inv(&q, &cqe, &rkey), -EPROTO);
	ck_assert_int_eq(q.failed, -EPROTO);
	ck_assert_uint_eq(done_calls[a->slot], 0);
	assert_keys(0, 0, 0);
	nvmefs_queue_fini(&q);
}
END_TEST

static Suite *queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc;

	tc = tcase_create("slots");
	tcase_add_checked_fixture(tc, rec_setup, rec_teardown);
	tcase_add_test(tc, test_queue_init);
	tcase_add_test(tc, test_cid_layout);
	tcase_add_test(tc, test_response_before_send_completion);
	tcase_add_test(tc, test_send_completion_before_response);
	tcase_add_loop_test(tc, test_unknown_cid, 0, 3);
	tcase_add_test(tc, test_stale_cid);
	tcase_add_test(tc, test_duplicate_response);
	tcase_add_test(tc, test_timeout_fails_everything);
	tcase_add_test(tc, test_sq_head_flow_control);
	tcase_add_test(tc, test_sq_head_untracked);
	tcase_add_test(tc, test_key_invalidated_by_target);
	tcase_add_test(tc, test_key_invalidated_locally);
	tcase_add_test(tc, test_key_invalidated_wrong);
	tcase_add_test(tc, test_key_invalidated_without_key);
	suite_add_tcase(s, tc);

	tc = tcase_create("admin");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_admin_response_before_send);
	tcase_add_test(tc, test_admin_bogus_cid);
	tcase_add_test(tc, test_admin_stale_cid);
	tcase_add_test(tc, test_admin_duplicate_response);
	tcase_add_test(tc, test_admin_timeout);
	tcase_add_test(tc, test_admin_cids_advance);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return run_suite(queue_suite(), CK_ENV);
}
