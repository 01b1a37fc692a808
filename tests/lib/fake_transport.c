/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scripted transport of fake_transport.h: the transport's side (the
 * script and its matching are fake_script.c's).
 *
 * Like rdma.c it owns each queue's capsules and data slots and reports a
 * command's send completion and response separately; unlike it, the
 * controller is the script, and process() only hands over what submit()
 * queued, in the order the step asked for.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fake_transport.h"
#include "fake_priv.h"
#include "rdma/rdma_sgl.h"
#include "lifecycle/ctrl.h"
#include "types/ctrl_types.h"
#include "base/error.h"
#include "transport/mr.h"
#include "transport/queue.h"
#include "types/transport_ops.h"

#define FAKE_MAX_HELD 4096

/* Live queues by qid, for fake_disconnect() and fake_queue_stopped(). */
#define FAKE_MAX_QUEUES 64
static struct fake_queue *queues[FAKE_MAX_QUEUES];
static bool stopped_qid[FAKE_MAX_QUEUES];

struct fake_held {
	struct fake_queue *fq;
	struct fake_event ev;
};

/* The script's steps (fake_script.c), the held responses and the counters,
 * shared with the keep-alive thread: fake_lock guards them while the
 * library runs. */
pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_held held[FAKE_MAX_HELD];
static unsigned int nr_held;
static unsigned int mr_serial;
struct fake_stats fake_stats;
struct nvmefs_ctrl *fake_last_ctrl;
int fake_mr_fail;
bool fake_defer_posts;
int fake_arm_error;
bool fake_arm_level;

static void stat_inc(unsigned int *counter)
{
	pthread_mutex_lock(&fake_lock);
	(*counter)++;
	pthread_mutex_unlock(&fake_lock);
}

void fake_reset(void)
{
	fake_last_ctrl = NULL;
	fake_script_reset();
	nr_held = 0;
	mr_serial = 0;
	fake_mr_fail = 0;
	fake_defer_posts = false;
	fake_arm_error = 0;
	fake_arm_level = false;
	fake_exec = NULL;
	memset(queues, 0, sizeof(queues));
	memset(stopped_qid, 0, sizeof(stopped_qid));
	memset(&fake_stats, 0, sizeof(fake_stats));
}

void fake_setup(void)
{
	fake_reset();
}

void fake_teardown(void)
{
	fake_assert_done();
	fake_reset();
}

/* ------------------------------------------------------------------------ */
/* The transport                                                            */
/* ------------------------------------------------------------------------ */

static int fake_queue_create(struct nvmefs_queue *q, const struct nvmefs_queue_params *params)
{
	struct fake_step *s = fake_exec ? NULL : fake_next_step(FAKE_CREATE, q, NULL);
	struct fake_queue *fq;
	uint16_t i;

	fake_assert_that(params->qid == q->qid);
	fake_assert_that(params->size == q->size);
	fake_assert_that(q->reqs);
	fake_assert_that(q->nr_reqs == q->size - 1);
	if (s) {
		s->seen_params = *params;
		if (s->on_match)
			s->on_match(s, s->on_match_arg);
		if (s->create_ret < 0)
			return nvmefs_error(s->create_ret, "%s", s->create_msg);
	}
	fq = calloc(1, sizeof(*fq));
	fake_assert_that(fq);
	fq->capsules = calloc(q->nr_reqs, sizeof(*fq->capsules));
	fq->data = calloc(q->nr_reqs, params->data_slot_size);
	fq->ev_cap = 3u * q->nr_reqs + 8;
	fq->ev = calloc(fq->ev_cap, sizeof(*fq->ev));
	fake_assert(fq->capsules && fq->data && fq->ev, "out of memory");
	fq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fake_assert_that(fq->efd >= 0);
	fq->cm_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fake_assert_that(fq->cm_efd >= 0);
	fq->unposted = calloc(fq->ev_cap, sizeof(*fq->unposted));
	fake_assert_that(fq->unposted);
	fq->qid = q->qid;
	fake_last_ctrl = q->ctrl;
	if (q->qid < FAKE_MAX_QUEUES) {
		pthread_mutex_lock(&fake_lock);
		queues[q->qid] = fq;
		pthread_mutex_unlock(&fake_lock);
		stopped_qid[q->qid] = false;
	}
	fq->slot_size = params->data_slot_size;
	for (i = 0; i < q->nr_reqs; i++) {
		q->reqs[i].cmd = &fq->capsules[i];
		q->reqs[i].data_slot = fq->data + (size_t)i * params->data_slot_size;
		q->reqs[i].data_slot_size = params->data_slot_size;
	}
	q->tp = fq;
	stat_inc(&fake_stats.creates);
	return 0;
}

