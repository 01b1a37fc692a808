/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A worker's thread: its ublk queue of every device and its NVMe queue,
 * served from one io_uring.  The ring holds a FETCH_REQ (then a
 * COMMIT_AND_FETCH_REQ) for every tag and a poll of the epoll that holds
 * the worker's descriptors, so one wait covers both; commits gather in the
 * ring and go in one submission.  A write's data is read from /dev/ublkcN
 * into the worker's registered buffer, and a read's written back from
 * where the target put it: one copy each way (UBLK_F_USER_COPY).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>

#include "iod.h"
#include "ublk_priv.h"

/* Before a request's payload in its buffer: whose it is, for a request the
 * engine parked and gives back (or refuses) later. */
struct req_head {
	struct ublk_tag *t;
};
#define REQ_HEAD_LEN 64

static _Thread_local struct io_uring ring;

static struct io_uring_sqe *sqe_get(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	/* Full of commits: they go now, which frees the room. */
	if (!sqe) {
		io_uring_submit(&ring);
		sqe = io_uring_get_sqe(&ring);
	}
	return sqe;
}

/* Where user copy reads and writes tag @t's data on /dev/ublkcN. */
static off_t data_off(const struct ublk_tag *t)
{
	return (off_t)(UBLKSRV_IO_BUF_OFFSET + ((uint64_t)t->q->idx << UBLK_QID_OFF) +
		       ((uint64_t)t->tag << UBLK_TAG_OFF));
}

static void io_cmd(struct ublk_tag *t, unsigned int op, int32_t result)
{
	struct io_uring_sqe *sqe = sqe_get();
	struct ublksrv_io_cmd *c = (struct ublksrv_io_cmd *)sqe->cmd;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, t->d->cdev, NULL, 0, 0);
	sqe->cmd_op = op;
	*c = (struct ublksrv_io_cmd){ .q_id = (uint16_t)t->q->idx, .tag = t->tag,
				      .result = result };
	io_uring_sqe_set_data(sqe, t);
}

/* Request @t's answer, @result bytes or -errno; its next request comes
 * back on the same entry.  Nothing once its queue is going. */
static void commit(struct ublk_tag *t, int32_t result)
{
	if (!t->aborted)
		io_cmd(t, UBLK_U_IO_COMMIT_AND_FETCH_REQ, result);
}

static void complete_read(void *cookie, const void *data, size_t len)
{
	struct ublk_tag *t = cookie;
	ssize_t n = pwrite(t->d->cdev, data, len, data_off(t));

	if (n != (ssize_t)len)
		exp_log("ublkb%d: copying a read's data to the block layer failed: %s", t->d->id,
			n < 0 ? strerror(errno) : "short copy");
	commit(t, n == (ssize_t)len ? (int32_t)len : -EIO);
}

static void complete(void *cookie, enum exp_op op, int err, size_t len)
{
	(void)op;
	commit(cookie, err ? -err : (int32_t)len);
}

static void refuse(void *arg, const void *buf, int err)
{
	const struct req_head *h = buf;

	(void)arg;
	commit(h->t, -err);
}

const struct exp_ops ublk_exp_ops = {
	.refuse = refuse,
	.complete_read = complete_read,
	.complete = complete,
};

static const struct ublksrv_io_desc *iod_of(const struct ublk_tag *t)
{
	return &t->q->iod[t->d - t->q->s->dev][t->tag];
}

/* Starts the request admitted in @r's buffer. */
static void handle(struct exp_req *r)
{
	uint8_t *buf = exp_req_buf(r);
	struct ublk_tag *t = ((struct req_head *)buf)->t;
	struct ublk_io io;
	int ret;

	ret = ublk_iod_request(iod_of(t), atomic_load(&t->d->ns.size), t->q->s->opts->max_io, &io);
	if (ret < 0) {
		commit(t, ret);
		return;
	}
	exp_submit(r, t, &t->d->ns, io.op, io.off, (size_t)io.size, buf + REQ_HEAD_LEN);
}

/* A request came for @t: into a buffer (a write's data with it), admitted
 * and started, or parked by the engine for later. */
