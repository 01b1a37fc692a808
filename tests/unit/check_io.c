/*
 * Unit tests of io.c against the scripted transport, and of rdma.c's
 * nvmefs_rdma_map_data(): creating I/O queues (the exact admin sequence,
 * each queue's Connect, the limits), splitting I/O at MDTS and the 16-bit
 * block count, Write Zeroes, Deallocate and Flush as the controller sees
 * them, running out of request slots, registered memory and the buffer
 * pool, how a command's data is described (null, in-capsule, keyed SGL),
 * and failure: a command timeout or a failed keep-alive fails the
 * controller and every queue's outstanding I/O.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <nvme/util.h>

#include "arm_contract.h"
#include "fake_transport.h"
#include "test_util.h"
#include "rdma_sgl.h"
#include "ctrl.h"
#include "ctrl_state.h"
#include "ctrl_types.h"
#include "ioq.h"
#include "mr.h"
#include "transport_ops.h"

#define TRADDR "192.0.2.20"
#define SUBNQN "nqn.2024-01.io.example:io"
#define CNTLID 0x0021
/* CAP by hand from the NVMe base spec: MQES 1023 (0's based, bits 15:0),
 * TO 1 (bits 31:24), MPSMIN 0 (4 KiB). */
#define CAP_MQES_1023 0x00000000010003ffULL
/* MQES 15: queues of at most 16 entries. */
#define CAP_MQES_15 0x000000000100000fULL
/* MDTS in units of 4 KiB (MPSMIN 0): 4096 << 8 = 1 MiB, 4096 << 1 = 8 KiB. */
#define MDTS_1M 8
#define MDTS_8K 1
#define MIB (1u << 20)
/* A starting block above 32 bits, so CDW11 is not 0. */
#define SLBA_HI 0x100000008ULL

static const struct fake_ns default_ns[] = { { .nsid = 1, .nsze = 1ULL << 33, .lba_shift = 9 } };

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A keyed data block, byte by byte: address 0..7, 24-bit length 8..10,
 * key 11..14, type 4 subtype 0 in byte 15. */
#define assert_keyed(sgl, addr, len, key) assert_keyed_at(__LINE__, (sgl), (addr), (len), (key))
static void assert_keyed_at(int line, const struct nvmefs_sgl *sgl, const void *addr,
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

/* The null descriptor of a command without data: a keyed block of zeros. */
#define assert_null_sgl(sgl) assert_null_sgl_at(__LINE__, (sgl))
static void assert_null_sgl_at(int line, const struct nvmefs_sgl *sgl)
{
	static const uint8_t zero[15];
	const uint8_t *b = (const uint8_t *)sgl;

	ck_assert_msg(b[15] == 0x40, "line %d: SGL identifier %#x, want 0x40", line, b[15]);
	ck_assert_msg(memcmp(b, zero, 15) == 0, "line %d: the null SGL has non-zero bytes", line);
}

/* In-capsule data: a data block (type 0) with subtype 1 (offset), at offset
 * 0 of the capsule's data, its 32-bit length in bytes 8..11. */
#define assert_inline_sgl(sgl, len) assert_inline_sgl_at(__LINE__, (sgl), (len))
static void assert_inline_sgl_at(int line, const struct nvmefs_sgl *sgl, uint32_t len)
{
	const uint8_t *b = (const uint8_t *)sgl;

	ck_assert_msg(b[15] == 0x01, "line %d: SGL identifier %#x, want 0x01", line, b[15]);
	ck_assert_msg(le64_at(b) == 0, "line %d: in-capsule offset %#llx, want 0", line,
		      (unsigned long long)le64_at(b));
	ck_assert_msg(le32_at(b + 8) == len, "line %d: SGL length %u, want %u", line,
		      le32_at(b + 8), len);
	ck_assert_msg(!b[12] && !b[13] && !b[14], "line %d: reserved SGL bytes set", line);
}

/* Completions: how often, with what, in which order. */
struct cb_rec {
	unsigned int calls;
	int status;
	unsigned int order;
};
static unsigned int cb_seq;

static void on_io(void *arg, int status)
{
	struct cb_rec *r = arg;

	r->calls++;
	r->status = status;
	r->order = ++cb_seq;
}

/* Connect to an NVM subsystem of version @vs: Keep Alive only when
 * @kato_ms is not 0. */
static struct nvmefs_ctrl *connect_io_vs(uint8_t mdts, uint64_t cap, uint32_t ioccsz,
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

/* The same, NVMe 1.4: no Identify CNS 06h. */
static struct nvmefs_ctrl *connect_io(uint8_t mdts, uint64_t cap, uint32_t ioccsz,
				      uint32_t kato_ms)
{
	return connect_io_vs(mdts, cap, ioccsz, kato_ms, 0x10400);
}

/* @nr queues of @size entries on namespace 1 (512-byte blocks). */
static void create_ioqs(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int size,
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

/* Disconnect with @nr I/O queues; a failed controller is not shut down. */
static void disconnect_io(struct nvmefs_ctrl *ctrl, unsigned int nr, bool failed)
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

/* Page-aligned memory, filled with @fill, registered with @ctrl. */
static uint8_t *reg_buf(struct nvmefs_ctrl *ctrl, size_t len, uint8_t fill,
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

/* ------------------------------------------------------------------------ */
/* Creating I/O queues                                                      */
/* ------------------------------------------------------------------------ */

START_TEST(test_create_sequence)
{
	static const uint8_t hostid[16] = {
		0x5d, 0x8d, 0x1c, 0x3a, 0x1d, 0x55, 0x4f, 0x0e,
		0x9b, 0x6c, 0x2f, 0x9f, 0x6f, 0x2b, 0x7c, 0x11,
	};
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	uint32_t list[NVMEFS_NS_LIST_LEN] = { 0 };
	struct fake_step *nq, *create[2], *conn[2];
	struct nvmefs_ns_info info;
	struct nvmefs_io_opts o;
	struct nvme_id_ns id;
	const uint32_t *nsids;
	unsigned int i, regs = fake_stats.mr_regs;

	/* Set Features (0x09), FID 7 (Number of Queues), NSQR = NCQR = 1 (0's
	 * based: 2 queues); the controller grants 4 of each. */
	nq = fake_expect_cmd(nvme_admin_set_features);
	nq->match |= FAKE_M_QID | FAKE_M_NSID | FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_LEN;
	nq->cdw10 = 0x07;
	nq->cdw11 = 0x00010001;
	nq->dw0 = 0x00030003;
	/* Identify CNS 2 (active namespace list), then CNS 0 for each NSID. */
	list[0] = nvmefs_cpu_to_le32(1);
	list[1] = nvmefs_cpu_to_le32(3);
	fake_expect_identify(0x02, 0, list, sizeof(list));
	fake_id_ns(&id, 0x100000, 9);
	fake_expect_identify(0x00, 1, &id, sizeof(id));
	/* CNS 3, the identification descriptors (for the UUID). */
	fake_expect_identify(0x03, 1, NULL, 0);
	fake_id_ns(&id, 0x2000, 12);
	fake_expect_identify(0x00, 3, &id, sizeof(id));
	fake_expect_identify(0x03, 3, NULL, 0);
	for (i = 0; i < 2; i++) {
		create[i] = fake_expect_create(NULL, NULL);
		create[i]->qid = (uint16_t)(i + 1);
		/* Connect: recfmt 0 | qid << 16, sqsize 15 | cattr 0, kato 0. */
		conn[i] = fake_expect_connect(15, 0, 0);
		conn[i]->match |= FAKE_M_QID;
		conn[i]->qid = (uint16_t)(i + 1);
		conn[i]->cdw10 = (i + 1) << 16;
	}

	nvmefs_io_opts_init(&o);
	o.nr_queues = 2;
	o.queue_size = 16;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);

	ck_assert_uint_eq(nq->seen_qid, 0);
	assert_null_sgl(&nq->seen_sgl);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 2);
	ck_assert_ptr_nonnull(nvmefs_ctrl_io_queue(ctrl, 0));
	ck_assert_ptr_nonnull(nvmefs_ctrl_io_queue(ctrl, 1));
	ck_assert_ptr_ne(nvmefs_ctrl_io_queue(ctrl, 0), nvmefs_ctrl_io_queue(ctrl, 1));
	ck_assert_ptr_null(nvmefs_ctrl_io_queue(ctrl, 2));
	for (i = 0; i < 2; i++) {
		const uint8_t *d = conn[i]->captured;

		ck_assert_uint_eq(create[i]->seen_params.qid, i + 1);
		ck_assert_uint_eq(create[i]->seen_params.size, 16);
		ck_assert_uint_eq(create[i]->seen_params.cntlid, CNTLID);
		ck_assert_uint_eq(create[i]->seen_params.data_slot_size, 1024);
		ck_assert_uint_eq(conn[i]->seen_qid, i + 1);
		/* The data: host ID, the admin queue's cntlid, SUBNQN, HOSTNQN. */
		ck_assert_uint_eq(conn[i]->captured_len, 1024);
		ck_assert_mem_eq(d, hostid, 16);
		ck_assert_uint_eq(d[16] | d[17] << 8, CNTLID);
		ck_assert_str_eq((const char *)d + 256, SUBNQN);
		ck_assert_str_eq((const char *)d + 512, FAKE_HOSTNQN);
	}
	/* One registered pool per queue: 15 buffers of 128 KiB by default. */
	ck_assert_uint_eq(fake_stats.mr_regs - regs, 2);
	ck_assert_uint_eq(nvmefs_ioq_buf_size(nvmefs_ctrl_io_queue(ctrl, 0)), 128 * 1024);
	ck_assert_uint_eq(ctrl->max_xfer, MIB);
	ck_assert_uint_eq(ctrl->inline_size, 0);

	ck_assert_uint_eq(nvmefs_ctrl_ns_list(ctrl, &nsids), 2);
	ck_assert_uint_eq(nsids[0], 1);
	ck_assert_uint_eq(nsids[1], 3);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), 0);
	ck_assert_uint_eq(info.nsid, 1);
	ck_assert_uint_eq(info.nlb, 0x100000);
	ck_assert_uint_eq(info.lba_size, 512);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 3, &info), 0);
	ck_assert_uint_eq(info.nlb, 0x2000);
	ck_assert_uint_eq(info.lba_size, 4096);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 2, &info), -ENOENT);

	/* Deleting destroys both queues and their pools. */
	fake_expect_destroy();
	fake_expect_destroy();
	nvmefs_ctrl_delete_io_queues(ctrl);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);
	ck_assert_uint_eq(fake_stats.mr_deregs, fake_stats.mr_regs);
	ck_assert_uint_eq(nvmefs_ctrl_ns_list(ctrl, &nsids), 0);
	disconnect_io(ctrl, 0, false);
}
END_TEST