/* Responses held back for @fq never come: its queue is gone or stopped. */
static void drop_held(struct fake_queue *fq)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < nr_held; i++)
		if (held[i].fq != fq)
			held[n++] = held[i];
	nr_held = n;
	pthread_mutex_unlock(&fake_lock);
}

static void fake_queue_destroy(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	if (!fake_exec)
		fake_next_step(FAKE_DESTROY, q, NULL);
	fake_assert_that(fq);
	/* Responses still held for it never come. */
	drop_held(fq);
	/* A test's thread may be writing a CM event into it (cm_event()). */
	pthread_mutex_lock(&fake_lock);
	close(fq->efd);
	close(fq->cm_efd);
	if (fq->qid < FAKE_MAX_QUEUES && queues[fq->qid] == fq)
		queues[fq->qid] = NULL;
	pthread_mutex_unlock(&fake_lock);
	free(fq->unposted);
	free(fq->capsules);
	free(fq->data);
	free(fq->ev);
	free(fq);
	q->tp = NULL;
	stat_inc(&fake_stats.destroys);
}


/* A command's events: the device's at once, or once the queue posts. */
static void push(struct fake_queue *fq, const struct fake_event *ev)
{
	if (!fake_defer_posts || !ev->req) {
		fake_push_now(fq, ev);
		return;
	}
	fake_assert(fq->nr_unposted < fq->ev_cap, "more unposted events than a queue holds");
	fq->unposted[fq->nr_unposted++] = *ev;
}

/* Hands what was submitted to the device, as rdma.c's kick(): a failed
 * queue posts nothing. */
static void post_all(struct nvmefs_queue *q, struct fake_queue *fq)
{
	size_t i;

	if (q->failed || fq->stopped) {
		fq->nr_unposted = 0;
		return;
	}
	for (i = 0; i < fq->nr_unposted; i++) {
		struct fake_event *ev = &fq->unposted[i];

		if (!ev->resp)
			ev->step->posted++;
		if (ev->resp && ev->step->hold)
			fake_hold(fq, ev);
		else
			fake_push_now(fq, ev);
	}
	fq->nr_unposted = 0;
}

void fake_push_now(struct fake_queue *fq, const struct fake_event *ev)
{
	if (fq->ev_head == fq->nr_ev)
		fq->ev_head = fq->nr_ev = 0;
	if (fq->nr_ev == fq->ev_cap && fq->ev_head) {
		memmove(fq->ev, fq->ev + fq->ev_head, (fq->nr_ev - fq->ev_head) * sizeof(*fq->ev));
		fq->nr_ev -= fq->ev_head;
		fq->ev_head = 0;
	}
	fake_assert(fq->nr_ev < fq->ev_cap, "more completions queued than a queue can hold");
	fq->ev[fq->nr_ev++] = *ev;
	if (fq->armed) {
		uint64_t one = 1;

		fq->armed = false;
		fake_assert_that(write(fq->efd, &one, sizeof(one)) == (int)sizeof(one));
	}
}

void fake_hold(struct fake_queue *fq, const struct fake_event *ev)
{
	bool full;

	pthread_mutex_lock(&fake_lock);
	full = nr_held == FAKE_MAX_HELD;
	if (!full) {
		held[nr_held].fq = fq;
		held[nr_held].ev = *ev;
		nr_held++;
	}
	pthread_mutex_unlock(&fake_lock);
	fake_assert(!full, "more than %d responses held", FAKE_MAX_HELD);
}

unsigned int fake_release(unsigned int n)
{
	static struct fake_held go[FAKE_MAX_HELD];
	unsigned int i;

	pthread_mutex_lock(&fake_lock);
	if (n > nr_held)
		n = nr_held;
	memcpy(go, held, n * sizeof(*go));
	memmove(held, held + n, (nr_held - n) * sizeof(*held));
	nr_held -= n;
	pthread_mutex_unlock(&fake_lock);
	for (i = 0; i < n; i++)
		push(go[i].fq, &go[i].ev);
	return n;
}

void fake_release_at(unsigned int i)
{
	struct fake_held go;

	pthread_mutex_lock(&fake_lock);
	fake_assert(i < nr_held, "releasing response %u of the %u held", i, nr_held);
	go = held[i];
	memmove(held + i, held + i + 1, (nr_held - i - 1) * sizeof(*held));
	nr_held--;
	pthread_mutex_unlock(&fake_lock);
	push(go.fq, &go.ev);
}

