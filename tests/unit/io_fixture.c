/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The I/O tests' shared fixture (io_fixture.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io_fixture.h"

const struct fake_ns default_ns[1] = { { .nsid = 1, .nsze = 1ULL << 33, .lba_shift = 9 } };

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void assert_keyed_at(int line, const struct nvmefs_sgl *sgl, const void *addr,
		     uint32_t len, uint32_t key)
{
	const uint8_t *b = (const uint8_t *)sgl;

	ck_assert_msg(b[15] == 0x40, "line %d: SGL identifier %#x, not keyed data block 0x40",
		      line, b[15]);
	ck_assert_msg(le64_at(b) == (uintptr_t)addr, "line %d: SGL address %#llx, want %p", line,
		      (unsigned long long)le64_at(b), addr);
	ck_assert_msg((uint32_t)(b[8] | b[9] << 8 | b[10] << 16) == len,
		      "line %d: SGL length %u, want %u", line, b[8] | b[9] << 8 | b[10] << 16, len);
	ck_assert_msg(le32_at(b + 11) == key, "line %d: SGL key %#x, want %#x", line,
		      le32_at(b + 11), key);
}

void assert_null_sgl_at(int line, const struct nvmefs_sgl *sgl)
{
	static const uint8_t zero[15];
	const uint8_t *b = (const uint8_t *)sgl;

	ck_assert_msg(b[15] == 0x40, "line %d: SGL identifier %#x, want 0x40", line, b[15]);
	ck_assert_msg(memcmp(b, zero, 15) == 0, "line %d: the null SGL has non-zero bytes", line);
}

void assert_inline_sgl_at(int line, const struct nvmefs_sgl *sgl, uint32_t len)
{
	const uint8_t *b = (const uint8_t *)sgl;

	ck_assert_msg(b[15] == 0x01, "line %d: SGL identifier %#x, want 0x01", line, b[15]);
	ck_assert_msg(le64_at(b) == 0, "line %d: in-capsule offset %#llx, want 0", line,
		      (unsigned long long)le64_at(b));
	ck_assert_msg(le32_at(b + 8) == len, "line %d: SGL length %u, want %u", line,
		      le32_at(b + 8), len);
	ck_assert_msg(!b[12] && !b[13] && !b[14], "line %d: reserved SGL bytes set", line);
}

static unsigned int cb_seq;

void on_io(void *arg, int status)
{
	struct cb_rec *r = arg;

	r->calls++;
	r->status = status;
	r->order = ++cb_seq;
}

struct nvmefs_ctrl *connect_io_vs(uint8_t mdts, uint64_t cap, uint32_t ioccsz,
				  uint32_t kato_ms, uint32_t vs)
{
	struct fake_target t = {
		.cntlid = CNTLID, .cap = cap, .vs = vs, .mdts = mdts, .io = true,
		.ioccsz = ioccsz,
	};
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	fake_opts(&opts, TRADDR, 0);
	opts.subnqn = SUBNQN;
	opts.kato_ms = (int)kato_ms;
	fake_script_connect_kato(TRADDR, "4420", &t, kato_ms);
	ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
	ck_assert_msg(ret == 0, "connect: %d: %s", ret, nvmefs_errmsg());
	return ctrl;
}

struct nvmefs_ctrl *connect_io(uint8_t mdts, uint64_t cap, uint32_t ioccsz,
			       uint32_t kato_ms)
{
	return connect_io_vs(mdts, cap, ioccsz, kato_ms, 0x10400);
}

void create_ioqs(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int size,
		 unsigned int timeout_ms)
{
	struct nvmefs_io_opts o;
	int ret;

	nvmefs_io_opts_init(&o);
	o.nr_queues = nr;
	o.queue_size = size;
	if (timeout_ms)
		o.timeout_ms = timeout_ms;
	fake_script_io_queues(nr, (uint16_t)size, CNTLID, default_ns, 1);
	ret = nvmefs_ctrl_create_io_queues(ctrl, &o);
	ck_assert_msg(ret == 0, "create_io_queues: %d: %s", ret, nvmefs_errmsg());
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), nr);
}

void disconnect_io(struct nvmefs_ctrl *ctrl, unsigned int nr, bool failed)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		fake_expect_destroy();
	if (failed)
		fake_expect_destroy();
	else
		fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}

uint8_t *reg_buf(struct nvmefs_ctrl *ctrl, size_t len, uint8_t fill,
		 struct nvmefs_mr **mr)
{
	uint8_t *p = aligned_alloc(4096, len);
	int ret;

	ck_assert_ptr_nonnull(p);
	memset(p, fill, len);
	ret = nvmefs_mr_reg(ctrl, p, len, mr);
	ck_assert_msg(ret == 0, "mr_reg: %d: %s", ret, nvmefs_errmsg());
	return p;
}

struct nvmefs_ioq *read_held(struct nvmefs_ctrl *ctrl, struct cb_rec *rec, void **buf)
{
	struct nvmefs_ioq *q;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	*buf = nvmefs_ioq_buf_get(q);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096)->hold = true;
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, *buf, on_io, rec), 0);
	return q;
}

struct nvmefs_ctrl *connect_recovering_to(const struct fake_target *t, int ctrl_loss_s,
					  unsigned int timeout_ms)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	fake_opts(&opts, TRADDR, timeout_ms);
	opts.subnqn = SUBNQN;
	opts.kato_ms = 0;
	opts.ctrl_loss_tmo_s = ctrl_loss_s;
	opts.reconnect_delay_s = 1;
	fake_script_connect_kato(TRADDR, "4420", t, 0);
	ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
	ck_assert_msg(ret == 0, "connect: %d: %s", ret, nvmefs_errmsg());
	return ctrl;
}

struct nvmefs_ctrl *connect_recovering(int ctrl_loss_s)
{
	static const struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023,
					      .vs = 0x10400, .mdts = MDTS_1M, .io = true };

	return connect_recovering_to(&t, ctrl_loss_s, 0);
}

struct fake_step *script_attempt_queues(unsigned int size, const struct nvme_id_ns *id,
					unsigned int asked, unsigned int granted)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				 .mdts = MDTS_1M, .io = true };

	return fake_script_attempt(TRADDR, &t, size, id, asked, granted);
}

struct fake_step *script_attempt(unsigned int size, const struct nvme_id_ns *id)
{
	return script_attempt_queues(size, id, 1, 1);
}

void script_reconnect(unsigned int size, const struct nvme_id_ns *id)
{
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	script_attempt(size, id);
}

void poll_until(struct nvmefs_ioq *q, const struct cb_rec *r, int max_ms)
{
	int64_t end = now_ms() + max_ms;

	while (!r->calls && now_ms() < end) {
		nvmefs_ioq_poll(q, 0);
		usleep(1000);
	}
	ck_assert_msg(r->calls, "the I/O did not complete within %d ms", max_ms);
}

void script_refused_attempt(void)
{
	struct fake_step *refused = fake_expect_create(TRADDR, "4420");

	refused->create_ret = -ECONNREFUSED;
	snprintf(refused->create_msg, sizeof(refused->create_msg), "nobody listens (scripted)");
}

int io_check_main(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

#ifdef __SANITIZE_THREAD__
	srunner_run(sr, NULL, "races", CK_ENV);
#else
	srunner_run_all(sr, CK_ENV);
#endif
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