START_TEST(test_create_granted_fewer)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;

	/* Asked for 4; the controller grants 2 submission and 4 completion
	 * queues: the smaller count is what can be used. */
	fake_expect_set_nr_queues(4, 0x00030001);
	nvmefs_io_opts_init(&o);
	o.nr_queues = 4;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -ENOSPC);
	assert_msg_has("grants only 2 I/O queues, fewer than the 4 asked for: ask for at most 2 "
		       "(-i/--nr-io-queues)");
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);
	ck_assert_uint_eq(fake_stats.creates, 1);	/* the admin queue */

	/* The controller refuses Set Features. */
	fake_step_status(fake_expect_set_nr_queues(2, 0), 0, 0x02, true);
	o.nr_queues = 2;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EIO);
	assert_msg_has("asking " SUBNQN " for 2 I/O queues failed");

	/* Nothing was left behind: asking for what it grants works. */
	create_ioqs(ctrl, 2, 128, 0);
	disconnect_io(ctrl, 2, false);
}
END_TEST

/* With take_fewer, what the controller grants is what is created, and
 * nvmefs_ctrl_io_queue_count() says how many. */
START_TEST(test_create_take_fewer)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;

	nvmefs_io_opts_init(&o);
	o.nr_queues = 4;
	o.take_fewer = 1;
	fake_script_io_queues_granted(4, 2, NVMEFS_DEFAULT_IO_QUEUE_SIZE, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 2);
	disconnect_io(ctrl, 2, false);
}
END_TEST

/*
 * Asking first, as Linux does: Set Features Number of Queues alone, no
 * queue created, so a caller sizes each queue's share for what is granted
 * and creates those once (perf did create, delete and create again, and
 * the target could answer the second Connect of a qid it had not yet let
 * go of with Command Sequence Error).
 */
START_TEST(test_ask_io_queues)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	unsigned int creates = fake_stats.creates, granted = 0, submits;

	/* 2 submission and 4 completion queues: 2 can be used. */
	fake_expect_set_nr_queues(4, 0x00030001);
	ck_assert_msg(nvmefs_ctrl_ask_io_queues(ctrl, 4, &granted) == 0, "ask: %s", nvmefs_errmsg());
	ck_assert_uint_eq(granted, 2);
	/* More than asked for (nvmet grants its qid_max whatever is asked):
	 * what was asked for. */
	fake_expect_set_nr_queues(4, 0x007f007f);
	ck_assert_int_eq(nvmefs_ctrl_ask_io_queues(ctrl, 4, &granted), 0);
	ck_assert_uint_eq(granted, 4);
	ck_assert_uint_eq(fake_stats.creates, creates);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);

	fake_step_status(fake_expect_set_nr_queues(2, 0), 0, 0x02, true);
	ck_assert_int_eq(nvmefs_ctrl_ask_io_queues(ctrl, 2, &granted), -EIO);
	assert_msg_has("asking " SUBNQN " for 2 I/O queues failed");

	/* Refused before any command: out of range, or with queues already
	 * (the count is set before the first queue is created). */
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ctrl_ask_io_queues(ctrl, 0, &granted), -EINVAL);
	ck_assert_int_eq(nvmefs_ctrl_ask_io_queues(ctrl, 257, &granted), -EINVAL);
	assert_msg_has("257 I/O queues: ask for 1 to 256");
	ck_assert_uint_eq(fake_stats.submits, submits);
	create_ioqs(ctrl, 1, 32, 0);
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ctrl_ask_io_queues(ctrl, 2, &granted), -EBUSY);
	assert_msg_has("already has 1 I/O queues");
	ck_assert_uint_eq(fake_stats.submits, submits);
	disconnect_io(ctrl, 1, false);

	ctrl = fake_connect(TRADDR, NULL, 0);
	ck_assert_int_eq(nvmefs_ctrl_ask_io_queues(ctrl, 1, &granted), -EINVAL);
	assert_msg_has("discovery controller");
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/*
 * NVMEFS_IO_QUEUE_SIZE_AUTO: entries for every pool buffer's I/O whole, as
 * many commands each as the controller's largest transfer (MDTS) cuts it
 * into, plus the one a full queue keeps free; within CAP.MQES.  The size
 * reaches the target as Connect's SQSIZE (checked by the script).
 */
START_TEST(test_create_auto_queue_size)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;

	nvmefs_io_opts_init(&o);
	o.nr_queues = 1;
	o.queue_size = NVMEFS_IO_QUEUE_SIZE_AUTO;
	o.bufs_per_queue = 8;
	o.buf_size = 4096;
	fake_script_io_queues(1, 9, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	fake_expect_destroy();
	nvmefs_ctrl_delete_io_queues(ctrl);

	/* 2 MiB buffers at 1 MiB a command: two entries each. */
	o.buf_size = 2u << 20;
	fake_script_io_queues(1, 17, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	fake_expect_destroy();
	nvmefs_ctrl_delete_io_queues(ctrl);

	/* More than CAP.MQES allows: MQES. */
	o.buf_size = 4096;
	o.bufs_per_queue = 2000;
	fake_script_io_queues(1, 1024, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* A namespace whose Identify data cannot be right: block sizes out of 512 B
 * to 64 KiB (LBADS 41 once looked like 512: x86 masks the shift), a format
 * index past NLBAF, a capacity past 2^64 bytes.  Listed as unusable, with
 * the reason, and never used; the queues come up for the others. */
START_TEST(test_create_bad_lba_format)
{
	static const struct { uint8_t ds, flbas, nlbaf; uint64_t nsze; const char *msg; } bad[] = {
		{ 41, 0, 0, 1 << 20, "LBADS 41" },
		{ 8, 0, 0, 1 << 20, "LBADS 8" },
		{ 17, 0, 0, 1 << 20, "LBADS 17" },
		{ 9, 1, 0, 1 << 20, "format 1" },
		{ 12, 0, 0, 1ull << 60, "more than 2^64 bytes" },
	};
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	uint32_t list[NVMEFS_NS_LIST_LEN] = { 0 };
	struct nvmefs_ns_info info;
	struct cb_rec rec = { 0 };
	struct nvmefs_io_opts o;
	struct nvme_id_ns id;
	struct fake_step *s;

	nvmefs_io_opts_init(&o);
	list[0] = nvmefs_cpu_to_le32(1);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake_expect_set_nr_queues(1, 0);
		fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list));
		fake_id_ns(&id, bad[i].nsze, bad[i].ds);
		id.flbas = bad[i].flbas;
		id.nlbaf = bad[i].nlbaf;
		fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, &id, sizeof(id));
		fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0);
		s = fake_expect_create(NULL, NULL);
		s->qid = 1;
		fake_expect_io_connect(1, (uint16_t)(o.queue_size - 1), CNTLID);
		ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
		ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), -EPROTO);
		assert_msg_has("cannot be used");
		assert_msg_has(bad[i].msg);
		ck_assert_int_eq(nvmefs_ioq_write_zeroes(nvmefs_ctrl_io_queue(ctrl, 0), 1, 0, 8,
							 on_io, &rec), -ENODEV);
		assert_msg_has(bad[i].msg);
		ck_assert_uint_eq(rec.calls, 0);
		fake_expect_destroy();
		nvmefs_ctrl_delete_io_queues(ctrl);
	}
	disconnect_io(ctrl, 0, false);
}
END_TEST

/*
 * More than one page of active NSIDs is walked (CNS 02h from the last one
 * seen), and a list that stops increasing (a duplicate) is believed no
 * further: before, only the first 1024 were used.
 */
START_TEST(test_namespace_pages)
{
	static uint32_t page1[NVMEFS_NS_LIST_LEN], page2[NVMEFS_NS_LIST_LEN];
	static const uint32_t tail[] = { 1025, 1026, 1026, 1030 };
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	const uint32_t *nsids;
	struct nvmefs_ns_info info;
	struct nvmefs_io_opts o;
	struct nvme_id_ns id;
	struct fake_step *s;

	nvmefs_io_opts_init(&o);
	for (uint32_t i = 0; i < NVMEFS_NS_LIST_LEN; i++)
		page1[i] = nvmefs_cpu_to_le32(i + 1);
	for (uint32_t i = 0; i < 4; i++)
		page2[i] = nvmefs_cpu_to_le32(tail[i]);
	fake_expect_set_nr_queues(1, 0);
	fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, page1, sizeof(page1));
	fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 1024, page2, sizeof(page2));
	fake_id_ns(&id, 1 << 20, 9);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, 0, &id, sizeof(id));
	s->match &= ~FAKE_M_NSID;
	fake_float(s);
	fake_repeat(s, 1026, 1026);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, NULL, 0);
	s->match &= ~FAKE_M_NSID;
	fake_float(s);
	fake_repeat(s, 1026, 1026);
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	fake_expect_io_connect(1, (uint16_t)(o.queue_size - 1), CNTLID);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ck_assert_uint_eq(nvmefs_ctrl_ns_list(ctrl, &nsids), 1026);
	ck_assert_uint_eq(nsids[1023], 1024);
	ck_assert_uint_eq(nsids[1025], 1026);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1026, &info), 0);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1030, &info), -ENOENT);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* One namespace that cannot be identified is reported and skipped; the
 * others, and the queues, come up (before, it failed them all). */
START_TEST(test_namespace_identify_fails)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	uint32_t list[NVMEFS_NS_LIST_LEN] = { 0 };
	struct nvmefs_ns_info info;
	struct nvmefs_io_opts o;
	struct nvme_id_ns id;
	struct fake_step *s;

	nvmefs_io_opts_init(&o);
	for (uint32_t i = 0; i < 3; i++)
		list[i] = nvmefs_cpu_to_le32(i + 1);
	fake_expect_set_nr_queues(1, 0);
	fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list));
	fake_id_ns(&id, 1 << 20, 9);
	for (uint32_t nsid = 1; nsid <= 3; nsid++) {
		s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, nsid, &id, sizeof(id));
		if (nsid == 2) {
			fake_step_status(s, 0, 0x06, true);	/* Internal Error */
			continue;
		}
		fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, nsid, NULL, 0);
	}
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	fake_expect_io_connect(1, (uint16_t)(o.queue_size - 1), CNTLID);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), 0);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 3, &info), 0);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 2, &info), -EPROTO);
	assert_msg_has("namespace 2 of " SUBNQN " cannot be used: Identify Namespace 2");
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_create_bad_opts)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_15, 0, 0);
	unsigned int submits = fake_stats.submits;
	struct nvmefs_io_opts o;

	/* Refused before any command: the script has none to match. */
	nvmefs_io_opts_init(&o);
	o.queue_size = 17;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	assert_msg_has("an I/O queue of 17 entries: " SUBNQN " takes 2 to 16 (CAP.MQES)");
	o.queue_size = 1;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	o.queue_size = 16;
	o.nr_queues = 0;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	o.nr_queues = 257;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	o.nr_queues = 1;
	o.buf_size = 0;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	/* An I/O timeout past what the deadlines can hold. */
	nvmefs_io_opts_init(&o);
	o.queue_size = 16;
	o.timeout_ms = 3000000000u;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	assert_msg_has("3000000000 ms");
	ck_assert_uint_eq(fake_stats.submits, submits);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);

	/* CAP.MQES + 1 entries is the most, and allowed. */
	create_ioqs(ctrl, 1, 16, 0);
	disconnect_io(ctrl, 1, false);

	/* A discovery controller has no I/O queues. */
	ctrl = fake_connect(TRADDR, NULL, 0);
	nvmefs_io_opts_init(&o);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EINVAL);
	assert_msg_has("discovery controller");
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