static void receive(struct ublk_queue *q, struct ublk_tag *t)
{
	const struct ublksrv_io_desc *iod = iod_of(t);
	struct exp_req *r = exp_worker_req(q->w);
	size_t len = REQ_HEAD_LEN, size = (size_t)iod->nr_sectors << 9;
	uint8_t *buf;

	/* Each worker has a buffer for every tag it serves (serve.c): none
	 * free is a tag answered twice. */
	if (!r) {
		exp_log("ublkb%d: queue %u has no buffer for tag %u", t->d->id, q->idx, t->tag);
		commit(t, -EIO);
		return;
	}
	buf = exp_req_buf(r);
	((struct req_head *)buf)->t = t;
	if (ublksrv_get_op(iod) == UBLK_IO_OP_WRITE) {
		ssize_t n = -1;

		if (size <= q->s->opts->max_io)
			n = pread(t->d->cdev, buf + REQ_HEAD_LEN, size, data_off(t));
		if (n != (ssize_t)size) {
			exp_log("ublkb%d: copying a write's data from the block layer failed: %s",
				t->d->id, n < 0 && size <= q->s->opts->max_io ? strerror(errno)
									  : "bad size");
			exp_req_admit(r, len, 0);
			exp_req_handled(r);
			commit(t, -EIO);
			return;
		}
		len += size;
	}
	if (exp_req_admit(r, len, t->d->ns.nsid)) {
		handle(r);
		exp_req_handled(r);
	}
}

/* Every tag of device @d on this queue is aborted: its mapping goes, and
 * the last queue to let go closes the device, which lets DEL_DEV end. */
static void dev_done(struct ublk_queue *q, struct ublk_dev *d)
{
	unsigned int k = (unsigned int)(d - q->s->dev);

	munmap(q->iod[k], q->s->iod_len);
	q->iod[k] = NULL;
	q->devs_left--;
	if (atomic_fetch_sub(&d->queues_live, 1) == 1) {
		close(d->cdev);
		d->cdev = -1;
	}
}

static void arm_poll(struct ublk_queue *q)
{
	struct io_uring_sqe *sqe = sqe_get();

	io_uring_prep_poll_add(sqe, q->epfd, POLLIN);
	io_uring_sqe_set_data(sqe, q);
	q->poll_armed = true;
}

/* The worker's descriptors said something: the engine takes their events.
 * No work of itself: the queue's completions are taken by
 * exp_worker_run(), and its channel's event by exp_worker_arm(), until
 * which the descriptor stays readable and a poll armed again fires at
 * once; counted as work, that would spin.  So the poll is armed again
 * only when the thread goes to sleep: while the worker polls for a request
 * in flight, it would fire every round, an io_uring_enter and an
 * epoll_wait each time (12 a request at QD1 on 7.3), for events that
 * exp_worker_run() looks for anyway. */
static void on_poll(struct ublk_queue *q)
{
	struct epoll_event ev[8];
	int n;

	q->poll_armed = false;
	do {
		n = epoll_wait(q->epfd, ev, 8, 0);
		for (int i = 0; i < n; i++)
			exp_worker_event(q->w, &ev[i]);
	} while (n == 8);
}

/* A command of tag @t ended: a request came, or the queue is going. */
static void on_cqe(struct ublk_queue *q, struct ublk_tag *t, const struct io_uring_cqe *cqe)
{
	if (cqe->res == UBLK_IO_RES_OK) {
		receive(q, t);
		return;
	}
	if (cqe->res != UBLK_IO_RES_ABORT)
		exp_log("ublkb%d: queue %u's command for tag %u failed: %s", t->d->id, q->idx,
			t->tag, strerror(-cqe->res));
	t->aborted = true;
	if (++q->nr_aborted[t->d - q->s->dev] == q->s->depth)
		dev_done(q, t->d);
}

