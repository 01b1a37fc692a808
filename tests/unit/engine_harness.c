/* The export engine's unit test harness: engine_harness.h. */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <nvme/types.h>

#include "engine_harness.h"
#include "lifecycle/ctrl.h"

const struct fake_ns default_ns[1] = { { .nsid = 1, .nsze = 1ULL << 20, .lba_shift = 9 } };
struct engine_harness t;

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static ssize_t t_read(void *arg, void *buf, size_t size)
{
	ssize_t n = recv(*(int *)arg, buf, size, MSG_DONTWAIT);

	if (n == 0)
		return -ENODEV;
	return n < 0 ? -errno : n;
}

static uint32_t t_io_nsid(void *arg, const void *buf, size_t len)
{
	(void)arg;
	ck_assert_uint_ge(len, sizeof(struct tmsg));
	return ((const struct tmsg *)buf)->nsid;
}

static void t_handle(void *arg, struct exp_req *r, void *buf, size_t len)
{
	struct tmsg m;

	(void)arg;
	ck_assert_uint_ge(len, sizeof(m));
	memcpy(&m, buf, sizeof(m));
	pthread_mutex_lock(&t.lock);
	t.dispatched++;
	pthread_mutex_unlock(&t.lock);
	exp_submit(r, &t.done[m.cookie], &t.ns, (enum exp_op)m.op, m.off, m.size,
		   m.op == EXP_WRITE ? (uint8_t *)buf + sizeof(m) : NULL);
}

static void t_refuse(void *arg, const void *buf, int err)
{
	(void)arg;
	(void)buf;
	pthread_mutex_lock(&t.lock);
	t.refused++;
	t.refused_err = err;
	pthread_mutex_unlock(&t.lock);
}

static void t_complete_read(void *cookie, const void *data, size_t len)
{
	struct done *d = cookie;

	pthread_mutex_lock(&t.lock);
	free(d->data);
	d->data = malloc(len);
	ck_assert_ptr_nonnull(d->data);
	memcpy(d->data, data, len);
	d->from = data;
	d->len = len;
	d->err = 0;
	d->calls++;
	t.completed++;
	pthread_mutex_unlock(&t.lock);
}

static void t_complete(void *cookie, enum exp_op op, int err, size_t len)
{
	struct done *d = cookie;

	(void)op;
	pthread_mutex_lock(&t.lock);
	d->err = err;
	d->len = len;
	d->calls++;
	t.completed++;
	pthread_mutex_unlock(&t.lock);
}

/* The test's posts, as ring.c's entries: each worker's thread watches its
 * list's eventfd and starts what waits there while the worker has a buffer. */
static int t_watch(void *arg, unsigned int i, int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &t.posts[i] };

	(void)arg;
	ck_assert_uint_lt(i, MAX_WORKERS);
	return epoll_ctl(epfd, EPOLL_CTL_ADD, t.posts[i].fd, &ev) ? -errno : 0;
}

static bool t_run(void *arg, unsigned int i)
{
	struct post_list *l = &t.posts[i];
	struct exp_worker *w = exp_worker(t.e, i);
	bool any = false;
	eventfd_t v;

	(void)arg;
	eventfd_read(l->fd, &v);
	pthread_mutex_lock(&t.lock);
	while (l->len && exp_worker_can_post(w)) {
		struct exp_post *p = l->q[0];

		memmove(l->q, l->q + 1, --l->len * sizeof(l->q[0]));
		pthread_mutex_unlock(&t.lock);
		exp_worker_post(w, p);
		any = true;
		pthread_mutex_lock(&t.lock);
	}
	pthread_mutex_unlock(&t.lock);
	return any;
}

/* As ring.c's commits of a pass, which go to the kernel in one call here. */
static void t_flush(void *arg, unsigned int i)
{
	(void)arg, (void)i;
	pthread_mutex_lock(&t.lock);
	t.flushed = t.completed;
	pthread_mutex_unlock(&t.lock);
}

const struct fs_loop_ops t_loop_ops = {
	.read = t_read,
	.io_nsid = t_io_nsid,
	.handle = t_handle,
	.watch = t_watch,
	.run = t_run,
	.flush = t_flush,
};

static const struct exp_ops t_ops = {
	.refuse = t_refuse,
	.complete_read = t_complete_read,
	.complete = t_complete,
};