START_TEST(test_create_twice_and_again)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	unsigned int submits;
	struct nvmefs_io_opts o;
	struct cb_rec rec = { 0 };
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	submits = fake_stats.submits;
	nvmefs_io_opts_init(&o);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EBUSY);
	assert_msg_has("already has 1 I/O queues");
	ck_assert_uint_eq(fake_stats.submits, submits);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 1);

	fake_expect_destroy();
	nvmefs_ctrl_delete_io_queues(ctrl);
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);
	ck_assert_uint_eq(fake_stats.mr_regs, fake_stats.mr_deregs);

	/* Created again, with more queues, and the second one works. */
	create_ioqs(ctrl, 2, 32, 0);
	buf = nvmefs_ioq_buf_get(nvmefs_ctrl_io_queue(ctrl, 1));
	ck_assert_ptr_nonnull(buf);
	s = fake_expect_rw(2, nvme_cmd_read, 1, 7, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(nvmefs_ctrl_io_queue(ctrl, 1), 1, 7, 8, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(nvmefs_ctrl_io_queue(ctrl, 1), 1000), 1);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_uint_eq(s->seen_qid, 2);
	nvmefs_ioq_buf_put(nvmefs_ctrl_io_queue(ctrl, 1), buf);
	disconnect_io(ctrl, 2, false);
}
END_TEST

/* Two queues of 32 entries asked for and granted, no namespace; queue 1
 * created and connected. */
static void script_first_of_two(void)
{
	struct fake_step *s;

	fake_expect_set_nr_queues(2, 0x00010001);
	fake_expect_identify(0x02, 0, NULL, 0);
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	fake_expect_io_connect(1, 31, CNTLID);
}

/* Queue 2's Connect, answered Command Sequence Error (status 0x0c, DNR,
 * as nvmet answers a qid still installed) @times times in a row, each on a
 * transport of its own that goes again; with @then_ok, the next one gets
 * through. */
static void script_qid2_held(unsigned int times, bool then_ok)
{
	struct fake_step *s;

	script_first_of_two();
	for (unsigned int i = 0; i < times; i++) {
		s = fake_expect_create(NULL, NULL);
		s->qid = 2;
		fake_step_status(fake_expect_io_connect(2, 31, CNTLID), NVME_SCT_GENERIC,
				 NVME_SC_CMD_SEQ_ERROR, true);
		fake_expect_destroy();
	}
	if (then_ok) {
		s = fake_expect_create(NULL, NULL);
		s->qid = 2;
		fake_expect_io_connect(2, 31, CNTLID);
	}
}

/*
 * Queues deleted and created again at once: Linux's target lets go of a
 * disconnected queue from a work item, and until then answers a Connect
 * for its qid with Command Sequence Error.  The Connect goes again after a
 * pause, on a new transport, until the qid is free.
 */
START_TEST(test_create_qid_still_held)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;

	create_ioqs(ctrl, 2, 32, 0);
	fake_expect_destroy();
	fake_expect_destroy();
	nvmefs_ctrl_delete_io_queues(ctrl);

	script_qid2_held(2, true);
	nvmefs_io_opts_init(&o);
	o.nr_queues = 2;
	o.queue_size = 32;
	ck_assert_msg(nvmefs_ctrl_create_io_queues(ctrl, &o) == 0, "create: %s", nvmefs_errmsg());
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 2);
	disconnect_io(ctrl, 2, false);
}
END_TEST

/* A qid the controller never lets go of: the Connect goes again for as
 * long as the Connect timeout (100 ms: at 0, 10, 30, 70 and 150 ms, the
 * pause doubling from 10 ms), then the creation fails saying why, with
 * nothing left behind. */
START_TEST(test_create_qid_held_for_good)
{
	struct fake_target t = {
		.cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400, .mdts = MDTS_1M, .io = true,
	};
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts o;

	fake_opts(&opts, TRADDR, 100);
	opts.subnqn = SUBNQN;
	opts.kato_ms = 0;
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	ck_assert_int_eq(nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl), 0);

	script_qid2_held(5, false);
	fake_expect_destroy();
	nvmefs_io_opts_init(&o);
	o.nr_queues = 2;
	o.queue_size = 32;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -EADDRINUSE);
	assert_msg_has("Connect of queue 2 to " SUBNQN " at " TRADDR ":4420 failed: the controller "
		       "still has a queue 2 (Command Sequence Error) 150 ms later");
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);
	ck_assert_uint_eq(fake_stats.mr_regs, fake_stats.mr_deregs);
	disconnect_io(ctrl, 0, false);
}
END_TEST

START_TEST(test_create_fails_midway)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;
	struct fake_step *s;

	/* Queue 2 cannot be created: queue 1, made already, goes again. */
	script_first_of_two();
	s = fake_expect_create(NULL, NULL);
	s->qid = 2;
	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "queue 2 refused (scripted)");
	fake_expect_destroy();
	nvmefs_io_opts_init(&o);
	o.nr_queues = 2;
	o.queue_size = 32;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -ECONNREFUSED);
	assert_msg_has("queue 2 refused");
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);
	ck_assert_uint_eq(fake_stats.mr_regs, 1);
	ck_assert_uint_eq(fake_stats.mr_deregs, 1);

	/* Registering the pool fails: the connected queue is destroyed. */
	fake_expect_set_nr_queues(1, 0);
	fake_expect_identify(0x02, 0, NULL, 0);
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	fake_expect_io_connect(1, 31, CNTLID);
	fake_expect_destroy();
	fake_mr_fail = -ENOMEM;
	o.nr_queues = 1;
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), -ENOMEM);
	assert_msg_has("registering");
	ck_assert_uint_eq(nvmefs_ctrl_io_queue_count(ctrl), 0);
	fake_mr_fail = 0;
	disconnect_io(ctrl, 0, false);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Splitting                                                                */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Running out of request slots                                             */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Registered memory and the pool                                           */
/* ------------------------------------------------------------------------ */

START_TEST(test_unregistered_buffer)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	unsigned int submits;
	uint8_t *plain, *reg;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	plain = malloc(8192);
	ck_assert_ptr_nonnull(plain);
	reg = reg_buf(ctrl, 8192, 0, &mr);
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 16, plain, on_io, &rec), -EFAULT);
	assert_msg_has("not in registered memory");
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 1, plain, on_io, &rec), -EFAULT);
	/* Half in, half out of a registration, at either end. */
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 16, reg + 512, on_io, &rec), -EFAULT);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 2, reg - 512, on_io, &rec), -EFAULT);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 0, reg, on_io, &rec), -EINVAL);
	ck_assert_uint_eq(fake_stats.submits, submits);
	ck_assert_uint_eq(rec.calls, 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	/* Exactly the registration is fine. */
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 16, 8192);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 16, reg, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	nvmefs_mr_dereg(mr);
	free(reg);
	free(plain);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_registered_keys)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_mr *mr1, *mr2, *bad = (struct nvmefs_mr *)0x1;
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *w, *r;
	uint8_t *b1, *b2, *pool;
	unsigned int regs, i;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	regs = fake_stats.mr_regs;
	b1 = reg_buf(ctrl, 65536, 0x11, &mr1);
	b2 = reg_buf(ctrl, 65536, 0x22, &mr2);
	ck_assert_uint_eq(fake_stats.mr_regs - regs, 2);
	ck_assert_uint_ne(mr1->rkey, mr2->rkey);
	for (i = 0; i < 4096; i++)
		b2[4096 + i] = (uint8_t)(i * 7);

	/* A write from the second registration carries its key. */
	w = fake_expect_rw(1, nvme_cmd_write, 1, 40, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 40, 8, b2 + 4096, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_ptr_eq(w->seen_mr, mr2);
	assert_keyed(&w->seen_sgl, b2 + 4096, 4096, mr2->rkey);
	ck_assert_uint_eq(w->captured_len, 4096);
	ck_assert_mem_eq(w->captured, b2 + 4096, 4096);

	/* A pool buffer: the pool's own registration and key. */
	pool = nvmefs_ioq_buf_get(ioq);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 1, 512);
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 1, pool, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 1000), 1);
	ck_assert_ptr_nonnull(r->seen_mr);
	ck_assert_ptr_ne(r->seen_mr, mr1);
	ck_assert_ptr_ne(r->seen_mr, mr2);
	ck_assert(pool >= r->seen_mr->addr && pool + 512 <= r->seen_mr->addr + r->seen_mr->len);
	assert_keyed(&r->seen_sgl, pool, 512, r->seen_mr->rkey);
	nvmefs_ioq_buf_put(ioq, pool);

	/* Deregistered (not the list's head), its memory is refused. */
	nvmefs_mr_dereg(mr1);
	ck_assert_uint_eq(fake_stats.mr_deregs, 1);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 1, b1, on_io, &rec), -EFAULT);
	nvmefs_mr_dereg(mr2);
	ck_assert_int_eq(nvmefs_ioq_write(ioq, 1, 0, 1, b2, on_io, &rec), -EFAULT);
	nvmefs_mr_dereg(NULL);

	/* Registration failures reach the caller. */
	fake_mr_fail = -ENOMEM;
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, b1, 4096, &bad), -ENOMEM);
	assert_msg_has("registering 4096 bytes failed");
	ck_assert_ptr_eq(bad, (struct nvmefs_mr *)0x1);
	fake_mr_fail = 0;
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, NULL, 4096, &bad), -EINVAL);
	ck_assert_int_eq(nvmefs_mr_reg(ctrl, b1, 0, &bad), -EINVAL);
	ck_assert_uint_eq(fake_stats.mr_regs - regs, 2);
	free(b1);
	free(b2);
	disconnect_io(ctrl, 1, false);
}
END_TEST

