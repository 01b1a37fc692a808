/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of io_cmd.c against the scripted transport: an I/O split at
 * MDTS and the 16-bit block count, Write Zeroes, Deallocate, Punch and
 * Flush as the controller sees them, running out of request slots (the
 * pending list), and an I/O sent again whole after an outage.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_fixture.h"

START_TEST(test_read_split_mdts)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct fake_step *r[4];
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	uint8_t *buf, pattern[16];
	unsigned int k, submits;

	create_ioqs(ctrl, 1, 128, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 4 * MIB, 0xee, &mr);
	/* 4 MiB of 512-byte blocks, 1 MiB (2048 blocks) per command. */
	for (k = 0; k < 4; k++) {
		r[k] = fake_expect_rw(1, nvme_cmd_read, 1, SLBA_HI + k * 2048, 2048, MIB);
		r[k]->hold = true;
		memset(pattern, 0x10 + k, sizeof(pattern));
		fake_step_data(r[k], pattern, sizeof(pattern));
	}
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, SLBA_HI, 8192, buf, on_io, &rec), 0);
	ck_assert_uint_eq(fake_stats.submits - submits, 4);
	ck_assert_uint_eq(fake_held(), 4);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 1);
	for (k = 0; k < 4; k++) {
		ck_assert_ptr_eq(r[k]->seen_data, buf + (size_t)k * MIB);
		ck_assert_ptr_eq(r[k]->seen_mr, mr);
		ck_assert_uint_eq(r[k]->seen_flags & 0xc0, 0x40);
		ck_assert_int_eq(r[k]->seen_nr_sge, 0);
		assert_keyed(&r[k]->seen_sgl, buf + (size_t)k * MIB, MIB, mr->rkey);
	}

	/* Three of four back: not done yet. */
	ck_assert_uint_eq(fake_release(3), 3);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_uint_eq(rec.calls, 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 1);
	ck_assert_uint_eq(fake_release(1), 1);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_uint_eq(rec.calls, 1);
	/* Each command's data landed at its own MiB. */
	for (k = 0; k < 4; k++) {
		memset(pattern, 0x10 + k, sizeof(pattern));
		ck_assert_mem_eq(buf + (size_t)k * MIB, pattern, sizeof(pattern));
		ck_assert_uint_eq(buf[(size_t)k * MIB + 16], 0);
		ck_assert_uint_eq(buf[(size_t)(k + 1) * MIB - 1], 0);
	}

	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* 64 KiB minimum pages and MDTS 16: 4 GiB, no limit below the SGL's, not
 * the 0 that 32 bits made of it, which failed every I/O. */