static void setup(void)
{
	fake_reset();
	memset(&t, 0, sizeof(t));
	pthread_mutex_init(&t.lock, NULL);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, t.sock), 0);
	for (unsigned int i = 0; i < MAX_WORKERS; i++) {
		t.posts[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ck_assert_int_ge(t.posts[i].fd, 0);
	}
	t.ns.nsid = 1;
	t.ns.lba_size = 512;
	t.ns.lba_shift = 9;
	t.ns.max_zeroes_nlb = 1u << 16;
	atomic_init(&t.ns.size, default_ns[0].nsze << 9);
	snprintf(t.ns.name, sizeof(t.ns.name), "n1");
}

static void teardown(void)
{
	for (unsigned int i = 0; i < NR_COOKIES; i++)
		free(t.done[i].data);
	close(t.sock[0]);
	close(t.sock[1]);
	for (unsigned int i = 0; i < MAX_WORKERS; i++)
		close(t.posts[i].fd);
	pthread_mutex_destroy(&t.lock);
	fake_reset();
}

TCase *engine_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	return tc;
}

/* Connects with @nr I/O queues of 32. */
void connect_queues(uint8_t mdts, int ctrl_loss_s, unsigned int nr)
{
	struct fake_target target = {
		.cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400, .mdts = mdts, .io = true,
	};
	struct nvmefs_connect_opts opts;
	struct nvmefs_io_opts io;
	int ret;

	fake_opts(&opts, TRADDR, 0);
	opts.subnqn = SUBNQN;
	opts.kato_ms = 0;
	if (ctrl_loss_s) {
		opts.ctrl_loss_tmo_s = ctrl_loss_s;
		opts.reconnect_delay_s = 1;
	}
	fake_script_connect_kato(TRADDR, "4420", &target, 0);
	ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &t.ctrl);
	ck_assert_msg(ret == 0, "connect: %d: %s", ret, nvmefs_errmsg());
	nvmefs_io_opts_init(&io);
	io.nr_queues = nr;
	io.queue_size = 32;
	fake_script_io_queues(nr, 32, CNTLID, default_ns, 1);
	ret = nvmefs_ctrl_create_io_queues(t.ctrl, &io);
	ck_assert_msg(ret == 0, "create_io_queues: %d: %s", ret, nvmefs_errmsg());
	ret = nvmefs_subsys_create_single(t.ctrl, &t.head);
	ck_assert_msg(ret == 0, "subsys_create_single: %d: %s", ret, nvmefs_errmsg());
}

void connect_with(uint8_t mdts, int ctrl_loss_s)
{
	connect_queues(mdts, ctrl_loss_s, 1);
}

/* @workers workers with @depth buffers each, one I/O queue each. */
void engine_create_workers(unsigned int workers, unsigned int depth)
{
	struct exp_opts o = { .workers = workers, .depth = depth, .max_io = MAX_IO };
	int ret;

	ck_assert_uint_le(workers, MAX_WORKERS);
	ret = exp_create(t.head, &o, &t_ops, &t.sock[0], &t.e);
	ck_assert_msg(ret == 0, "exp_create: %d: %s", ret, exp_errmsg());
}

/* One worker with @depth buffers over the one I/O queue. */
void engine_create(unsigned int depth)
{
	engine_create_workers(1, depth);
}

void engine_start(void)
{
	ck_assert_int_eq(fs_loop_start(t.e, t.sock[0], &t_loop_ops, &t.sock[0], &t.loop), 0);
}

/* Stops the engine, checks every buffer came back and no reservation is
 * left, and disconnects. */
void finish(void)
{
	fs_loop_stop(t.loop);
	t.loop = NULL;
	for (unsigned int i = 0; i < t.e->opts.workers; i++) {
		struct exp_worker *w = &t.e->workers[i];
		unsigned int n = 0;

		for (struct exp_req *f = w->free; f; f = f->next)
			n++;
		ck_assert_uint_eq(n, t.e->opts.depth);
		ck_assert_uint_eq(w->busy, 0);
	}
	for (unsigned int i = 0; i < t.e->nr_resv; i++)
		ck_assert(!t.e->resv[i].used);
	exp_destroy(t.e);
	fake_expect_destroy();
	fake_script_disconnect();
	nvmefs_subsys_destroy(t.head);
	fake_assert_done();
}