START_TEST(test_pool)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct nvmefs_io_opts o;
	struct nvmefs_ioq *ioq;
	uint8_t *b[5];
	unsigned int i, j;

	nvmefs_io_opts_init(&o);
	o.queue_size = 8;
	o.bufs_per_queue = 5;
	o.buf_size = 5000;
	fake_script_io_queues(1, 8, CNTLID, default_ns, 1);
	ck_assert_int_eq(nvmefs_ctrl_create_io_queues(ctrl, &o), 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	ck_assert_uint_eq(fake_stats.mr_regs, 1);
	/* Rounded up to whole pages. */
	ck_assert_uint_eq(nvmefs_ioq_buf_size(ioq), 8192);
	for (i = 0; i < 5; i++) {
		b[i] = nvmefs_ioq_buf_get(ioq);
		ck_assert_ptr_nonnull(b[i]);
		ck_assert_uint_eq((uintptr_t)b[i] % 4096, 0);
		for (j = 0; j < i; j++)
			ck_assert(b[i] + 8192 <= b[j] || b[j] + 8192 <= b[i]);
		memset(b[i], (int)i, 8192);	/* ASan: every byte is ours */
	}
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	nvmefs_ioq_buf_put(ioq, b[2]);
	ck_assert_ptr_eq(nvmefs_ioq_buf_get(ioq), b[2]);
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	nvmefs_ioq_buf_put(ioq, NULL);
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	for (i = 0; i < 5; i++)
		nvmefs_ioq_buf_put(ioq, b[i]);
	for (i = 0; i < 5; i++)
		ck_assert_ptr_nonnull(nvmefs_ioq_buf_get(ioq));
	ck_assert_ptr_null(nvmefs_ioq_buf_get(ioq));
	disconnect_io(ctrl, 1, false);
	ck_assert_uint_eq(fake_stats.mr_deregs, 1);
}
END_TEST

START_TEST(test_fd_arm)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct pollfd pfd;
	struct fake_step *r;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	pfd.fd = nvmefs_ioq_fd(ioq);
	pfd.events = POLLIN;
	ck_assert_int_ge(pfd.fd, 0);
	ck_assert_int_eq(nvmefs_ioq_arm(ioq), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);

	buf = nvmefs_ioq_buf_get(ioq);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	r->hold = true;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 8, buf, on_io, &rec), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 0);	/* the send completion */
	ck_assert_int_eq(nvmefs_ioq_arm(ioq), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	fake_release(1);
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(nvmefs_ioq_arm(ioq), 1);	/* poll first */
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), 1);
	ck_assert_uint_eq(rec.calls, 1);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* A read of blocks 0-7 on @ctrl's one new I/O queue, its response held back. */
static struct nvmefs_ioq *read_held(struct nvmefs_ctrl *ctrl, struct cb_rec *rec, void **buf)
{
	struct nvmefs_ioq *q;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	*buf = nvmefs_ioq_buf_get(q);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096)->hold = true;
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, *buf, on_io, rec), 0);
	return q;
}

/* The arm contract every transport keeps (arm_contract.h), here the fake's. */
static void answer_release(void *arg)
{
	(void)arg;
	ck_assert_uint_eq(fake_release(1), 1);
}

static bool rec_ended(void *arg)
{
	return ((const struct cb_rec *)arg)->calls == 1;
}

START_TEST(test_arm_contract)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec rec = { 0 };
	struct arm_contract c = { .answer = answer_release, .ended = rec_ended, .arg = &rec };
	struct nvmefs_ioq *ioq;
	void *buf;

	ioq = read_held(ctrl, &rec, &buf);
	c.q = &ioq->q;
	arm_contract_check(&c);
	ck_assert_int_eq(rec.status, 0);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* How data travels: nvmefs_rdma_map_data()                                 */
/* ------------------------------------------------------------------------ */

#define SLOT_LKEY 0x0000aa11u
#define SLOT_RKEY 0x0000bb22u

static struct nvmefs_queue map_q = { .qid = 1 };
static union nvmefs_cmd map_cmd;
static uint8_t map_buf[8192];

/* A request as io.c fills it, in a capsule full of garbage: map_data must
 * write every byte of the SGL.  Flags 0xa5: PSDT 10b, FUSE 01b, bit 5. */
static void map_req(struct nvmefs_req *req, uint32_t len, enum nvmefs_dir dir,
		    struct nvmefs_mr *mr, struct ibv_sge *sge)
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
	struct ibv_sge sge;

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
	struct ibv_sge sge;

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
	struct ibv_sge sge;

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
	struct ibv_sge sge;

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
	struct ibv_sge sge;

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

/* ------------------------------------------------------------------------ */
/* Failure                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(test_timeout_fails_ctrl)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct nvmefs_ioq *q1, *q2;
	struct fake_step *s;
	void *buf1, *buf2;
	int64_t start, took;

	create_ioqs(ctrl, 2, 32, 50);
	q1 = nvmefs_ctrl_io_queue(ctrl, 0);
	q2 = nvmefs_ctrl_io_queue(ctrl, 1);
	buf1 = nvmefs_ioq_buf_get(q1);
	buf2 = nvmefs_ioq_buf_get(q2);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->delivery = FAKE_NO_RESP;
	s = fake_expect_rw(2, nvme_cmd_read, 1, 8, 8, 4096);
	s->delivery = FAKE_NO_RESP;
	ck_assert_int_eq(nvmefs_ioq_read(q1, 1, 0, 8, buf1, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 8, 8, buf2, on_io, &b), 0);

	start = now_ms();
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 5000), -ETIMEDOUT);
	took = now_ms() - start;
	ck_assert_int_ge(took, 50);
	ck_assert_int_lt(took, 2000);
	assert_msg_has("I/O queue 1 failed");
	assert_msg_has("within 50 ms");
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q1), 0);

	/* The other queue's I/O fails too, at its next poll. */
	ck_assert_uint_eq(b.calls, 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 0), -ETIMEDOUT);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_eq(b.status, -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q2), 0);

	/* New I/O is refused at once, without its callback. */
	ck_assert_int_eq(nvmefs_ioq_read(q1, 1, 0, 8, buf1, on_io, &c), -ETIMEDOUT);
	assert_msg_has("the controller failed");
	ck_assert_int_eq(nvmefs_ioq_flush(q2, 1, on_io, &c), -ETIMEDOUT);
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 0), -ETIMEDOUT);
	ck_assert_uint_eq(c.calls, 0);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_uint_eq(b.calls, 1);
	nvmefs_ioq_buf_put(q1, buf1);
	nvmefs_ioq_buf_put(q2, buf2);
	disconnect_io(ctrl, 2, true);
}
END_TEST

START_TEST(test_timeout_fails_pending)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *s;
	uint8_t *buf;

	/* One slot: the first of three commands goes and is never answered;
	 * the other two wait for the slot.  The I/O still ends, once. */
	create_ioqs(ctrl, 1, 2, 50);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 16, 8192);
	s->delivery = FAKE_NO_RESP;
	ck_assert_int_eq(nvmefs_ioq_read(ioq, 1, 0, 48, buf, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 3000), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

START_TEST(test_timeout_fails_stalled_pending)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_8K, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q1, *q2;
	struct fake_step *s;
	uint8_t *buf1, *buf2;
	unsigned int k;

	/* Queue 1 (4 entries): A's first three commands complete, but the
	 * controller reports SQ head 1, as if it had taken none of them, so
	 * the fourth may not go: A waits with nothing in flight.  When queue
	 * 2's command times out and fails the controller, A must end too. */
	create_ioqs(ctrl, 2, 4, 50);
	q1 = nvmefs_ctrl_io_queue(ctrl, 0);
	q2 = nvmefs_ctrl_io_queue(ctrl, 1);
	buf1 = nvmefs_ioq_buf_get(q1);
	buf2 = nvmefs_ioq_buf_get(q2);
	for (k = 0; k < 3; k++) {
		s = fake_expect_rw(1, nvme_cmd_read, 1, k * 16, 16, 8192);
		s->sq_head = 1;
	}
	/* A queue.c that trusts an empty queue to have an empty SQ sends
	 * the fourth; it is never answered either. */
	s = fake_expect_rw(1, nvme_cmd_read, 1, 48, 16, 8192);
	s->hold = true;
	s->min = 0;
	ck_assert_int_eq(nvmefs_ioq_read(q1, 1, 0, 64, buf1, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 0), 0);
	ck_assert_uint_eq(a.calls, 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q1), 1);

	s = fake_expect_rw(2, nvme_cmd_read, 1, 0, 8, 4096);
	s->delivery = FAKE_NO_RESP;
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 0, 8, buf2, on_io, &b), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 3000), -ETIMEDOUT);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_eq(nvmefs_ioq_poll(q1, 0), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_uint_eq(nvmefs_ioq_inflight(q1), 0);
	nvmefs_ioq_buf_put(q1, buf1);
	nvmefs_ioq_buf_put(q2, buf2);
	disconnect_io(ctrl, 2, true);
}
END_TEST

START_TEST(test_keep_alive_failure_fails_io)
{
	/* Keep Alive every KATO/2 = 100 ms; the first is refused. */
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 200);
	struct cb_rec rec = { 0 };
	struct nvmefs_ioq *ioq;
	struct fake_step *ka, *r;
	int64_t start;
	void *buf;
	int ret;

	ka = fake_expect_cmd(nvme_admin_keep_alive);
	ka->match |= FAKE_M_QID | FAKE_M_LEN;
	fake_step_status(ka, 0, 0x06, false);	/* Internal Error */
	fake_float(ka);
	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);
	r = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	r->hold = true;		/* never answered: only the failure ends it */
	r->min = 0;		/* unless the keep-alive failed first */

	start = now_ms();
	ret = nvmefs_ioq_read(ioq, 1, 0, 8, buf, on_io, &rec);
	if (ret == 0) {
		ck_assert_int_eq(nvmefs_ioq_poll(ioq, 3000), -EIO);
		ck_assert_uint_eq(rec.calls, 1);
		ck_assert_int_eq(rec.status, -EIO);
	} else {
		/* A slow machine: the keep-alive failed before the read. */
		ck_assert_int_eq(ret, -EIO);
		ck_assert_uint_eq(rec.calls, 0);
	}
	ck_assert_int_lt(now_ms() - start, 2000);
	assert_msg_has("keep-alive to " SUBNQN " failed");
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -EIO);
	ck_assert_int_eq(nvmefs_ioq_poll(ioq, 0), -EIO);
	ck_assert_uint_eq(ka->used, 1);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Synchronous forms                                                        */
/* ------------------------------------------------------------------------ */