unsigned int fake_held(void)
{
	unsigned int n;

	pthread_mutex_lock(&fake_lock);
	n = nr_held;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

static int fake_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct fake_queue *fq = q->tp;
	struct fake_event ev = { .req = req };
	struct nvmefs_rdma_sge sge = { 0 };
	struct fake_step *s;
	uint16_t cid;
	int nr_sge;

	stat_inc(&fake_stats.submits);
	fake_assert_that(fq);
	/* What rdma.c relies on: the capsule is the slot's own, and the data
	 * is in the slot or in memory registered through mr_reg. */
	fake_assert(req->cmd == &fq->capsules[req->slot], "request %u's capsule is not its slot's",
		      req->slot);
	fake_assert_that(nvmefs_le16_to_cpu(req->cmd->sqe.cid) == req->cid);
	fake_assert_that(req->inflight);
	if (req->len && req->mr) {
		uint8_t *p = req->data;

		fake_assert(req->mr->tp == (void *)&fake_ops,
			      "request %u's memory region was not registered by this transport",
			      req->slot);
		fake_assert(p >= req->mr->addr && p + req->len <= req->mr->addr + req->mr->len,
			      "request %u's %u data bytes are outside its memory region", req->slot,
			      req->len);
	} else if (req->len) {
		uint8_t *p = req->data, *slot = fq->data + (size_t)req->slot * fq->slot_size;

		fake_assert(p >= slot && p + req->len <= slot + fq->slot_size,
			      "request %u's %u data bytes are outside its data slot", req->slot,
			      req->len);
	}
	if (req->len)
		fake_assert(req->dir != NVMEFS_DIR_NONE, "request %u moves %u bytes nowhere",
			      req->slot, req->len);
	/* As rdma_submit(): the admin queue takes no in-capsule data. */
	nr_sge = nvmefs_rdma_map_data(req, q->qid ? q->ctrl->inline_size : 0, FAKE_SLOT_LKEY,
				      FAKE_SLOT_RKEY, NULL, &sge);
	if (nr_sge < 0)
		return nr_sge;
	if (fake_exec)
		return fake_exec_submit(q, fq, req);

	s = fake_next_step(FAKE_CMD, q, req);
	s->cid = req->cid;
	s->seen_qid = q->qid;
	s->seen_data = req->data;
	s->seen_mr = req->mr;
	s->seen_flags = req->cmd->sqe.flags;
	s->seen_sgl = req->cmd->sqe.dptr.sgl;
	s->seen_nr_sge = nr_sge;
	s->seen_sge_addr = nr_sge ? sge.addr : 0;
	s->seen_sge_len = nr_sge ? sge.length : 0;
	s->seen_sge_lkey = nr_sge ? sge.lkey : 0;
	if (req->len && req->dir == NVMEFS_DIR_TO_CTRL) {
		free(s->captured);
		s->captured = malloc(req->len);
		fake_assert_that(s->captured);
		memcpy(s->captured, req->data, req->len);
		s->captured_len = req->len;
	}
	if (s->on_match)
		s->on_match(s, s->on_match_arg);
	if (req->len && req->dir == NVMEFS_DIR_FROM_CTRL) {
		size_t n = s->data_len < req->len ? s->data_len : req->len;

		/* The target writes all of it; what the script leaves out is zeros. */
		memset(req->data, 0, req->len);
		if (n)
			memcpy(req->data, s->data, n);
	}

	fq->sq_model = (uint16_t)((fq->sq_model + 1) % q->size);
	cid = req->cid;
	if (s->delivery == FAKE_BOGUS_CID)
		cid = s->bogus_cid;
	if (s->delivery == FAKE_STALE_CID) {
		fake_assert(fq->have_last_cid, "step added at line %d: no earlier command to "
			      "take a stale command id from", s->line);
		cid = fq->last_cid;
	}
	ev.step = s;
	ev.cqe.result.dw.dw0 = nvmefs_cpu_to_le32(s->dw0);
	ev.cqe.result.dw.dw1 = nvmefs_cpu_to_le32(s->dw1);
	ev.cqe.sq_head = nvmefs_cpu_to_le16(s->sq_head >= 0 ? (uint16_t)s->sq_head : fq->sq_model);
	ev.cqe.sq_id = nvmefs_cpu_to_le16(q->qid);
	ev.cqe.cid = nvmefs_cpu_to_le16(cid);
	ev.cqe.status = nvmefs_cpu_to_le16((uint16_t)(s->status << 1));

	fake_assert(!s->hold || s->delivery == FAKE_SEND_THEN_RESP,
		      "step added at line %d: only FAKE_SEND_THEN_RESP responses can be held",
		      s->line);
	switch (s->delivery) {
	case FAKE_RESP_THEN_SEND:
		ev.resp = true;
		ev.pause_after = true;
		push(fq, &ev);
		ev.resp = false;
		ev.pause_after = false;
		push(fq, &ev);
		break;
	case FAKE_NO_RESP:
		push(fq, &ev);
		break;
	case FAKE_DUP_RESP:
		ev.resp = true;
		push(fq, &ev);
		push(fq, &ev);
		ev.resp = false;
		push(fq, &ev);
		break;
	case FAKE_SEND_THEN_RESP:
	case FAKE_BOGUS_CID:
	case FAKE_STALE_CID:
		push(fq, &ev);
		ev.resp = true;
		if (s->hold && !fake_defer_posts)
			fake_hold(fq, &ev);
		else
			push(fq, &ev);
		break;
	}
	if (!fake_defer_posts)
		s->posted++;
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int fake_process(struct nvmefs_queue *q, int timeout_ms)
{
	struct fake_queue *fq = q->tp;
	int n = 0, ret, cm_error;

	stat_inc(&fake_stats.process_calls);
	fake_assert_that(fq);
	fake_assert_that(timeout_ms >= 0);
	post_all(q, fq);
	if (atomic_exchange(&fq->broken, false))
		return nvmefs_error(-ECONNRESET, "queue %u: its connection broke (scripted)", q->qid);
	/* As rdma.c: connection events are read only when it waits. */
	cm_error = atomic_load(&fq->cm_error);
	if (cm_error && timeout_ms > 0)
		return nvmefs_error(cm_error, "queue %u: the target closed it (scripted)", q->qid);
	if (fq->ev_head == fq->nr_ev) {
		/* Nothing will come: a controller that does not answer. */
		if (timeout_ms > 0)
			sleep_ms(timeout_ms);
		stat_inc(&fake_stats.timeouts);
		return 0;
	}
	while (fq->ev_head < fq->nr_ev) {
		struct fake_event ev = fq->ev[fq->ev_head++];

		n++;
		if (!ev.resp) {
			nvmefs_queue_send_done(q, ev.req);
			continue;
		}
		if (!ev.step)
			fake_exec_reply(q, fq, &ev);
		ret = nvmefs_queue_response(q, &ev.cqe);
		if (ret < 0)
			return ret;
		fq->last_cid = nvmefs_cqe_cid(&ev.cqe);
		fq->have_last_cid = true;
		if (ev.pause_after) {
			ev.step->inflight_between = ev.req->inflight &&
						    ev.req->wait == NVMEFS_REQ_WAIT_SEND;
			break;
		}
	}
	return n;
}

static void fake_ctrl_release(struct nvmefs_ctrl *ctrl)
{
	bool bare;

	(void)ctrl;
	pthread_mutex_lock(&fake_lock);
	fake_stats.releases++;
	/* A device goes only once nothing of ours is left on it. */
	bare = fake_stats.mr_regs == fake_stats.mr_deregs;
	for (unsigned int i = 0; i < FAKE_MAX_QUEUES; i++)
		bare = bare && !queues[i];
	if (bare)
		fake_stats.bare_releases++;
	pthread_mutex_unlock(&fake_lock);
}

/* Keys that tell registrations apart: lkey 0x1000 + n, rkey 0x2000 + n. */
static int fake_mr_reg(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	fake_assert_that(mr->addr);
	fake_assert_that(mr->len > 0);
	if (fake_mr_fail < 0)
		return nvmefs_error(fake_mr_fail, "registering %zu bytes failed (scripted)", mr->len);
	pthread_mutex_lock(&fake_lock);
	mr_serial++;
	mr->lkey = 0x1000 + mr_serial;
	mr->rkey = 0x2000 + mr_serial;
	fake_stats.mr_regs++;
	pthread_mutex_unlock(&fake_lock);
	nvmefs_ctrl_count_pin(ctrl, mr->addr, mr->len, true);
	mr->tp = (void *)&fake_ops;
	return 0;
}

static void fake_mr_dereg(struct nvmefs_mr *mr)
{
	fake_assert(mr->tp == (void *)&fake_ops, "deregistering memory this transport did not "
		      "register (or twice)");
	nvmefs_ctrl_count_pin(mr->ctrl, mr->addr, mr->len, false);
	mr->tp = NULL;
	stat_inc(&fake_stats.mr_deregs);
}

static int fake_queue_fd(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	fake_assert_that(fq);
	return fq->efd;
}

static int fake_queue_arm(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;
	uint64_t count;

	fake_assert_that(fq);
	if (fake_arm_error) {
		int err = fake_arm_error;

		fake_arm_error = 0;
		return nvmefs_error(err, "queue %u: arming failed (scripted)", q->qid);
	}
	post_all(q, fq);
	/* As ibv_req_notify_cq(): consume the old event, then arm. */
	if (read(fq->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		fake_abort("reading the queue's eventfd: %s", strerror(errno));
	if (fake_arm_level) {
		count = 1;
		if (fq->ev_head < fq->nr_ev)
			fake_assert_that(write(fq->efd, &count, sizeof(count)) == (int)sizeof(count));
		fq->armed = true;
		return 0;
	}
	if (fq->ev_head < fq->nr_ev)
		return 1;
	fq->armed = true;
	return 0;
}

/* As rdma_cm.c's stop: what was never posted never goes; the responses the
 * target had not sent never come; every posted send completes, flushed. */
static void fake_queue_stop(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	fake_assert_that(fq);
	stat_inc(&fake_stats.stops);
	fq->nr_unposted = 0;
	fq->stopped = true;
	if (fq->qid < FAKE_MAX_QUEUES)
		stopped_qid[fq->qid] = true;
	drop_held(fq);
	while (fq->ev_head < fq->nr_ev) {
		struct fake_event ev = fq->ev[fq->ev_head++];

		if (!ev.resp)
			nvmefs_queue_send_done(q, ev.req);
	}
}

static int fake_queue_check(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;
	uint64_t count;
	int cm_error;

	fake_assert_that(fq);
	if (read(fq->cm_efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		fake_abort("reading the queue's event eventfd: %s", strerror(errno));
	cm_error = atomic_load(&fq->cm_error);
	if (cm_error)
		return nvmefs_error(cm_error, "queue %u: the target closed it (scripted)", q->qid);
	return 0;
}

static int fake_queue_event_fd(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	fake_assert_that(fq);
	return fq->cm_efd;
}

static void cm_event(uint16_t qid, int err)
{
	uint64_t one = 1;

	/* From the test's thread, while the controller's may tear the queue
	 * down: the event it raises can be what makes it do so. */
	pthread_mutex_lock(&fake_lock);
	fake_assert(qid < FAKE_MAX_QUEUES && queues[qid], "no live queue %u for a CM event", qid);
	atomic_store(&queues[qid]->cm_error, err);
	fake_assert_that(write(queues[qid]->cm_efd, &one, sizeof(one)) == (int)sizeof(one));
	pthread_mutex_unlock(&fake_lock);
}

void fake_disconnect(uint16_t qid)
{
	cm_event(qid, -ECONNRESET);
}

void fake_device_removed(uint16_t qid)
{
	cm_event(qid, -ENODEV);
}

void fake_break(uint16_t qid)
{
	pthread_mutex_lock(&fake_lock);
	fake_assert(qid < FAKE_MAX_QUEUES && queues[qid], "no live queue %u to break", qid);
	atomic_store(&queues[qid]->broken, true);
	pthread_mutex_unlock(&fake_lock);
}

bool fake_queue_stopped(uint16_t qid)
{
	return qid < FAKE_MAX_QUEUES && stopped_qid[qid];
}

/* What every scripted transport does, whatever it says of itself. */
#define FAKE_CALLS \
	.queue_create = fake_queue_create, \
	.queue_destroy = fake_queue_destroy, \
	.submit = fake_submit, \
	.queue_stop = fake_queue_stop, \
	.queue_check = fake_queue_check, \
	.process = fake_process, \
	.ctrl_release = fake_ctrl_release, \
	.mr_reg = fake_mr_reg, \
	.mr_dereg = fake_mr_dereg, \
	.queue_fd = fake_queue_fd, \
	.queue_event_fd = fake_queue_event_fd, \
	.queue_arm = fake_queue_arm

const struct nvmefs_transport_ops fake_ops = { .name = "fake", FAKE_CALLS };

const struct nvmefs_transport_ops fake_keyed_ops = {
	.name = "keyed",
	.trsvcid = "4420",
	.discovery_trsvcid = "4420",
	.allowed_opts = NVMEFS_OPT_RKEY_PER_IO | NVMEFS_OPT_TOS,
	.pins_memory = true,
	FAKE_CALLS
};

const struct nvmefs_transport_ops fake_stream_ops = {
	.name = "stream",
	.trsvcid = FAKE_STREAM_TRSVCID,
	.discovery_trsvcid = FAKE_STREAM_DISCOVERY_TRSVCID,
	.allowed_opts = NVMEFS_OPT_HDR_DIGEST | NVMEFS_OPT_DATA_DIGEST | NVMEFS_OPT_HOST_IFACE |
			NVMEFS_OPT_TOS | NVMEFS_OPT_TLS,
	FAKE_CALLS
};