START_TEST(test_mdts_large_pages)
{
	struct nvmefs_ctrl *ctrl = connect_io(16, CAP_MQES_1023 | 4ull << 48, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 8, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_read_split_error_stops)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	struct fake_step *r0, *r1;
	unsigned int submits;
	uint8_t *buf;

	/* One request slot: the commands go one after the other, and the
	 * failure of the second keeps the third and fourth from going. */
	create_ioqs(ctrl, 1, 2, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 4 * MIB, 0, &mr);
	r0 = fake_expect_rw(1, nvme_cmd_read, 1, 0, 2048, MIB);
	r1 = fake_expect_rw(1, nvme_cmd_read, 1, 2048, 2048, MIB);
	fake_step_status(r1, 0x2, 0x81, true);	/* Unrecovered Read Error, DNR */
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 8192, buf, on_io, &rec), 0);
	ck_assert_uint_eq(fake_stats.submits - submits, 1);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 2000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	/* SCT << 8 | SC, without DNR. */
	ck_assert_int_eq(rec.status, 0x281);
	ck_assert_uint_eq(fake_stats.submits - submits, 2);
	ck_assert_ptr_eq(r1->seen_data, buf + MIB);
	ck_assert_uint_eq(r0->used, 1);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	nvmefs_mr_dereg(mr);
	free(buf);
	/* A further Read would meet this destroy step and fail the test. */
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_read_split_error_waits_for_all)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	struct fake_step *r[4];
	uint8_t *buf;
	unsigned int k;

	/* All four out at once; the second fails at once, the rest later:
	 * the caller hears once, with that status, after the last. */
	create_ioqs(ctrl, 1, 128, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 4 * MIB, 0, &mr);
	for (k = 0; k < 4; k++) {
		r[k] = fake_expect_rw(1, nvme_cmd_read, 1, k * 2048, 2048, MIB);
		r[k]->hold = k != 1;
	}
	fake_step_status(r[1], 0x2, 0x81, true);	/* DNR: not retried */
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 8192, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_uint_eq(rec.calls, 0);
	ck_assert_uint_eq(fake_release(FAKE_UNLIMITED), 3);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0x281);
	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_write_split_4k_blocks)
{
	static const struct fake_ns ns4k[] = { { .nsid = 2, .nsze = 1000, .lba_shift = 12 } };
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *w[3];
	unsigned int k;
	uint8_t *buf;

	nvmefs_io_opts_init(&o);
	o.queue_size = 32;
	fake_script_io_queues(1, 32, CNTLID, ns4k, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	for (k = 0; k < 5 * 4096; k++)
		buf[k] = (uint8_t)(k / 4096 + 1);
	/* 8 KiB per command: two 4 KiB blocks, then the fifth alone. */
	w[0] = fake_expect_rw(1, nvme_cmd_write, 2, 10, 2, 8192);
	w[1] = fake_expect_rw(1, nvme_cmd_write, 2, 12, 2, 8192);
	w[2] = fake_expect_rw(1, nvme_cmd_write, 2, 14, 1, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 2, 10, 5, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0);
	for (k = 0; k < 3; k++) {
		ck_assert_ptr_eq(w[k]->seen_data, buf + k * 8192);
		ck_assert_uint_eq(w[k]->captured[0], 2 * k + 1);
		ck_assert_uint_eq(w[k]->captured[w[k]->captured_len - 1], k < 2 ? 2 * k + 2 : 5);
	}
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_write_zeroes_split)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *w0, *w1;

	create_ioqs(ctrl, 1, 128, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	/* No data, so MDTS does not apply: the 16-bit NLB does. */
	w0 = fake_expect_rw(1, nvme_cmd_write_zeroes, 1, SLBA_HI, 65536, 0);
	w1 = fake_expect_rw(1, nvme_cmd_write_zeroes, 1, SLBA_HI + 65536, 4464, 0);
	ck_assert_int_eq(nvmefs_ioq_write_zeroes(ioq, 1, SLBA_HI, 70000, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_ptr_null(w0->seen_data);
	assert_null_sgl(&w0->seen_sgl);
	assert_null_sgl(&w1->seen_sgl);
	ck_assert_int_eq(w1->seen_nr_sge, 0);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_deallocate)
{
	/* Range by hand: cattr 0, NLB 200000 (0x30d40), SLBA 0x123456789. */
	static const uint8_t range[16] = {
		0x00, 0x00, 0x00, 0x00, 0x40, 0x0d, 0x03, 0x00,
		0x89, 0x67, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00,
	};
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *d;

	create_ioqs(ctrl, 1, 128, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	/* One DSM (0x09), one range (NR 0), AD (bit 2), more than 65536
	 * blocks in it. */
	d = fake_expect_io(1, nvme_cmd_dsm, 1);
	d->match |= FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 | FAKE_M_LEN;
	d->cdw10 = 0;
	d->cdw11 = 0x4;
	d->cdw12 = 0;
	d->len = 16;
	d->dir = NVMEFS_DIR_TO_CTRL;
	ck_assert_int_eq(nvmefs_ioq_deallocate(ioq, 1, 0x123456789ULL, 200000, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_uint_eq(d->captured_len, 16);
	ck_assert_mem_eq(d->captured, range, 16);
	/* No in-capsule data on this controller: the slot's keyed buffer. */
	ck_assert_ptr_null(d->seen_mr);
	assert_keyed(&d->seen_sgl, d->seen_data, 16, FAKE_SLOT_RKEY);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * Ranges past 2^32 blocks (3 TiB of 512-byte blocks, punched or zeroed
 * through the mount) are split, not cut to 32 bits: Deallocate in ranges of
 * at most 2^32 - 1 blocks, Write Zeroes in commands of 65536.
 */
START_TEST(test_ranges_past_32_bits)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	const uint64_t nlb = (1ull << 32) + 100;
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *d[2];
	uint8_t want[16] = { 0 };

	create_ioqs(ctrl, 1, 128, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	for (int i = 0; i < 2; i++) {
		d[i] = fake_expect_io(1, nvme_cmd_dsm, 1);
		d[i]->match |= FAKE_M_LEN;
		d[i]->len = 16;
		d[i]->dir = NVMEFS_DIR_TO_CTRL;
	}
	ck_assert_int_eq(nvmefs_ioq_deallocate(ioq, 1, 0, nlb, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	/* Range: cattr, NLB (le32), SLBA (le64). */
	memset(want + 4, 0xff, 4);
	ck_assert_mem_eq(d[0]->captured, want, 16);
	memset(want, 0, sizeof(want));
	want[4] = 101;
	memset(want + 8, 0xff, 4);
	ck_assert_mem_eq(d[1]->captured, want, 16);

	/* Write Zeroes: the last of 65537 commands carries the 100 left over. */
	d[0] = fake_expect_io(1, nvme_cmd_write_zeroes, 1);
	d[0]->match |= FAKE_M_CDW12;
	d[0]->cdw12 = 0xffff;
	fake_repeat(d[0], 65536, 65536);
	fake_expect_rw(1, nvme_cmd_write_zeroes, 1, 1ull << 32, 100, 0);
	rec.calls = 0;
	ck_assert_int_eq(nvmefs_ioq_write_zeroes(ioq, 1, 0, nlb, on_io, &rec), 0);
	while (!rec.calls)
		ck_assert_int_ge(nvmefs_ioq_poll(ioq, 1000), 0);
	ck_assert_int_eq(rec.status, 0);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * Punching a hole must leave blocks that read as zeros, and Deallocate alone
 * promises nothing (the specification makes it advisory, whatever DLFEAT
 * says it reads back).  As Linux does: Write Zeroes, with Deallocate (DEAC,
 * CDW12 bit 25) only where DLFEAT bit 3 says the namespace deallocates so.
 */
START_TEST(test_punch)
{
	static const struct fake_ns ns[] = {
		{ .nsid = 1, .nsze = 1 << 20, .lba_shift = 9, .dlfeat = 0x09 },
		{ .nsid = 2, .nsze = 1 << 20, .lba_shift = 9, .dlfeat = 0x01 },
	};
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct nvmefs_io_opts o;
	struct fake_step *z;

	nvmefs_io_opts_init(&o);
	fake_script_io_queues(1, (uint16_t)o.queue_size, CNTLID, ns, 2);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	z = fake_expect_io(1, nvme_cmd_write_zeroes, 1);
	z->match |= FAKE_M_CDW10 | FAKE_M_CDW12;
	z->cdw10 = 4096;
	z->cdw12 = 1u << 25 | (100 - 1);
	ck_assert_int_eq(nvmefs_ioq_punch(ioq, 1, 4096, 100, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	z = fake_expect_io(1, nvme_cmd_write_zeroes, 2);
	z->match |= FAKE_M_CDW10 | FAKE_M_CDW12;
	z->cdw10 = 4096;
	z->cdw12 = 100 - 1;
	ck_assert_int_eq(nvmefs_ioq_punch(ioq, 2, 4096, 100, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_flush)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *f;

	create_ioqs(ctrl, 1, 128, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	f = fake_expect_io(1, nvme_cmd_flush, 1);
	f->match |= FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 | FAKE_M_CDW13 | FAKE_M_LEN;
	ck_assert_int_eq(nvmefs_ioq_flush(ioq, 1, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_uint_eq(f->seen_qid, 1);
	ck_assert_ptr_null(f->seen_data);
	assert_null_sgl(&f->seen_sgl);
	/* Namespaces not identified are refused before anything is sent. */
	ck_assert_int_eq(nvmefs_ioq_flush(ioq, 2, on_io, &rec), -ENOENT);
	assert_msg_has("namespace 2 is not active");
	ck_assert_uint_eq(rec.calls, 1);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_slots_exhausted)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *r[5], *rb;
	unsigned int k, submits, i;
	uint8_t *buf, *buf2;

	/* 4 entries: 3 slots.  8 KiB per command: 16 blocks of 512. */
	create_ioqs(ctrl, 1, 4, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	ck_assert_uint_eq(ctrl->max_xfer, 8192);
	buf = nvmefs_ioq_buf_get(ioq);
	buf2 = nvmefs_ioq_buf_get(ioq);
	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(buf2);
	for (k = 0; k < 5; k++) {
		r[k] = fake_expect_rw(1, nvme_cmd_read, 1, k * 16, 16, 8192);
		r[k]->hold = true;
	}
	rb = fake_expect_rw(1, nvme_cmd_read, 1, 1000, 8, 4096);
	rb->hold = true;

	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 80, buf, on_io, &a), 0);
	ck_assert_uint_eq(fake_stats.submits - submits, 3);
	ck_assert_uint_eq(r[2]->used, 1);
	ck_assert_uint_eq(r[3]->used, 0);
	/* The rest of it waits; nothing overtakes it. */
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 1000, 8, buf2, on_io, &b), -EAGAIN);
	ck_assert_int_eq(nvmefs_ioq_write_zeroes(ioq, 1, 0, 8, on_io, &c), -EAGAIN);

	/* One back: the fourth goes, the fifth still waits. */
	ck_assert_uint_eq(fake_release(1), 1);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_uint_eq(r[3]->used, 1);
	ck_assert_uint_eq(r[4]->used, 0);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 1000, 8, buf2, on_io, &b), -EAGAIN);

	/* Another back: the fifth goes; now only the slots are full. */
	ck_assert_uint_eq(fake_release(1), 1);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_uint_eq(r[4]->used, 1);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 1000, 8, buf2, on_io, &b), -EAGAIN);
	ck_assert_uint_eq(fake_release(1), 1);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 1000, 8, buf2, on_io, &b), 0);
	ck_assert_uint_eq(rb->used, 1);
	ck_assert_uint_eq(fake_stats.submits - submits, 6);
	ck_assert_uint_eq(a.calls + b.calls + c.calls, 0);

	for (k = 0; k < 5; k++)
		ck_assert_ptr_eq(r[k]->seen_data, buf + k * 8192);
	ck_assert_uint_eq(fake_release(FAKE_UNLIMITED), 3);
	for (i = 0; i < 20 && !(a.calls && b.calls); i++)
		ck_assert_int_ge(nvmefs_ioq_poll(ioq, 100), 0);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_uint_eq(c.calls, 0);
	ck_assert_int_eq(a.status, 0);
	ck_assert_int_eq(b.status, 0);
	ck_assert_uint_lt(a.order, b.order);
	nvmefs_ioq_buf_put(ioq, buf);
	nvmefs_ioq_buf_put(ioq, buf2);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* A callback that submits again, as an I/O loop does. */
struct resubmit {
	struct nvmefs_ioq *ioq;
	void *buf;
	struct cb_rec *next;
	unsigned int calls;
	int ret;
};

static void on_io_resubmit(void *arg, int status)
{
	struct resubmit *r = arg;

	ck_assert_int_eq(status, 0);
	r->calls++;
	r->ret = nvmefs_ioq_read(r->ioq, 1, 2000, 8, r->buf, on_io, r->next);
}

START_TEST(test_pending_not_overtaken_from_callback)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, c = { 0 };
	struct resubmit x = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *sx, *ra[5];
	unsigned int k, i;
	uint8_t *buf;

	/* 3 slots: X takes one, A (5 commands) two, and 3 of A wait.  When X
	 * completes, its slot is free the moment its callback submits C: C
	 * must not take it from A. */
	create_ioqs(ctrl, 1, 4, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	x.ioq = ioq;
	x.buf = buf + 65536;
	x.next = &c;
	x.ret = 1;
	sx = fake_expect_rw(1, nvme_cmd_read, 1, 1000, 8, 4096);
	sx->hold = true;
	for (k = 0; k < 5; k++) {
		ra[k] = fake_expect_rw(1, nvme_cmd_read, 1, k * 16, 16, 8192);
		ra[k]->hold = true;
	}
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 1000, 8, buf + 65536, on_io_resubmit, &x), 0);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 80, buf, on_io, &a), 0);
	ck_assert_uint_eq(ra[1]->used, 1);
	ck_assert_uint_eq(ra[2]->used, 0);

	ck_assert_uint_eq(fake_release(1), 1);		/* X */
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 1);
	ck_assert_uint_eq(x.calls, 1);
	ck_assert_int_eq(x.ret, -EAGAIN);
	/* X's slot went to A. */
	ck_assert_uint_eq(ra[2]->used, 1);

	/* A's last two go out as its first three come back. */
	for (i = 0; i < 20 && !a.calls; i++) {
		fake_release(FAKE_UNLIMITED);
		ck_assert_int_ge(nvmefs_ioq_poll(ioq, 100), 0);
	}
	ck_assert_uint_eq(ra[4]->used, 1);
	ck_assert_uint_eq(fake_held(), 0);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(c.calls, 0);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * The controller's thread reconnects in place, and the read the outage
 * held is sent again and completes: the caller sees no error.
 */
START_TEST(test_outage_reconnect_requeues)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_reconnect(32, &id);
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(again->posted, 1);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), 0);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_int_eq(st.state, NVMEFS_CTRL_LIVE);
	ck_assert_uint_eq(st.reconnects, 1);
	ck_assert_uint_eq(st.attempts, 1);
	ck_assert_int_eq(st.error, -ECONNRESET);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* What the write before a flush had done when the flush reached the target. */
struct flush_watch {
	const struct cb_rec *write;
	int write_calls;		/* -1: the flush never went out */
};

static void flush_sent(struct fake_step *s, void *arg)
{
	struct flush_watch *fw = arg;

	(void)s;
	fw->write_calls = (int)fw->write->calls;
}

/*
 * A flush completes only once every write submitted before it on the queue
 * is durable: the target would answer the flush first, and the write with a
 * retryable status, resent after the flush would have completed.  The flush
 * goes out once the write has completed, after its retry.
 */
START_TEST(test_flush_waits_for_earlier_writes)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec w = { 0 }, f = { 0 };
	struct flush_watch fw = { .write = &w, .write_calls = -1 };
	struct nvmefs_ioq *q;
	struct fake_step *first, *again, *flush;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	first = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	fake_step_status(first, NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY, false);
	first->hold = true;
	again = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	/* Whenever it comes: at once (answered before the write), or after. */
	flush = fake_expect_io(1, nvme_cmd_flush, 1);
	fake_float(flush);
	flush->on_match = flush_sent;
	flush->on_match_arg = &fw;
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &w), 0);
	ck_assert_int_eq(nvmefs_ioq_flush(q, 1, on_io, &f), 0);
	for (int i = 0; i < 5; i++)
		nvmefs_ioq_poll(q, 20);
	ck_assert_msg(f.calls == 0, "the flush completed before the write before it");
	ck_assert_uint_eq(fake_release(1), 1);
	poll_until(q, &f, 2000);
	ck_assert_uint_eq(w.calls, 1);
	ck_assert_int_eq(w.status, 0);
	ck_assert_int_eq(f.status, 0);
	ck_assert_uint_lt(w.order, f.order);
	ck_assert_uint_eq(again->posted, 1);
	ck_assert_msg(fw.write_calls == 1, "the flush went out before the write had completed");
	/* With nothing written before it, a flush goes out at once. */
	f.calls = 0;
	fake_expect_io(1, nvme_cmd_flush, 1);
	ck_assert_int_eq(nvmefs_ioq_flush(q, 1, on_io, &f), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 1000), 1);
	ck_assert_uint_eq(f.calls, 1);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static Suite *io_cmd_suite(void)
{
	Suite *s = suite_create("io_cmd");
	TCase *tc;

	tc = tcase_create("split");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_read_split_mdts);
	tcase_add_test(tc, test_mdts_large_pages);
	tcase_add_test(tc, test_read_split_error_stops);
	tcase_add_test(tc, test_read_split_error_waits_for_all);
	tcase_add_test(tc, test_write_split_4k_blocks);
	tcase_add_test(tc, test_write_zeroes_split);
	tcase_add_test(tc, test_deallocate);
	tcase_add_test(tc, test_ranges_past_32_bits);
	tcase_add_test(tc, test_punch);
	tcase_add_test(tc, test_flush);
	tcase_add_test(tc, test_flush_waits_for_earlier_writes);
	tcase_add_test(tc, test_slots_exhausted);
	tcase_add_test(tc, test_pending_not_overtaken_from_callback);
	suite_add_tcase(s, tc);

	tc = tcase_create("outage");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_outage_reconnect_requeues);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_cmd_suite());
}