START_TEST(test_sync)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	static const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char want[256];
	struct nvmefs_ioq *ioq;
	struct fake_step *s;
	uint8_t *buf, plain[512] = { 0 };

	create_ioqs(ctrl, 1, 32, 0);
	ioq = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(ioq);

	/* LBA Out of Range, DNR: the status without DNR, and why. */
	s = fake_expect_rw(1, nvme_cmd_read, 1, 5, 8, 4096);
	fake_step_status(s, 0, 0x80, true);
	ck_assert_int_eq(nvmefs_ioq_read_sync(ioq, 1, 5, 8, buf), 0x80);
	snprintf(want, sizeof(want), "namespace 1, blocks 5+8: %s",
		 nvme_status_to_string(0x80, false));
	assert_msg_has(want);

	s = fake_expect_rw(1, nvme_cmd_read, 1, 6, 1, 512);
	fake_step_data(s, data, sizeof(data));
	memset(buf, 0xff, 512);
	ck_assert_int_eq(nvmefs_ioq_read_sync(ioq, 1, 6, 1, buf), 0);
	ck_assert_mem_eq(buf, data, sizeof(data));
	ck_assert_uint_eq(buf[8], 0);

	s = fake_expect_rw(1, nvme_cmd_write, 1, 9, 1, 512);
	ck_assert_int_eq(nvmefs_ioq_write_sync(ioq, 1, 9, 1, buf), 0);
	ck_assert_mem_eq(s->captured, data, sizeof(data));
	ck_assert_int_eq(nvmefs_ioq_write_sync(ioq, 1, 9, 1, plain), -EFAULT);

	fake_expect_io(1, nvme_cmd_flush, 1);
	ck_assert_int_eq(nvmefs_ioq_flush_sync(ioq, 1), 0);
	ck_assert_uint_eq(nvmefs_ioq_inflight(ioq), 0);
	nvmefs_ioq_buf_put(ioq, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST


/* ------------------------------------------------------------------------ */
/* Outages: the failure path hands nothing back early, recovery requeues    */
/* ------------------------------------------------------------------------ */

/* Connect to @t, reconnecting after a failure as @ctrl_loss_s says, admin
 * commands timing out after @timeout_ms (0: the default). */
static struct nvmefs_ctrl *connect_recovering_to(const struct fake_target *t, int ctrl_loss_s,
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

/* Connect as connect_io(), reconnecting after a failure as @ctrl_loss_s says. */
static struct nvmefs_ctrl *connect_recovering(int ctrl_loss_s)
{
	static const struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023,
					      .vs = 0x10400, .mdts = MDTS_1M, .io = true };

	return connect_recovering_to(&t, ctrl_loss_s, 0);
}

/* A reconnect attempt that gets through for @asked I/O queues of @size, of
 * which the controller now grants @granted, namespace 1 identifying as @id;
 * returns its admin Connect's step. */
static struct fake_step *script_attempt_queues(unsigned int size, const struct nvme_id_ns *id,
					       unsigned int asked, unsigned int granted)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				 .mdts = MDTS_1M, .io = true };

	return fake_script_attempt(TRADDR, &t, size, id, asked, granted);
}

static struct fake_step *script_attempt(unsigned int size, const struct nvme_id_ns *id)
{
	return script_attempt_queues(size, id, 1, 1);
}

/* What the controller's thread does to reconnect one I/O queue of @size,
 * namespace 1 identifying as @id: tear both queues down, then an attempt. */
static void script_reconnect(unsigned int size, const struct nvme_id_ns *id)
{
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	script_attempt(size, id);
}

/* Polls @q as a FUSE worker does, without waiting, until @r is called. */
static void poll_until(struct nvmefs_ioq *q, const struct cb_rec *r, int max_ms)
{
	int64_t end = now_ms() + max_ms;

	while (!r->calls && now_ms() < end) {
		nvmefs_ioq_poll(q, 0);
		usleep(1000);
	}
	ck_assert_msg(r->calls, "the I/O did not complete within %d ms", max_ms);
}

/*
 * A command submitted but not yet posted when the controller fails is never
 * posted: once its caller is told it failed, its buffer is the caller's.
 */
START_TEST(test_outage_unposted_never_sent)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_defer_posts = true;
	s = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &a), 0);
	ck_assert_uint_eq(s->posted, 0);
	/* Another thread (keep-alive) finds the controller gone. */
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	nvmefs_ctrl_fail(ctrl, -ECONNRESET, "scripted keep-alive failure");
	/* Not reconnecting: new I/O fails at once, it is not held. */
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), -ECONNRESET);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ECONNRESET);
	ck_assert_uint_eq(fake_stats.stops, 1);
	/* The caller refills its buffer; arming must not send the old write. */
	nvmefs_ioq_arm(q);
	nvmefs_ioq_poll(q, 0);
	ck_assert_uint_eq(s->posted, 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

static void on_io_queue_stopped(void *arg, int status)
{
	struct cb_rec *r = arg;

	/* The target must no longer be able to write into the buffer. */
	ck_assert_msg(fake_queue_stopped(1), "the I/O was handed back before its queue was stopped");
	on_io(r, status);
}

/*
 * A read the target still holds when it times out: its buffer goes back to
 * the caller only after the queue pair was stopped and drained, and what the
 * target would still send never arrives.
 */
START_TEST(test_outage_buffer_back_after_stop)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 50);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io_queue_stopped, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 3000), -ETIMEDOUT);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	/* The response the target held back can no longer come. */
	ck_assert_uint_eq(fake_held(), 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

/*
 * The target closing an I/O queue is noticed by a worker that only polls
 * without waiting, long before the I/O timeout, and wakes one asleep on the
 * queue's descriptor.
 */
START_TEST(test_outage_disconnect_noticed)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct pollfd pfd = { .events = POLLIN };
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	int64_t start;
	void *buf;

	q = read_held(ctrl, &a, &buf);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), 0);
	ck_assert_int_eq(nvmefs_ioq_arm(q), 0);
	pfd.fd = nvmefs_ioq_fd(q);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	start = now_ms();
	fake_disconnect(1);
	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
	poll_until(q, &a, 1000);
	ck_assert_int_lt(now_ms() - start, 1000);
	ck_assert_int_eq(a.status, -ECONNRESET);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -ECONNRESET);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
}
END_TEST

/*
 * A transport's arm that fails fails the queue through the controller's
 * path, as a failed poll does: arm says there is work (the outage), and the
 * I/O in flight ends at the next poll instead of waiting for its timeout.
 */
START_TEST(test_arm_error_fails_queue)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	void *buf;

	q = read_held(ctrl, &a, &buf);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 0), 0);
	fake_arm_error = -ENETDOWN;
	ck_assert_int_gt(nvmefs_ioq_arm(q), 0);
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), -ENETDOWN);
	poll_until(q, &a, 1000);
	ck_assert_int_eq(a.status, -ENETDOWN);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, true);
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

/*
 * Another namespace behind the NSID after the outage: the held write fails
 * and is never sent, and new I/O to it is refused.
 */
START_TEST(test_outage_namespace_replaced)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	s->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	id.nguid[0] = 0xaa;
	script_reconnect(32, &id);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	/* The script has no second write: sending it again fails the test. */
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, -ENODEV);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &b), -ENODEV);
	assert_msg_has("replaced");
	ck_assert_uint_eq(b.calls, 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * The RDMA device goes away (a NIC reset, soft-RoCE re-created), which the
 * kernel completes only once every user has let go of it: the controller
 * deregisters every region and releases its protection domain before it
 * reconnects, then registers the same memory again, and the held write goes
 * out again from the caller's region under its new key.
 */
START_TEST(test_outage_device_removed)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvmefs_mr *mr;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	uint32_t old_rkey;
	uint8_t *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = reg_buf(ctrl, 65536, 0x5a, &mr);
	old_rkey = mr->rkey;
	s = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	s->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_reconnect(32, &id);
	again = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &a), 0);
	fake_device_removed(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(fake_stats.bare_releases, 1);
	/* The pool and the caller's region, each registered again. */
	ck_assert_uint_eq(fake_stats.mr_regs - fake_stats.mr_deregs, 2);
	ck_assert_uint_ne(mr->rkey, old_rkey);
	ck_assert_ptr_eq(again->seen_mr, mr);
	assert_keyed(&again->seen_sgl, buf, 4096, mr->rkey);
	nvmefs_mr_dereg(mr);
	free(buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* The next reconnect attempt finds nothing listening (its port not linked
 * yet): refused at once. */
static void script_refused_attempt(void)
{
	struct fake_step *refused = fake_expect_create(TRADDR, "4420");

	refused->create_ret = -ECONNREFUSED;
	snprintf(refused->create_msg, sizeof(refused->create_msg), "nobody listens (scripted)");
}

/*
 * An attempt that fails lets go of the device as well: a link that went
 * down can take the device with it, and its removal would wait for us for
 * as long as the outage lasts.  The attempt that gets through registers the
 * pool again, and the held read lands in it under its new key.
 */
START_TEST(test_outage_failed_attempt_lets_go)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	uint32_t old_rkey;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q, 1000), 1);
	old_rkey = s->seen_mr->rkey;

	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	script_refused_attempt();
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_attempt(32, &id);
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &b), 0);
	fake_disconnect(1);
	poll_until(q, &b, 5000);
	ck_assert_int_eq(b.status, 0);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 2);
	ck_assert_uint_eq(fake_stats.bare_releases, 1);
	ck_assert_uint_eq(fake_stats.mr_regs - fake_stats.mr_deregs, 1);
	ck_assert_uint_ne(again->seen_mr->rkey, old_rkey);
	assert_keyed(&again->seen_sgl, buf, 4096, again->seen_mr->rkey);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * While the controller reconnects, new I/O would be held (what the mount
 * asks before giving a request a buffer); once live again, it goes.
 */
START_TEST(test_outage_ns_held)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	bool seen_held = false;
	int64_t end;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	/* Refused once: the attempt after it comes a tenth of a second later. */
	script_refused_attempt();
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_attempt(32, &id);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !a.calls && now_ms() < end; usleep(1000)) {
		nvmefs_ioq_poll(q, 0);
		if (!a.calls && nvmefs_ioq_ns_held(q, 1))
			seen_held = true;
	}
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_msg(seen_held, "I/O was never said to be held while the controller reconnected");
	ck_assert_int_eq(nvmefs_ioq_ns_held(q, 1), 0);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * A head of one path (as a mount or perf of one path makes) behaves as the
 * path's queue: a read in flight when the connection drops is held, the
 * head says the namespace's I/O is held, and the read goes again once
 * reconnected; the head sleeps on the path's own descriptor.  Once the
 * controller is given up, what is in flight fails and new I/O fails with
 * the controller's own message, not a multipath one.
 */
START_TEST(test_outage_single_head_holds)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_subsys *s = NULL;
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_mpq *mpq;
	struct nvme_id_ns id;
	struct fake_step *step;
	bool seen_held = false;
	int64_t end;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	ck_assert_int_eq(nvmefs_subsys_create_single(ctrl, &s), 0);
	ck_assert(!nvmefs_subsys_multipath(s));
	ck_assert_uint_eq(nvmefs_subsys_path_count(s), 1);
	mpq = nvmefs_subsys_queue(s, 0);
	ck_assert_int_eq(nvmefs_mpq_fd(mpq), nvmefs_ioq_fd(nvmefs_ctrl_io_queue(ctrl, 0)));
	buf = nvmefs_mpq_buf_get(mpq);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 0);
	step = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	step->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_reconnect(32, &id);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_mpq_read(mpq, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !a.calls && now_ms() < end; usleep(1000)) {
		nvmefs_mpq_poll(mpq, 0);
		if (!a.calls && nvmefs_mpq_ns_held(mpq, 1))
			seen_held = true;
	}
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_msg(seen_held, "I/O was never said to be held while the controller reconnected");
	ck_assert_int_eq(nvmefs_ctrl_failed(ctrl), 0);
	ck_assert_uint_eq(nvmefs_mpq_inflight(mpq), 0);

	/* Given up: the read in flight fails, and so does what comes after. */
	step = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	step->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	ck_assert_int_eq(nvmefs_mpq_read(mpq, 1, 8, 8, buf, on_io, &b), 0);
	nvmefs_ctrl_stop_reconnect(ctrl);
	fake_disconnect(1);
	for (end = now_ms() + 5000; !b.calls && now_ms() < end;)
		nvmefs_mpq_poll(mpq, 10);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_lt(b.status, 0);
	ck_assert_int_eq(nvmefs_mpq_ns_held(mpq, 1), 0);
	ck_assert_int_lt(nvmefs_mpq_read(mpq, 1, 0, 8, buf, on_io, &b), 0);
	ck_assert_msg(strstr(nvmefs_errmsg(), "the controller failed") &&
		      strstr(nvmefs_errmsg(), "is deleted"), "message: %s", nvmefs_errmsg());
	ck_assert_int_lt(nvmefs_mpq_poll(mpq, 0), 0);
	ck_assert_msg(strstr(nvmefs_errmsg(), "I/O queue 1 failed"), "message: %s",
		      nvmefs_errmsg());
	nvmefs_mpq_buf_put(mpq, buf);
	nvmefs_subsys_destroy(s);
}
END_TEST

