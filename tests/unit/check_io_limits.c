/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the limits io_queues.c takes from the controller (MDTS, the
 * NVM command set's WZSL and DMRSL), when the queues are created and again
 * after a reconnect, as the commands sent show them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "io_fixture.h"

/* An NVMe 2.0 controller's Identify CNS 06h (CSI 0, the NVM command set),
 * answered with @id or refused (@id NULL) with Invalid Field. */
static void expect_id_ctrl_nvm(const struct nvme_id_ctrl_nvm *id)
{
	struct fake_step *s = fake_expect_identify(NVME_IDENTIFY_CNS_CSI_CTRL, 0, id,
						   id ? sizeof(*id) : 0);

	s->cdw11 = (uint32_t)NVME_CSI_NVM << 24;
	if (!id)
		fake_step_status(s, 0, NVME_SC_INVALID_FIELD, true);
}

/*
 * The controller's Write Zeroes Size Limit (WZSL, in minimum pages as a power
 * of two) and Deallocate range size limit (DMRSL, blocks) split commands
 * further than their fields do, as Linux follows them.
 */
START_TEST(test_nvm_limits)
{
	struct nvmefs_ctrl *ctrl = connect_io_vs(MDTS_1M, CAP_MQES_1023, 0, 0, 0x20000);
	struct nvme_id_ctrl_nvm id = { .wzsl = 2, .dmrsl = nvmefs_cpu_to_le32(100) };
	struct nvmefs_ns_info info;
	struct cb_rec rec = { 0 };
	struct nvmefs_io_opts o;
	struct nvmefs_ioq *ioq;
	struct fake_step *d[3];
	uint8_t want[16] = { 0 };
	int i;

	nvmefs_io_opts_init(&o);
	expect_id_ctrl_nvm(&id);
	fake_script_io_queues(1, (uint16_t)o.queue_size, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	/* 2^2 pages of 4 KiB: 32 blocks of 512 bytes. */
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), 0);
	ck_assert_uint_eq(info.max_zeroes_nlb, 32);

	for (i = 0; i < 3; i++)
		fake_expect_rw(1, nvme_cmd_write_zeroes, 1, (uint64_t)i * 32, 32, 0);
	fake_expect_rw(1, nvme_cmd_write_zeroes, 1, 96, 4, 0);
	ck_assert_int_eq(nvmefs_ioq_write_zeroes(ioq, 1, 0, 100, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);

	for (i = 0; i < 3; i++) {
		d[i] = fake_expect_io(1, nvme_cmd_dsm, 1);
		d[i]->match |= FAKE_M_LEN;
		d[i]->len = 16;
		d[i]->dir = NVMEFS_DIR_TO_CTRL;
	}
	rec.calls = 0;
	ck_assert_int_eq(nvmefs_ioq_deallocate(ioq, 1, 0, 250, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	/* Range: cattr, NLB (le32), SLBA (le64). */
	for (i = 0; i < 3; i++) {
		want[4] = i < 2 ? 100 : 50;
		want[8] = (uint8_t)(i * 100);
		ck_assert_mem_eq(d[i]->captured, want, 16);
	}
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* A 2.0 controller that refuses CNS 06h, or whose WZSL is past any size,
 * has no limits beyond the fields'. */
START_TEST(test_nvm_limits_none)
{
	struct nvme_id_ctrl_nvm huge = { .wzsl = 255 };
	struct nvmefs_ns_info info;
	struct nvmefs_io_opts o;

	for (int refused = 0; refused < 2; refused++) {
		struct nvmefs_ctrl *ctrl = connect_io_vs(MDTS_1M, CAP_MQES_1023, 0, 0, 0x20000);

		nvmefs_io_opts_init(&o);
		expect_id_ctrl_nvm(refused ? NULL : &huge);
		fake_script_io_queues(1, (uint16_t)o.queue_size, CNTLID, default_ns, 1);
		ck_assert_msg(nvmefs_ctrl_create_io_queues(ctrl, &o) == 0, "%s", nvmefs_errmsg());
		ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), 0);
		ck_assert_uint_eq(info.max_zeroes_nlb, NVMEFS_MAX_ZEROES_BLOCKS);
		disconnect_io(ctrl, 1, false);
	}
}
END_TEST

/* @op (read or write) of @nlb blocks of namespace 1 at block 0, @len bytes
 * at @buf, on @q, its response held back. */
static void rw_held(struct nvmefs_ioq *q, uint8_t op, uint32_t nlb, uint32_t len, void *buf,
		    struct cb_rec *rec)
{
	fake_expect_rw(1, op, 1, 0, nlb, len)->hold = true;
	ck_assert_int_eq(op == nvme_cmd_write ? nvmefs_ioq_write(q, 1, 0, nlb, buf, on_io, rec) :
			 nvmefs_ioq_read(q, 1, 0, nlb, buf, on_io, rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), 0);
}

/* The one I/O queue and the admin queue torn down, then a reconnect to @t,
 * namespace 1 identifying as @ns. */
static void script_back_as(const struct fake_target *t, const struct fake_ns *ns)
{
	struct nvme_id_ns id;

	fake_id_ns(&id, ns->nsze, ns->lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	fake_script_attempt(TRADDR, t, 32, &id, 1, 1);
}

/*
 * The target was reconfigured while we were away: 1024 bytes of in-capsule
 * data instead of 4096 (IOCCSZ 68 instead of 260), 8 KiB per command
 * instead of 1 MiB (MDTS).  The reconnect takes the new limits before any
 * I/O goes again: the write the outage held is sent again in 8 KiB pieces,
 * and a new 2 KiB write is no longer in-capsule (nvmet would reject it and
 * read its data as the next PDU).
 */
START_TEST(test_reconnect_takes_new_limits)
{
	static const struct fake_target before = { .cntlid = CNTLID, .cap = CAP_MQES_1023,
						   .vs = 0x10400, .mdts = MDTS_1M, .io = true,
						   .ioccsz = 260 };
	struct fake_target after = before;
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct fake_step *w1, *w2, *small, *big;
	struct nvmefs_ctrl *ctrl = connect_recovering_to(&before, 10, 0);
	struct nvmefs_ioq *q;
	struct nvmefs_mr *mr;
	uint8_t *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	ck_assert_uint_eq(ctrl->max_xfer, MIB);
	ck_assert_uint_eq(ctrl->inline_size, 4096);
	buf = reg_buf(ctrl, 16384, 0x3c, &mr);
	rw_held(q, nvme_cmd_write, 32, 16384, buf, &a);

	after.mdts = MDTS_8K;
	after.ioccsz = 68;
	script_back_as(&after, &default_ns[0]);
	w1 = fake_expect_rw(1, nvme_cmd_write, 1, 0, 16, 8192);
	w2 = fake_expect_rw(1, nvme_cmd_write, 1, 16, 16, 8192);
	fake_disconnect(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(ctrl->max_xfer, 8192);
	ck_assert_uint_eq(ctrl->inline_size, 1024);
	assert_keyed(&w1->seen_sgl, buf, 8192, mr->rkey);
	assert_keyed(&w2->seen_sgl, buf + 8192, 8192, mr->rkey);

	big = fake_expect_rw(1, nvme_cmd_write, 1, 40, 4, 2048);
	small = fake_expect_rw(1, nvme_cmd_write, 1, 48, 2, 1024);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 40, 4, buf, on_io, &b), 0);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 48, 2, buf, on_io, &c), 0);
	poll_until(q, &c, 1000);
	poll_until(q, &b, 1000);
	assert_keyed(&big->seen_sgl, buf, 2048, mr->rkey);
	assert_inline_sgl(&small->seen_sgl, 1024);
	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * Held through an outage, a read of one 16 KiB block meets a controller
 * that came back moving 8 KiB a command (MDTS): it cannot go in pieces, so
 * it fails, with a message, rather than going out as a command of no blocks.
 */
START_TEST(test_reconnect_mdts_below_a_block)
{
	static const struct fake_ns ns16k[] = { { .nsid = 1, .nsze = 1ULL << 20, .lba_shift = 14 } };
	static const struct fake_target before = { .cntlid = CNTLID, .cap = CAP_MQES_1023,
						   .vs = 0x10400, .mdts = MDTS_1M, .io = true };
	struct fake_target after = before;
	struct nvmefs_ctrl *ctrl = connect_recovering_to(&before, 10, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_io_opts o;
	struct nvmefs_ioq *q;
	struct nvmefs_mr *mr;
	uint8_t *buf;

	nvmefs_io_opts_init(&o);
	o.nr_queues = 1;
	o.queue_size = 32;
	fake_script_io_queues(1, 32, CNTLID, ns16k, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 16384, 0x3c, &mr);
	rw_held(q, nvme_cmd_read, 1, 16384, buf, &a);

	after.mdts = MDTS_8K;
	script_back_as(&after, &ns16k[0]);
	fake_disconnect(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, -EINVAL);
	assert_msg_has("16384-byte blocks are larger than the 8192 bytes");
	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static Suite *io_limits_suite(void)
{
	Suite *s = suite_create("io_limits");
	TCase *tc;

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_nvm_limits);
	tcase_add_test(tc, test_nvm_limits_none);
	tcase_add_test(tc, test_reconnect_takes_new_limits);
	tcase_add_test(tc, test_reconnect_mdts_below_a_block);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_limits_suite());
}
