/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of rdma_sgl.c's nvmefs_rdma_map_data(): how a command's data
 * is described (null, in-capsule, keyed SGL), alone and through the whole
 * I/O path over the scripted transport.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_fixture.h"

#define SLOT_LKEY 0x0000aa11u
#define SLOT_RKEY 0x0000bb22u

static struct nvmefs_queue map_q = { .qid = 1 };
static union nvmefs_cmd map_cmd;
static uint8_t map_buf[8192];

/* A request as io.c fills it, in a capsule full of garbage: map_data must
 * write every byte of the SGL.  Flags 0xa5: PSDT 10b, FUSE 01b, bit 5. */
static void map_req(struct nvmefs_req *req, uint32_t len, enum nvmefs_dir dir,
		    struct nvmefs_mr *mr, struct nvmefs_rdma_sge *sge)
{
	memset(req, 0, sizeof(*req));
	memset(&map_cmd, 0xa5, sizeof(map_cmd));
	memset(sge, 0xa5, sizeof(*sge));
	req->q = &map_q;
	req->cmd = &map_cmd;
	req->data = len ? map_buf : NULL;
	req->len = len;
	req->dir = (uint8_t)dir;
	req->mr = mr;
}

START_TEST(test_map_no_data)
{
	struct nvmefs_req req;
	struct nvmefs_rdma_sge sge;

	map_req(&req, 0, NVMEFS_DIR_NONE, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_null_sgl(&map_cmd.sqe.dptr.sgl);
	/* PSDT 01b, the rest of the flags kept. */
	ck_assert_uint_eq(map_cmd.sqe.flags, 0x65);
}
END_TEST

START_TEST(test_map_in_capsule)
{
	struct nvmefs_req req;
	struct nvmefs_rdma_sge sge;

	map_req(&req, 4096, NVMEFS_DIR_TO_CTRL, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 1);
	assert_inline_sgl(&map_cmd.sqe.dptr.sgl, 4096);
	ck_assert_uint_eq(map_cmd.sqe.flags, 0x65);
	ck_assert_uint_eq(sge.addr, (uintptr_t)map_buf);
	ck_assert_uint_eq(sge.length, 4096);
	ck_assert_uint_eq(sge.lkey, SLOT_LKEY);
}
END_TEST

START_TEST(test_map_keyed)
{
	struct nvmefs_req req;
	struct nvmefs_rdma_sge sge;

	/* One byte more than fits in the capsule. */
	map_req(&req, 4097, NVMEFS_DIR_TO_CTRL, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_keyed(&map_cmd.sqe.dptr.sgl, map_buf, 4097, SLOT_RKEY);
	ck_assert_uint_eq(map_cmd.sqe.flags, 0x65);

	/* Reads never ride in the capsule, however small. */
	map_req(&req, 512, NVMEFS_DIR_FROM_CTRL, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_keyed(&map_cmd.sqe.dptr.sgl, map_buf, 512, SLOT_RKEY);

	/* The admin queue (inline size 0): a small write is keyed. */
	map_req(&req, 16, NVMEFS_DIR_TO_CTRL, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 0, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_keyed(&map_cmd.sqe.dptr.sgl, map_buf, 16, SLOT_RKEY);
	ck_assert_uint_eq(map_cmd.sqe.flags, 0x65);
}
END_TEST

START_TEST(test_map_mr_keys)
{
	struct nvmefs_mr mr = { .addr = map_buf, .len = sizeof(map_buf), .lkey = 0x1234,
				.rkey = 0x56789abc };
	struct nvmefs_req req;
	struct nvmefs_rdma_sge sge;

	map_req(&req, 512, NVMEFS_DIR_TO_CTRL, &mr, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 1);
	assert_inline_sgl(&map_cmd.sqe.dptr.sgl, 512);
	ck_assert_uint_eq(sge.lkey, 0x1234);
	ck_assert_uint_eq(sge.addr, (uintptr_t)map_buf);
	ck_assert_uint_eq(sge.length, 512);

	map_req(&req, 8192, NVMEFS_DIR_TO_CTRL, &mr, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_keyed(&map_cmd.sqe.dptr.sgl, map_buf, 8192, 0x56789abc);

	map_req(&req, 8192, NVMEFS_DIR_FROM_CTRL, &mr, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_keyed(&map_cmd.sqe.dptr.sgl, map_buf, 8192, 0x56789abc);
}
END_TEST

START_TEST(test_map_too_long)
{
	struct nvmefs_req req;
	struct nvmefs_rdma_sge sge;

	/* A keyed SGL's length has 24 bits. */
	map_req(&req, 1u << 24, NVMEFS_DIR_FROM_CTRL, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), -EINVAL);
	assert_msg_has("queue 1: 16777216 bytes do not fit one keyed SGL");
	map_req(&req, (1u << 24) - 1, NVMEFS_DIR_FROM_CTRL, NULL, &sge);
	ck_assert_int_eq(nvmefs_rdma_map_data(&req, 4096, SLOT_LKEY, SLOT_RKEY, NULL, &sge), 0);
	assert_keyed(&map_cmd.sqe.dptr.sgl, map_buf, (1u << 24) - 1, SLOT_RKEY);
}
END_TEST

/* The same decisions through the whole I/O path, on a controller that
 * takes 4096 bytes of in-capsule data (IOCCSZ 260 16-byte units). */
START_TEST(test_in_capsule_path)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 260, 0);
	struct cb_rec rec = { 0 };
	struct fake_step *d, *w1, *w2, *r;
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	uint8_t *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ck_assert_uint_eq(ctrl->inline_size, 4096);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 16384, 0x5c, &mr);

	d = fake_expect_io(1, nvme_cmd_dsm, 1);
	w1 = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	w2 = fake_expect_rw(1, nvme_cmd_write, 1, 0, 9, 4608);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 1, 512);
	ck_assert_int_eq(nvmefs_ioq_deallocate(ioq, 1, 0, 8, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 8, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 9, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 1, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 4);
	ck_assert_uint_eq(rec.calls, 4);
	ck_assert_int_eq(rec.status, 0);

	/* The range from its slot, with the slot's lkey. */
	assert_inline_sgl(&d->seen_sgl, 16);
	ck_assert_int_eq(d->seen_nr_sge, 1);
	ck_assert_uint_eq(d->seen_sge_addr, (uintptr_t)d->seen_data);
	ck_assert_uint_eq(d->seen_sge_len, 16);
	ck_assert_uint_eq(d->seen_sge_lkey, FAKE_SLOT_LKEY);
	/* The caller's 4096 bytes, with the registration's lkey. */
	assert_inline_sgl(&w1->seen_sgl, 4096);
	ck_assert_int_eq(w1->seen_nr_sge, 1);
	ck_assert_uint_eq(w1->seen_sge_addr, (uintptr_t)buf);
	ck_assert_uint_eq(w1->seen_sge_lkey, mr->lkey);
	/* More than fits, and any read: keyed, the registration's rkey. */
	assert_keyed(&w2->seen_sgl, buf, 4608, mr->rkey);
	ck_assert_int_eq(w2->seen_nr_sge, 0);
	assert_keyed(&r->seen_sgl, buf, 512, mr->rkey);
	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static Suite *rdma_sgl_suite(void)
{
	Suite *s = suite_create("rdma_sgl");
	TCase *tc;

	tc = tcase_create("map_data");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_map_no_data);
	tcase_add_test(tc, test_map_in_capsule);
	tcase_add_test(tc, test_map_keyed);
	tcase_add_test(tc, test_map_mr_keys);
	tcase_add_test(tc, test_map_too_long);
	tcase_add_test(tc, test_in_capsule_path);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(rdma_sgl_suite());
}