/* What the ring has: whether a request came (or a queue went). */
static bool reap(struct ublk_queue *q)
{
	struct io_uring_cqe *cqe;
	bool any = false;

	while (io_uring_peek_cqe(&ring, &cqe) == 0) {
		void *data = io_uring_cqe_get_data(cqe);

		if (data == q) {
			on_poll(q);
		} else {
			on_cqe(q, data, cqe);
			any = true;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	return any;
}

static bool serve_resumed(struct ublk_queue *q)
{
	struct exp_req *r;
	bool any = false;
	size_t n;

	while ((r = exp_worker_resumed(q->w, &n))) {
		handle(r);
		exp_req_handled(r);
		any = true;
	}
	return any;
}

static void serve(struct ublk_queue *q)
{
	while (q->devs_left && !atomic_load(&q->s->start_failed)) {
		bool busy = reap(q);
		struct __kernel_timespec ts;
		struct io_uring_cqe *cqe;
		int wait;

		busy |= exp_worker_run(q->w);
		busy |= serve_resumed(q);
		if (busy || !exp_worker_arm(q->w, &wait)) {
			io_uring_submit(&ring);
			continue;
		}
		if (!q->poll_armed)
			arm_poll(q);
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = (long long)(wait % 1000) * 1000000;
		io_uring_submit_and_wait_timeout(&ring, &cqe, 1, wait >= 0 ? &ts : NULL, NULL);
	}
}

static void *queue_main(void *arg)
{
	struct ublk_queue *q = arg;
	struct ublk_server *s = q->s;
	unsigned int entries = s->nr_dev * s->depth + 1;
	int ret;

	/* Every tag's command and the poll, each with one entry at most. */
	ret = io_uring_queue_init(entries, &ring, 0);
	if (ret < 0) {
		q->error = exp_error(ret, "setting up queue %u's io_uring failed: %s", q->idx,
				     strerror(-ret));
		atomic_store(&q->fetching, true);
		exp_worker_abandon(q->w);
		return NULL;
	}
	arm_poll(q);
	/* FETCH_REQs come from the thread that commits them. */
	for (unsigned int k = 0; k < s->nr_dev; k++)
		for (unsigned int i = 0; i < s->depth; i++)
			io_cmd(&q->tags[k][i], UBLK_U_IO_FETCH_REQ, 0);
	ret = io_uring_submit(&ring);
	if (ret < 0)
		q->error = exp_error(ret, "queue %u's first commands failed: %s", q->idx,
				     strerror(-ret));
	atomic_store(&q->fetching, true);
	serve(q);
	while (!exp_worker_drain(q->w))
		serve_resumed(q);
	io_uring_queue_exit(&ring);
	eventfd_write(s->ended_fd, 1);
	return NULL;
}

int ublk_queue_start(struct ublk_server *s, unsigned int i)
{
	struct ublk_queue *q = &s->q[i];
	long page = sysconf(_SC_PAGESIZE);
	size_t max_len = ((size_t)UBLK_MAX_QUEUE_DEPTH * sizeof(struct ublksrv_io_desc) +
			  (size_t)page - 1) / (size_t)page * (size_t)page;
	int ret;

	q->s = s;
	q->idx = i;
	q->w = exp_worker(s->e, i);
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	q->iod = calloc(s->nr_dev, sizeof(*q->iod));
	q->tags = calloc(s->nr_dev, sizeof(*q->tags));
	q->nr_aborted = calloc(s->nr_dev, sizeof(*q->nr_aborted));
	if (q->epfd < 0 || !q->iod || !q->tags || !q->nr_aborted)
		return exp_error(-ENOMEM, "setting up queue %u failed: %s", i, strerror(errno));
	ret = exp_worker_watch(q->w, q->epfd);
	if (ret < 0)
		return ret;
	for (unsigned int k = 0; k < s->nr_dev; k++) {
		struct ublk_dev *d = &s->dev[k];
		void *p = mmap(NULL, s->iod_len, PROT_READ, MAP_SHARED | MAP_POPULATE, d->cdev,
			       (off_t)(UBLKSRV_CMD_BUF_OFFSET + i * max_len));

		if (p == MAP_FAILED)
			return exp_error(-errno, "mapping queue %u of /dev/ublkc%d failed: %s", i,
					 d->id, strerror(errno));
		q->iod[k] = p;
		q->devs_left++;
		atomic_fetch_add(&d->queues_live, 1);
		q->tags[k] = calloc(s->depth, sizeof(*q->tags[k]));
		if (!q->tags[k])
			return exp_error(-ENOMEM, "out of memory");
		for (unsigned int j = 0; j < s->depth; j++)
			q->tags[k][j] = (struct ublk_tag){ .q = q, .d = d, .tag = (uint16_t)j };
	}
	ret = pthread_create(&q->thread, NULL, queue_main, q);
	if (ret)
		return exp_error(-ret, "starting worker %u failed: %s", i, strerror(ret));
	q->running = true;
	/* For top -H and the tests that count what the workers cost. */
	pthread_setname_np(q->thread, "nvmefs-worker");
	return 0;
}

void ublk_queue_join(struct ublk_queue *q)
{
	if (q->running)
		pthread_join(q->thread, NULL);
	for (unsigned int k = 0; q->iod && q->tags && k < q->s->nr_dev; k++) {
		if (q->iod[k])
			munmap(q->iod[k], q->s->iod_len);
		free(q->tags[k]);
	}
	if (q->epfd >= 0)
		close(q->epfd);
	free(q->iod);
	free(q->tags);
	free(q->nr_aborted);
}
