/*
 * The export engine (src/export) without FUSE: a front end of the test's
 * own sends byte-range requests through a SOCK_SEQPACKET socket (one
 * request a message, as /dev/fuse gives one a read), the engine's worker
 * thread reads and dispatches them, and the library underneath talks to
 * the scripted transport.  Each request carries a cookie; the test checks
 * what reached the target, the bytes a read completes with, and that each
 * cookie completes exactly once.
 */
#include "config.h"

#include "engine_harness.h"

const struct fake_ns default_ns[1] = { { .nsid = 1, .nsze = 1ULL << 20, .lba_shift = 9 } };
struct engine_test t;

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

static void t_dispatch(void *arg, void *buf, size_t len)
{
	struct tmsg m;

	(void)arg;
	ck_assert_uint_ge(len, sizeof(m));
	memcpy(&m, buf, sizeof(m));
	pthread_mutex_lock(&t.lock);
	t.dispatched++;
	pthread_mutex_unlock(&t.lock);
	exp_submit(&t.done[m.cookie], &t.ns, (enum exp_op)m.op, m.off, m.size,
		   m.op == EXP_WRITE ? (uint8_t *)buf + sizeof(m) : NULL);
}

static void t_refuse(void *arg, const void *buf, int err)
{
	(void)arg;
	(void)buf;
	(void)err;
	pthread_mutex_lock(&t.lock);
	t.refused++;
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
	pthread_mutex_unlock(&t.lock);
}

static const struct exp_ops t_ops = {
	.read = t_read,
	.io_nsid = t_io_nsid,
	.dispatch = t_dispatch,
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
	pthread_mutex_destroy(&t.lock);
	fake_reset();
}

void connect_with(uint8_t mdts, int ctrl_loss_s)
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
	io.nr_queues = 1;
	io.queue_size = 32;
	fake_script_io_queues(1, 32, CNTLID, default_ns, 1);
	ret = nvmefs_ctrl_create_io_queues(t.ctrl, &io);
	ck_assert_msg(ret == 0, "create_io_queues: %d: %s", ret, nvmefs_errmsg());
	ret = nvmefs_subsys_create_single(t.ctrl, &t.head);
	ck_assert_msg(ret == 0, "subsys_create_single: %d: %s", ret, nvmefs_errmsg());
}

/* One worker with @depth buffers over the one I/O queue. */
void engine_create(unsigned int depth)
{
	struct exp_opts o = { .workers = 1, .depth = depth, .max_io = MAX_IO };
	int ret;

	ret = exp_create(t.head, &o, &t_ops, &t.sock[0], &t.e);
	ck_assert_msg(ret == 0, "exp_create: %d: %s", ret, exp_errmsg());
}

void engine_start(void)
{
	ck_assert_int_eq(exp_start(t.e, t.sock[0]), 0);
}

/* Stops the engine, checks every buffer came back and no reservation is
 * left, and disconnects. */
void finish(void)
{
	struct exp_worker *w;
	unsigned int n = 0;

	exp_stop(t.e);
	w = &t.e->workers[0];
	for (struct exp_req *f = w->free; f; f = f->next)
		n++;
	ck_assert_uint_eq(n, t.e->opts.depth);
	ck_assert_uint_eq(w->busy, 0);
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

/* ------------------------------------------------------------------------ */

/*
 * An unaligned read of 40000 bytes at byte 1000: blocks 1..80 (80 blocks),
 * which the library splits at MDTS (32 blocks) into three commands; the
 * read completes once, with the bytes from 488 into the first block.
 */
START_TEST(test_read_split_mdts)
{
	static uint8_t image[80 * 512];
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_16K, 0);
	engine_create(2);
	fill(image, sizeof(image), 3);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 1, 32, 32 * 512);
	fake_step_data(s, image, 32 * 512);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 33, 32, 32 * 512);
	fake_step_data(s, image + 32 * 512, 32 * 512);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 65, 16, 16 * 512);
	fake_step_data(s, image + 64 * 512, 16 * 512);
	engine_start();
	send_req(EXP_READ, 1000, 40000, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, 40000);
	ck_assert_mem_eq(d.data, image + 1000 - 512, 40000);
	ck_assert_uint_eq(t.refused, 0);
	finish();
}
END_TEST