static void count_failed_attempts(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)st;
	if (strstr(msg, "reconnect attempt"))
		(*(unsigned int *)arg)++;
}

/*
 * A target that refuses at once (its port not listening yet: a restart) is
 * looked at again within a fraction of the schedule's pause, so I/O resumes
 * as soon as it listens; the repeated refusals are reported once.
 */
START_TEST(test_outage_refused_probed_soon)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 };
	unsigned int reported = 0;
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	int64_t start, took;
	void *buf;

	nvmefs_ctrl_set_event_cb(ctrl, count_failed_attempts, &reported);
	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	for (int i = 0; i < 3; i++) {
		script_refused_attempt();
	}
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_attempt(32, &id);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	start = now_ms();
	fake_disconnect(1);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	took = now_ms() - start;
	/* The schedule alone would wait 0.25 + 0.5 + 1 s before the fourth attempt;
	 * probing every 0.1 s takes about 0.3 s, and up to 1 s on a loaded
	 * machine under ASan (1017 ms seen): 1.5 s still tells the two apart. */
	ck_assert_int_lt(took, 1500);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 4);
	/* Told once per pause of the schedule (0.25 s, then 0.5 s): once when
	 * the probes came quickly, as they do; on a loaded host the three
	 * refusals may span a pause or two, and each adds one. */
	ck_assert_uint_ge(reported, 1);
	ck_assert_uint_le(reported, 1 + (took >= 250) + (took >= 750));
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* Polls @a and @b as their two owners would, without waiting, until @r is called. */
static void poll_both_until(struct nvmefs_ioq *a, struct nvmefs_ioq *b, const struct cb_rec *r,
			    int max_ms)
{
	int64_t end = now_ms() + max_ms;

	while (!r->calls && now_ms() < end) {
		nvmefs_ioq_poll(a, 0);
		nvmefs_ioq_poll(b, 0);
		usleep(1000);
	}
	ck_assert_msg(r->calls, "the I/O did not complete within %d ms", max_ms);
}

/*
 * The target grants one I/O queue where there were two (nvmet's
 * attr_qid_max lowered while we were away): the controller comes back with
 * one, and the second queue's I/O, held and new, goes out on the first
 * one's connection, while its caller is still called from the second
 * queue's poll.  Once the target grants two again, each has its own.
 */
START_TEST(test_outage_fewer_queues_shared)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct cb_rec a = { 0 }, b = { 0 }, c = { 0 };
	struct nvmefs_ctrl_status st;
	struct nvmefs_ioq *q1, *q2;
	struct nvme_id_ns id;
	struct fake_step *s, *again, *fresh;
	void *buf;

	create_ioqs(ctrl, 2, 32, 0);
	q1 = nvmefs_ctrl_io_queue(ctrl, 0);
	q2 = nvmefs_ctrl_io_queue(ctrl, 1);
	buf = nvmefs_ioq_buf_get(q2);
	s = fake_expect_rw(2, nvme_cmd_read, 1, 0, 8, 4096);
	s->hold = true;
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* I/O queue 2 */
	fake_expect_destroy();		/* the admin queue */
	script_attempt_queues(32, &id, 2, 1);
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 0, 8, buf, on_io, &a), 0);
	fake_disconnect(2);
	poll_both_until(q1, q2, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(again->posted, 1);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_int_eq(st.state, NVMEFS_CTRL_LIVE);
	ck_assert_uint_eq(st.io_queues, 1);

	/* New I/O on the second queue: sent by the first queue's owner, its
	 * caller called by the second's. */
	fresh = fake_expect_rw(1, nvme_cmd_read, 1, 8, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 8, 8, buf, on_io, &b), 0);
	for (int i = 0; i < 50 && !fresh->posted; i++)
		nvmefs_ioq_poll(q1, 10);
	ck_assert_uint_eq(fresh->posted, 1);
	nvmefs_ioq_poll(q1, 10);
	ck_assert_uint_eq(b.calls, 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 1000), 1);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_int_eq(b.status, 0);

	/* The target grants two again: each queue has its own connection. */
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	script_attempt_queues(32, &id, 2, 2);
	fresh = fake_expect_rw(2, nvme_cmd_read, 1, 16, 8, 4096);
	fake_disconnect(1);
	for (int i = 0; i < 500; i++) {
		nvmefs_ioq_poll(q1, 0);
		nvmefs_ioq_poll(q2, 0);
		nvmefs_ctrl_status(ctrl, &st);
		if (st.reconnects == 2 && st.state == NVMEFS_CTRL_LIVE)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(st.reconnects, 2);
	ck_assert_uint_eq(st.io_queues, 2);
	ck_assert_int_eq(nvmefs_ioq_read(q2, 1, 16, 8, buf, on_io, &c), 0);
	ck_assert_int_eq(nvmefs_ioq_poll(q2, 1000), 1);
	ck_assert_int_eq(c.status, 0);
	ck_assert_uint_eq(fresh->posted, 1);
	nvmefs_ioq_buf_put(q2, buf);
	disconnect_io(ctrl, 2, false);
}
END_TEST

/* The I/O queue 1 create of an attempt that got the admin queue back fails. */
static void script_create_refused(const struct nvme_id_ns *id, const char *msg)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				 .mdts = MDTS_1M, .io = true };
	struct fake_step *s;

	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_expect_set_nr_queues(1, 0);
	/* Floating as script_attempt()'s are, and matched before them. */
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, id, sizeof(*id)));
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0));
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	s->create_ret = -ECONNRESET;
	snprintf(s->create_msg, sizeof(s->create_msg), "%s", msg);
	fake_expect_destroy();		/* the admin queue */
}

/* Polls @q as its owner does until the controller's last failure reason has @needle. */
static void poll_until_reason(struct nvmefs_ctrl *ctrl, struct nvmefs_ioq *q, const char *needle,
			      int max_ms)
{
	struct nvmefs_ctrl_status st;
	int64_t end = now_ms() + max_ms;

	for (;;) {
		nvmefs_ioq_poll(q, 0);
		nvmefs_ctrl_status(ctrl, &st);
		if (strstr(st.reason, needle) || now_ms() >= end)
			break;
		usleep(1000);
	}
	ck_assert_msg(strstr(st.reason, needle), "no '%s' within %d ms (reason '%s')", needle,
		      max_ms, st.reason);
}

/* The next attempt's admin Connect, on the controller's thread: waits (up
 * to 5 s) until the test has submitted its read, so that the read comes
 * while I/O queue 1 is still as the failed attempt left it. */
static void wait_for_read(struct fake_step *s, void *arg)
{
	const atomic_bool *read_in = arg;
	int64_t end = now_ms() + 5000;

	(void)s;
	while (!atomic_load(read_in) && now_ms() < end)
		usleep(1000);
}

/*
 * An attempt gets the admin queue back but I/O queue 1's create fails: the
 * queue is left without a transport, and a read issued in the backoff that
 * follows is held, not sent on it (its request slots point into what the
 * transport freed), then goes out and completes after the next attempt.
 */
START_TEST(test_outage_create_fails_read_held)
{
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct nvmefs_ctrl_status st;
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *refused, *third, *again;
	atomic_bool read_in = false;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	/* The first attempt finds nothing; the second gets the admin queue back,
	 * not I/O queue 1. */
	refused = fake_expect_create(TRADDR, "4420");
	refused->create_ret = -ETIMEDOUT;
	snprintf(refused->create_msg, sizeof(refused->create_msg), "no route yet (scripted)");
	script_create_refused(&id, "I/O queue 1 refused (scripted)");
	third = script_attempt(32, &id);
	third->on_match = wait_for_read;
	third->on_match_arg = &read_in;
	again = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_disconnect(1);
	poll_until_reason(ctrl, q, "I/O queue 1 refused", 5000);
	/* After the second attempt, before the third gets to the I/O queue. */
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_int_eq(st.state, NVMEFS_CTRL_CONNECTING);
	ck_assert_uint_eq(again->posted, 0);
	atomic_store(&read_in, true);
	poll_until(q, &a, 5000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(again->posted, 1);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 3);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

#define RACE_READS 8

/* The owner's reads against the controller's thread reconnecting its queue. */
struct race {
	struct nvmefs_ctrl *ctrl;
	atomic_bool in_connect;		/* I/O queue 1's Connect is in flight */
	atomic_uint tries;		/* reads the owner submitted meanwhile */
	atomic_uint early;		/* reads that reached the target before the controller was live */
};

/* I/O queue 1's Connect, on the controller's thread: held open until the
 * owner has submitted every read (or 2 s passed). */
static void connect_while_owner_submits(struct fake_step *s, void *arg)
{
	struct race *r = arg;
	int64_t end = now_ms() + 2000;

	(void)s;
	atomic_store(&r->in_connect, true);
	while (atomic_load(&r->tries) < RACE_READS && now_ms() < end)
		usleep(1000);
	atomic_store(&r->in_connect, false);
}

static void read_reaches_target(struct fake_step *s, void *arg)
{
	struct race *r = arg;

	(void)s;
	if (nvmefs_ctrl_failed(r->ctrl))
		atomic_fetch_add(&r->early, 1);
}

/*
 * The owner submits while the controller's thread connects its queue again:
 * nothing is sent, and no request slot taken, before the attempt is through
 * and the controller live; then every read goes out in order and completes.
 */
START_TEST(test_outage_submit_races_attempt)
{
	struct fake_target t = { .cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400,
				 .mdts = MDTS_1M, .io = true };
	struct nvmefs_ctrl *ctrl = connect_recovering(10);
	struct race r = { .ctrl = ctrl };
	struct cb_rec recs[RACE_READS] = { { 0 } };
	void *bufs[RACE_READS];
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	uint32_t list[NVMEFS_NS_LIST_LEN] = { 0 };
	int64_t end;
	unsigned int i, done;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	fake_script_connect_kato(TRADDR, "4420", &t, 0);
	fake_expect_set_nr_queues(1, 0);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, &id, sizeof(id));
	fake_float(s);
	fake_repeat(s, 2, 2);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0);
	fake_float(s);
	fake_repeat(s, 2, 2);
	list[0] = nvmefs_cpu_to_le32(1);
	fake_float(fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list)));
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	s = fake_expect_io_connect(1, 31, CNTLID);
	s->on_match = connect_while_owner_submits;
	s->on_match_arg = &r;
	for (i = 0; i < RACE_READS; i++) {
		s = fake_expect_rw(1, nvme_cmd_read, 1, i * 8, 8, 4096);
		s->on_match = read_reaches_target;
		s->on_match_arg = &r;
		bufs[i] = nvmefs_ioq_buf_get(q);
	}
	fake_disconnect(1);
	end = now_ms() + 5000;
	while (!atomic_load(&r.in_connect) && now_ms() < end) {
		nvmefs_ioq_poll(q, 0);
		usleep(500);
	}
	ck_assert_msg(atomic_load(&r.in_connect), "I/O queue 1's Connect did not come within 5 s");
	for (i = 0; i < RACE_READS; i++) {
		ck_assert_int_eq(nvmefs_ioq_read(q, 1, i * 8, 8, bufs[i], on_io, &recs[i]), 0);
		nvmefs_ioq_poll(q, 0);
		atomic_fetch_add(&r.tries, 1);
		usleep(1000);
	}
	end = now_ms() + 5000;
	do {
		nvmefs_ioq_poll(q, 0);
		for (i = 0, done = 0; i < RACE_READS; i++)
			done += recs[i].calls;
		usleep(1000);
	} while (done < RACE_READS && now_ms() < end);
	ck_assert_uint_eq(atomic_load(&r.early), 0);
	for (i = 0; i < RACE_READS; i++) {
		ck_assert_uint_eq(recs[i].calls, 1);
		ck_assert_int_eq(recs[i].status, 0);
		if (i)
			ck_assert_uint_lt(recs[i - 1].order, recs[i].order);
		nvmefs_ioq_buf_put(q, bufs[i]);
	}
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