void send_req(enum exp_op op, uint64_t off, uint32_t size, unsigned int cookie,
	      const uint8_t *payload)
{
	uint8_t msg[sizeof(struct tmsg) + MAX_IO];
	struct tmsg m = { .op = op, .nsid = 1, .off = off, .size = size, .cookie = cookie };
	size_t len = sizeof(m);

	memcpy(msg, &m, sizeof(m));
	if (payload) {
		memcpy(msg + sizeof(m), payload, size);
		len += size;
	}
	ck_assert_int_eq(send(t.sock[1], msg, len, 0), (ssize_t)len);
}

/* Waits up to @max_ms for cookie @i's completion; then, a little longer,
 * that no second one comes. */
struct done wait_done(unsigned int i, int max_ms)
{
	int64_t end = now_ms() + max_ms;
	struct done d;

	for (;;) {
		pthread_mutex_lock(&t.lock);
		d = t.done[i];
		pthread_mutex_unlock(&t.lock);
		if (d.calls || now_ms() >= end)
			break;
		usleep(1000);
	}
	ck_assert_msg(d.calls, "request %u did not complete within %d ms", i, max_ms);
	usleep(20000);
	pthread_mutex_lock(&t.lock);
	ck_assert_uint_eq(t.done[i].calls, 1);
	pthread_mutex_unlock(&t.lock);
	return d;
}

void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 9));
}


void post(unsigned int worker, struct exp_post *p, enum exp_op op, uint64_t off, size_t size,
	  unsigned int cookie, const void *data, bool copy, void *read_buf, size_t read_room)
{
	struct post_list *l = &t.posts[worker];

	*p = (struct exp_post){ .cookie = &t.done[cookie], .ns = &t.ns, .op = op, .off = off,
				.size = size, .data = data, .copy = copy, .read_buf = read_buf,
				.read_room = read_room };
	pthread_mutex_lock(&t.lock);
	ck_assert_uint_lt(l->len, POSTS_MAX);
	l->q[l->len++] = p;
	pthread_mutex_unlock(&t.lock);
	eventfd_write(l->fd, 1);
}

unsigned int posts_waiting(unsigned int worker)
{
	unsigned int n;

	pthread_mutex_lock(&t.lock);
	n = t.posts[worker].len;
	pthread_mutex_unlock(&t.lock);
	return n;
}

/* The refused attempt holds the controller's thread until the test has
 * seen what it wants of the outage: with only the 1 s reconnect delay
 * between it and the namespace released, a loaded host let the outage
 * end unseen. */
static void wait_back(struct fake_step *s, void *arg)
{
	(void)s;
	(void)arg;
	while (!atomic_load(&t.back))
		usleep(1000);
}

void ctrl_back(void)
{
	atomic_store(&t.back, true);
}

/* The controller's thread reconnecting one I/O queue of 32: both queues
 * torn down, an attempt refused (once ctrl_back() says), then one that
 * gets through. */
static void script_refused_then_back(void)
{
	struct fake_target target = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				      .mdts = MDTS_1M, .io = true };
	struct fake_step *s;
	struct nvme_id_ns id;

	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	s = fake_expect_create(TRADDR, "4420");
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "nobody listens (scripted)");
	s->on_match = wait_back;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_script_attempt(TRADDR, &target, 32, &id, 1, 1);
}

/* An engine with @depth buffers whose controller reconnects for 10 s when
 * it fails, one attempt refused, then back: the caller scripts the I/O
 * that goes once it is, then calls hold_namespace().  Returns its queue. */
struct nvmefs_ioq *outage_engine(unsigned int depth)
{
	connect_with(MDTS_1M, 10);
	engine_create(depth);
	script_refused_then_back();
	return nvmefs_ctrl_io_queue(t.ctrl, 0);
}

/* Starts the engine and fails the connection: @q holds namespace 1. */
void hold_namespace(struct nvmefs_ioq *q)
{
	int64_t end;

	engine_start();
	fake_disconnect(1);
	for (end = now_ms() + 10000; !nvmefs_ioq_ns_held(q, 1) && now_ms() < end;)
		usleep(1000);
	ck_assert_msg(nvmefs_ioq_ns_held(q, 1), "the outage never held the namespace");
}