/*
 * An unaligned write of 1000 bytes at byte 700 (blocks 1..3): the two
 * partial edge blocks are read, the whole one between written from the
 * request's own buffer, then the edges written back with the new bytes
 * laid over what the target held.  A second write overlapping it waits
 * for its reservation: its commands come only after the first's (the
 * script's order would fail otherwise).
 */
START_TEST(test_write_unaligned_reserved)
{
	uint8_t payload[1000], payload2[512], blk1[512], blk3[512], want[512];
	struct fake_step *r1, *r3, *w2, *w1, *w3, *b1;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(2);
	fill(payload, sizeof(payload), 11);
	fill(payload2, sizeof(payload2), 99);
	fill(blk1, sizeof(blk1), 40);
	fill(blk3, sizeof(blk3), 70);
	r1 = fake_expect_rw(1, nvme_cmd_read, 1, 1, 1, 512);
	fake_step_data(r1, blk1, sizeof(blk1));
	r3 = fake_expect_rw(1, nvme_cmd_read, 1, 3, 1, 512);
	fake_step_data(r3, blk3, sizeof(blk3));
	w2 = fake_expect_rw(1, nvme_cmd_write, 1, 2, 1, 512);
	w1 = fake_expect_rw(1, nvme_cmd_write, 1, 1, 1, 512);
	w3 = fake_expect_rw(1, nvme_cmd_write, 1, 3, 1, 512);
	/* The second: block 3, aligned, after the first is done. */
	b1 = fake_expect_rw(1, nvme_cmd_write, 1, 3, 1, 512);
	/* Both are waiting before the worker starts: it takes both at once. */
	send_req(EXP_WRITE, 700, sizeof(payload), 0, payload);
	send_req(EXP_WRITE, 3 * 512, sizeof(payload2), 1, payload2);
	engine_start();
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, sizeof(payload));
	d = wait_done(1, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, sizeof(payload2));
	/* The middle block straight from the payload. */
	ck_assert_uint_eq(w2->captured_len, 512);
	ck_assert_mem_eq(w2->captured, payload + (1024 - 700), 512);
	/* Block 1: the target's first 188 bytes, then the payload's first 324. */
	memcpy(want, blk1, 188);
	memcpy(want + 188, payload, 324);
	ck_assert_mem_eq(w1->captured, want, 512);
	/* Block 3: the payload's last 164 bytes, then the target's. */
	memcpy(want, payload + 1000 - 164, 164);
	memcpy(want + 164, blk3 + 164, 512 - 164);
	ck_assert_mem_eq(w3->captured, want, 512);
	ck_assert_mem_eq(b1->captured, payload2, 512);
	finish();
}
END_TEST

/* A status without DNR is retried below the engine; the request completes
 * once, with the data of the try that worked. */
START_TEST(test_retryable_status)
{
	uint8_t image[4096];
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	fill(image, sizeof(image), 5);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	engine_start();
	send_req(EXP_READ, 4096, 4096, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image, sizeof(image));
	finish();
}
END_TEST

/* A status with DNR is not retried: the request fails once, with EIO. */
START_TEST(test_dnr_status_fails)
{
	struct fake_step *s;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, true);
	engine_start();
	send_req(EXP_READ, 4096, 4096, 0, NULL);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, EIO);
	ck_assert_ptr_null(d.data);
	finish();
}
END_TEST

/* A write, then a flush, then zeroing and punching: each in order, each
 * completed once; the write from the request's buffer. */
START_TEST(test_flush_after_writes)
{
	uint8_t payload[8192];
	struct fake_step *w, *s;
	struct done d;

	connect_with(MDTS_1M, 0);
	engine_create(1);
	fill(payload, sizeof(payload), 17);
	w = fake_expect_rw(1, nvme_cmd_write, 1, 0, 16, 8192);
	fake_expect_io(1, nvme_cmd_flush, 1);
	s = fake_expect_io(1, nvme_cmd_write_zeroes, 1);
	s->match |= FAKE_M_CDW10 | FAKE_M_CDW12;
	s->cdw10 = 32;
	s->cdw12 = 7;		/* 8 blocks, 0's based */
	engine_start();
	send_req(EXP_WRITE, 0, sizeof(payload), 0, payload);
	d = wait_done(0, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, sizeof(payload));
	ck_assert_mem_eq(w->captured, payload, sizeof(payload));
	send_req(EXP_FLUSH, 0, 0, 1, NULL);
	d = wait_done(1, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(d.len, 0);
	send_req(EXP_ZERO, 32 * 512, 4096, 2, NULL);
	d = wait_done(2, 5000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.writes), 1);
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.flushes), 1);
	ck_assert_uint_eq(atomic_load(&t.e->workers[0].stats.write_zeroes), 1);
	finish();
}
END_TEST