/* A status without DNR is retried (as Linux does); with DNR it is not. */
START_TEST(test_retry_without_dnr)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	poll_until(q, &a, 2000);
	ck_assert_int_eq(a.status, 0);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, true);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &b), 0);
	poll_until(q, &b, 2000);
	ck_assert_int_eq(b.status, NVME_SC_INTERNAL);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * A path error that names no ANA state, with no other path (nvmet's answer
 * for a namespace disabled on it): tried again 100 ms later, not at once, as
 * Linux holds it until its rescan; after the retries it fails with the
 * target's status.
 */
START_TEST(test_path_error_one_path)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 }, b = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	int64_t start;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_PATH, NVME_SC_ANA_INTERNAL_PATH_ERROR, false);
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	start = now_ms();
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	poll_until(q, &a, 2000);
	ck_assert_int_eq(a.status, 0);
	ck_assert_int_ge(now_ms() - start, 100);
	for (int i = 0; i < 6; i++) {
		s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
		fake_step_status(s, NVME_SCT_PATH, NVME_SC_ANA_INTERNAL_PATH_ERROR, false);
	}
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &b), 0);
	poll_until(q, &b, 3000);
	ck_assert_int_eq(b.status, NVME_SCT_PATH << NVME_SCT_SHIFT | NVME_SC_ANA_INTERNAL_PATH_ERROR);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Rescans: only a definite answer removes a namespace                      */
/* ------------------------------------------------------------------------ */

/* A controller whose Identify asks for 300 ms on a Command Retry Delay of 1. */
static const struct fake_target crd_target = {
	.cntlid = CNTLID, .cap = CAP_MQES_1023, .vs = 0x10400, .mdts = MDTS_1M, .io = true,
	.crdt1 = 3,
};

static struct nvmefs_ctrl *connect_crd(unsigned int timeout_ms)
{
	return connect_recovering_to(&crd_target, 10, timeout_ms);
}

/* Reconnecting I/O queue 1 of 32 entries after the target closed it: both
 * queues down, an attempt whose check of namespace 1 answers @status (0:
 * @id), and, if that is not a success, an attempt that gets through.  The
 * rescan once live is the caller's to script. */
static void script_back(const struct nvme_id_ns *id, uint16_t status)
{
	struct fake_step *s;

	fake_expect_destroy();		/* I/O queue 1 */
	fake_expect_destroy();		/* the admin queue */
	fake_script_connect_kato(TRADDR, "4420", &crd_target, 0);
	fake_expect_set_nr_queues(1, 0);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, id, sizeof(*id));
	if (status) {
		s->status = status;
		fake_expect_destroy();	/* the admin queue: the attempt failed */
		fake_script_connect_kato(TRADDR, "4420", &crd_target, 0);
		fake_expect_set_nr_queues(1, 0);
		fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, id, sizeof(*id));
	}
	fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0);
	s = fake_expect_create(NULL, NULL);
	s->qid = 1;
	fake_expect_io_connect(1, 31, CNTLID);
}

/* A rescan: the active list (namespace 1 in it, or none), and Identify
 * Namespace 1 answering @status, or @id with its descriptors; returns the
 * Identify step (or the list's, with no namespace). */
static struct fake_step *script_rescan_list(bool listed)
{
	static uint32_t list[NVMEFS_NS_LIST_LEN];

	memset(list, 0, sizeof(list));
	list[0] = nvmefs_cpu_to_le32(listed ? 1 : 0);
	return fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list));
}

/* The last step script_rescan() added: the rescan has asked all it will
 * once this one is used. */
static struct fake_step *rescan_last_step;

static struct fake_step *script_rescan(bool listed, const struct nvme_id_ns *id, uint16_t status)
{
	struct fake_step *s = script_rescan_list(listed);

	rescan_last_step = s;
	if (!listed)
		return s;
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, id, sizeof(*id));
	s->status = status;
	rescan_last_step = s;
	if (!status)
		rescan_last_step = fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0);
	return s;
}

/* When a rescan's Identify Namespace 1 came, and whether 1 was usable then. */
struct rescan_seen {
	struct nvmefs_ctrl *ctrl;
	int64_t at;
	int ns_info;
};

static void rescan_seen(struct fake_step *s, void *arg)
{
	struct rescan_seen *r = arg;
	struct nvmefs_ns_info info;

	(void)s;
	r->at = now_ms();
	r->ns_info = nvmefs_ns_info(r->ctrl, 1, &info);
}

/* Polls @q as its owner does until @s has matched, within @max_ms. */
static void poll_until_step(struct nvmefs_ioq *q, const struct fake_step *s, int max_ms)
{
	int64_t end = now_ms() + max_ms;

	while (!s->used && now_ms() < end) {
		nvmefs_ioq_poll(q, 0);
		usleep(1000);
	}
	ck_assert_msg(s->used, "step added at line %d did not come within %d ms", s->line, max_ms);
}

/* Namespace 1 still usable: a write to it goes out and completes. */
static void assert_ns_usable(struct nvmefs_ctrl *ctrl, struct nvmefs_ioq *q, void *buf)
{
	struct nvmefs_ns_info info;
	struct cb_rec w = { 0 };

	ck_assert_msg(nvmefs_ns_info(ctrl, 1, &info) == 0, "namespace 1: %s", nvmefs_errmsg());
	fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &w), 0);
	poll_until(q, &w, 2000);
	ck_assert_int_eq(w.status, 0);
}

/* Statuses that may pass: the namespace stays, the rescan is tried again. */
static const struct {
	uint8_t sct, sc;
	bool crd;			/* Command Retry Delay 1: CRDT1's 300 ms */
} may_pass[] = {
	{ NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY, true },
	{ NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR, false },
	/* Invalid Namespace without Do Not Retry: not yet an answer. */
	{ NVME_SCT_GENERIC, NVME_SC_INVALID_NS, false },
};

/*
 * The rescan after a reconnect gets a status without DNR, or a path error,
 * for a namespace: it is kept, its I/O goes on, and the rescan is tried
 * again after the controller's Command Retry Delay (CRDT1 x 100 ms).
 */
START_TEST(test_rescan_status_may_pass)
{
	struct nvmefs_ctrl *ctrl = connect_crd(0);
	uint16_t status = FAKE_STATUS(may_pass[_i].sct, may_pass[_i].sc, false) |
			  (may_pass[_i].crd ? 1u << 11 : 0);
	struct rescan_seen first = { .ctrl = ctrl }, retry = { .ctrl = ctrl };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_back(&id, 0);
	s = script_rescan(true, &id, status);
	s->on_match = rescan_seen;
	s->on_match_arg = &first;
	again = script_rescan(true, &id, 0);
	again->on_match = rescan_seen;
	again->on_match_arg = &retry;
	fake_disconnect(1);
	poll_until_step(q, again, 5000);
	/* The write below comes after the whole rescan, not between its commands. */
	poll_until_step(q, rescan_last_step, 5000);
	ck_assert_int_ge(retry.at - first.at, may_pass[_i].crd ? 300 : 1);
	/* Kept through the rescan without an answer, not dropped and found again. */
	ck_assert_int_eq(retry.ns_info, 0);
	assert_ns_usable(ctrl, q, buf);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * The rescan's Identify Namespace times out: the controller recovers (the
 * admin queue cannot be trusted), and the namespace is kept and looked at
 * again once it is back.
 */
START_TEST(test_rescan_timeout_keeps_namespace)
{
	struct nvmefs_ctrl *ctrl = connect_crd(300);
	struct nvmefs_ctrl_status st;
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_back(&id, 0);
	script_rescan_list(true);
	s = fake_expect_identify(NVME_IDENTIFY_CNS_NS, 1, &id, sizeof(id));
	s->delivery = FAKE_NO_RESP;
	script_back(&id, 0);
	again = script_rescan(true, &id, 0);
	fake_disconnect(1);
	poll_until_step(q, again, 8000);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.reconnects, 2);
	ck_assert_int_eq(st.error, -ETIMEDOUT);
	assert_ns_usable(ctrl, q, buf);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * The check of a namespace while reconnecting gets a status that may pass:
 * the namespace is not dropped, nor its held write sent unchecked: the
 * attempt fails and the next one checks it again, and the write completes.
 */