/* The controller's thread reconnecting one I/O queue of 32: both queues
 * torn down, an attempt refused, then one that gets through. */
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
	for (end = now_ms() + 3000; !nvmefs_ioq_ns_held(q, 1) && now_ms() < end;)
		usleep(1000);
	ck_assert_msg(nvmefs_ioq_ns_held(q, 1), "the outage never held the namespace");
}

/*
 * A read to a namespace the queue holds (its controller reconnecting) is
 * parked, copied out of the buffer it came in, and not dispatched; once the
 * controller is back it goes, and completes with the target's bytes.
 */
START_TEST(test_held_namespace_parks)
{
	struct nvmefs_ioq *q;
	uint8_t image[4096];
	struct fake_step *s;
	unsigned int dispatched = 0;
	bool parked = false;
	struct done d;
	int64_t end;

	q = outage_engine(2);
	fill(image, sizeof(image), 23);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_data(s, image, sizeof(image));
	hold_namespace(q);
	send_req(EXP_READ, 0, 4096, 0, NULL);
	for (end = now_ms() + 1000; !parked && now_ms() < end; usleep(1000)) {
		pthread_mutex_lock(&t.lock);
		dispatched = t.dispatched;
		pthread_mutex_unlock(&t.lock);
		parked = atomic_load(&t.e->parked_bytes) > 0;
	}
	ck_assert_msg(parked, "the held read was not parked");
	ck_assert_uint_eq(dispatched, 0);
	d = wait_done(0, 10000);
	ck_assert_int_eq(d.err, 0);
	ck_assert_mem_eq(d.data, image, sizeof(image));
	ck_assert_uint_eq(t.dispatched, 1);
	ck_assert_uint_eq(atomic_load(&t.e->parked_bytes), 0);
	finish();
}
END_TEST

/* The number after "@key": in the stats' JSON @text. */
static uint64_t json_number(const char *text, const char *key)
{
	char quoted[64];
	const char *at;
	unsigned long long v;

	snprintf(quoted, sizeof(quoted), "\"%s\":", key);
	at = strstr(text, quoted);
	ck_assert_msg(at, "no %s in %s", key, text);
	ck_assert_int_eq(sscanf(at + strlen(quoted), " %llu", &v), 1);
	return v;
}

/*
 * The stats' pinned_bytes: what the controller registered before the
 * export (its queues' pools), plus the export's request buffers, depth x
 * (max_io + header slack + two edge blocks), registered once.
 */
START_TEST(test_stats_pinned_bytes)
{
	uint64_t before;
	size_t len;
	char *text;

	connect_with(MDTS_1M, 0);
	before = nvmefs_ctrl_pinned_bytes(t.ctrl);
	engine_create(3);
	text = exp_stats_json(t.e, &t.ns, 1, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(json_number(text, "pinned_bytes"),
			  before + 3 * (MAX_IO + EXP_BUF_SLACK + 2 * EXP_MAX_LBA_SIZE));
	ck_assert_uint_eq(json_number(text, "pinned_bytes"), nvmefs_ctrl_pinned_bytes(t.ctrl));
	free(text);
	engine_start();
	finish();
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("requests");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_read_split_mdts);
	tcase_add_test(tc, test_write_unaligned_reserved);
	tcase_add_test(tc, test_retryable_status);
	tcase_add_test(tc, test_dnr_status_fails);
	tcase_add_test(tc, test_flush_after_writes);
	tcase_add_test(tc, test_held_namespace_parks);
	tcase_add_test(tc, test_stats_pinned_bytes);
	engine_post_tests(tc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(engine_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