START_TEST(test_recheck_status_may_pass)
{
	struct nvmefs_ctrl *ctrl = connect_crd(0);
	struct nvmefs_ctrl_status st;
	struct cb_rec w = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s, *again;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	s = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	s->hold = true;
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &w), 0);
	ck_assert_uint_eq(s->posted, 1);
	script_back(&id, FAKE_STATUS(NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY, false));
	/* Sent again as the rescan goes, at its own pace. */
	again = fake_expect_rw(1, nvme_cmd_write, 1, 0, 8, 4096);
	fake_float(again);
	script_rescan(true, &id, 0);
	fake_disconnect(1);
	poll_until(q, &w, 5000);
	ck_assert_int_eq(w.status, 0);
	ck_assert_uint_eq(again->posted, 1);
	nvmefs_ctrl_status(ctrl, &st);
	ck_assert_uint_eq(st.attempts, 2);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/*
 * A definite answer removes the namespace: Invalid Namespace with DNR, or
 * the namespace missing from the active list.  Its I/O fails, and the
 * rescan is not tried again.
 */
START_TEST(test_rescan_definite_removes)
{
	struct nvmefs_ctrl *ctrl = connect_crd(0);
	struct nvmefs_ns_info info;
	struct cb_rec w = { 0 };
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	struct fake_step *s;
	void *buf;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	fake_id_ns(&id, default_ns[0].nsze, default_ns[0].lba_shift);
	script_back(&id, 0);
	s = script_rescan(_i == 0, &id, FAKE_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS, true));
	fake_disconnect(1);
	poll_until_step(q, s, 5000);
	for (int i = 0; i < 100 && nvmefs_ns_info(ctrl, 1, &info) == 0; i++) {
		nvmefs_ioq_poll(q, 0);
		usleep(10000);
	}
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), -ENODEV);
	ck_assert_int_eq(nvmefs_ioq_write(q, 1, 0, 8, buf, on_io, &w), -ENODEV);
	/* Nothing more is asked (the script has no second rescan). */
	for (int i = 0; i < 5; i++)
		nvmefs_ioq_poll(q, 100);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

/* A reader of namespace 1's geometry, as the mount's change callback is,
 * on a thread of its own while the controller's thread rescans. */
struct geometry_reader {
	struct nvmefs_ctrl *ctrl;
	atomic_bool stop;
	uint64_t odd_nlb;		/* a size neither before nor after, or 0 */
	atomic_uint reads;
};

static void *read_geometry(void *arg)
{
	struct geometry_reader *r = arg;
	struct nvmefs_ns_info info;

	while (!atomic_load(&r->stop)) {
		if (nvmefs_ns_info(r->ctrl, 1, &info) == 0) {
			atomic_fetch_add(&r->reads, 1);
			if (info.nlb != default_ns[0].nsze && info.nlb != 2 * default_ns[0].nsze)
				r->odd_nlb = info.nlb;
		}
		sched_yield();
	}
	return NULL;
}

static void rescan_asked(struct fake_step *s, void *arg)
{
	(void)s;
	atomic_store((atomic_bool *)arg, true);
}

/*
 * The namespace grew during an outage: the reconnect's check and the
 * rescan take the new size while another thread reads the geometry (the
 * mount's change callback, a stat): it sees the old size or the new one,
 * never a torn one, and the new one once the rescan is done.  The race
 * itself shows under ThreadSanitizer (tests/unit/tsan/check_io).
 */
START_TEST(test_rescan_resize_read_meanwhile)
{
	struct nvmefs_ctrl *ctrl = connect_crd(0);
	struct geometry_reader r = { .ctrl = ctrl };
	struct nvmefs_ns_info info;
	struct nvmefs_ioq *q;
	struct nvme_id_ns id;
	atomic_bool asked = false;
	pthread_t reader;

	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	fake_id_ns(&id, 2 * default_ns[0].nsze, default_ns[0].lba_shift);
	script_back(&id, 0);
	script_rescan(true, &id, 0);
	/* Told from the controller's thread: the script's own counts are not
	 * for another thread to read under ThreadSanitizer. */
	rescan_last_step->on_match = rescan_asked;
	rescan_last_step->on_match_arg = &asked;
	ck_assert_int_eq(pthread_create(&reader, NULL, read_geometry, &r), 0);
	/* Reading before the outage, so that it reads during the rescan too:
	 * on a busy host the thread may not run before the rescan is done. */
	for (int64_t end = now_ms() + 5000; !atomic_load(&r.reads) && now_ms() < end; usleep(1000))
		;
	ck_assert_msg(atomic_load(&r.reads), "the reader did not read within 5 s");
	fake_disconnect(1);
	for (int64_t end = now_ms() + 5000; !atomic_load(&asked) && now_ms() < end; usleep(1000))
		nvmefs_ioq_poll(q, 0);
	ck_assert_msg(atomic_load(&asked), "the rescan did not come within 5 s");
	atomic_store(&r.stop, true);
	pthread_join(reader, NULL);
	ck_assert_msg(!r.odd_nlb, "a reader saw %llu blocks", (unsigned long long)r.odd_nlb);
	ck_assert_int_eq(nvmefs_ns_info(ctrl, 1, &info), 0);
	ck_assert_uint_eq(info.nlb, 2 * default_ns[0].nsze);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * A command the controller asks to retry after its Command Retry Delay waits
 * it out asleep: arming says there is nothing to poll for, tells how long to
 * sleep, and a synchronous wait does not spin through the delay.
 */
START_TEST(test_retry_delay_sleeps)
{
	struct nvmefs_ctrl *ctrl = connect_io(MDTS_1M, CAP_MQES_1023, 0, 0);
	struct cb_rec a = { 0 };
	struct nvmefs_ioq *q;
	struct fake_step *s;
	double cpu;
	int wait = -1;
	void *buf;

	ctrl->id.crdt1 = nvmefs_cpu_to_le16(20);	/* 2 s */
	create_ioqs(ctrl, 1, 32, 0);
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	buf = nvmefs_ioq_buf_get(q);
	s = fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INTERNAL, false);
	s->status |= 1u << 11;			/* CRD 1 */
	fake_expect_rw(1, nvme_cmd_read, 1, 0, 8, 4096);
	ck_assert_int_eq(nvmefs_ioq_read(q, 1, 0, 8, buf, on_io, &a), 0);
	for (int i = 0; i < 100 && wait <= 0; i++) {
		nvmefs_ioq_poll(q, 0);
		wait = nvmefs_ioq_arm(q) == 0 ? nvmefs_ioq_wait_ms(q) : -1;
		if (wait <= 0)
			usleep(1000);
	}
	ck_assert_uint_eq(a.calls, 0);
	ck_assert_int_gt(wait, 0);
	ck_assert_int_le(wait, 2000);
	cpu = cpu_ms();
	ck_assert_int_eq(nvmefs_ioq_poll(q, 5000), 1);
	ck_assert_int_eq(a.status, 0);
	ck_assert_msg(cpu_ms() - cpu < 200, "waiting out a %d ms retry delay took %.0f ms of CPU",
		      wait, cpu_ms() - cpu);
	ck_assert_int_eq(nvmefs_ioq_wait_ms(q), -1);
	nvmefs_ioq_buf_put(q, buf);
	disconnect_io(ctrl, 1, false);
}
END_TEST

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc;

	tc = tcase_create("create");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_create_sequence);
	tcase_add_test(tc, test_create_granted_fewer);
	tcase_add_test(tc, test_create_take_fewer);
	tcase_add_test(tc, test_ask_io_queues);
	tcase_add_test(tc, test_create_auto_queue_size);
	tcase_add_test(tc, test_create_bad_opts);
	tcase_add_test(tc, test_create_bad_lba_format);
	tcase_add_test(tc, test_namespace_pages);
	tcase_add_test(tc, test_namespace_identify_fails);
	tcase_add_test(tc, test_create_twice_and_again);
	tcase_add_test(tc, test_create_fails_midway);
	tcase_add_test(tc, test_create_qid_still_held);
	tcase_add_test(tc, test_create_qid_held_for_good);
	suite_add_tcase(s, tc);

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
	tcase_add_test(tc, test_nvm_limits);
	tcase_add_test(tc, test_nvm_limits_none);
	tcase_add_test(tc, test_flush);
	tcase_add_test(tc, test_flush_waits_for_earlier_writes);
	tcase_add_test(tc, test_slots_exhausted);
	tcase_add_test(tc, test_pending_not_overtaken_from_callback);
	suite_add_tcase(s, tc);

	tc = tcase_create("memory");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_unregistered_buffer);
	tcase_add_test(tc, test_registered_keys);
	tcase_add_test(tc, test_pool);
	tcase_add_test(tc, test_fd_arm);
	tcase_add_test(tc, test_arm_contract);
	suite_add_tcase(s, tc);

	tc = tcase_create("map_data");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_map_no_data);
	tcase_add_test(tc, test_map_in_capsule);
	tcase_add_test(tc, test_map_keyed);
	tcase_add_test(tc, test_map_mr_keys);
	tcase_add_test(tc, test_map_too_long);
	tcase_add_test(tc, test_in_capsule_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("failure");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_timeout_fails_ctrl);
	tcase_add_test(tc, test_timeout_fails_pending);
	tcase_add_test(tc, test_timeout_fails_stalled_pending);
	tcase_add_test(tc, test_keep_alive_failure_fails_io);
	tcase_add_test(tc, test_sync);
	suite_add_tcase(s, tc);

	tc = tcase_create("outage");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_outage_unposted_never_sent);
	tcase_add_test(tc, test_outage_buffer_back_after_stop);
	tcase_add_test(tc, test_outage_device_removed);
	tcase_add_test(tc, test_outage_failed_attempt_lets_go);
	tcase_add_test(tc, test_outage_ns_held);
	tcase_add_test(tc, test_outage_single_head_holds);
	tcase_add_test(tc, test_outage_refused_probed_soon);
	tcase_add_test(tc, test_outage_fewer_queues_shared);
	tcase_add_test(tc, test_outage_disconnect_noticed);
	tcase_add_test(tc, test_arm_error_fails_queue);
	tcase_add_test(tc, test_outage_reconnect_requeues);
	tcase_add_test(tc, test_reconnect_takes_new_limits);
	tcase_add_test(tc, test_reconnect_mdts_below_a_block);
	tcase_add_test(tc, test_outage_namespace_replaced);
	tcase_add_test(tc, test_retry_without_dnr);
	tcase_add_test(tc, test_path_error_one_path);
	tcase_add_test(tc, test_outage_create_fails_read_held);
	tcase_add_test(tc, test_outage_submit_races_attempt);
	tcase_add_test(tc, test_retry_delay_sleeps);
	suite_add_tcase(s, tc);

	tc = tcase_create("rescan");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_rescan_status_may_pass, 0,
			    (int)(sizeof(may_pass) / sizeof(may_pass[0])));
	tcase_add_test(tc, test_rescan_timeout_keeps_namespace);
	tcase_add_test(tc, test_recheck_status_may_pass);
	tcase_add_loop_test(tc, test_rescan_definite_removes, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("races");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_rescan_resize_read_meanwhile);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(io_suite());
	int failed;

#ifdef __SANITIZE_THREAD__
	/* The ThreadSanitizer build is for the cases where threads share
	 * state; the others would only take its time. */
	srunner_run(sr, NULL, "races", CK_ENV);
#else
	srunner_run_all(sr, CK_ENV);
#endif
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
