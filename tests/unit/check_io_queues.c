/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of io_queues.c against the scripted transport: creating I/O
 * queues (the exact admin sequence, each queue's Connect, what the
 * controller grants) and what a failed or refused create leaves behind.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "io_fixture.h"

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

static Suite *io_queues_suite(void)
{
	Suite *s = suite_create("io_queues");
	TCase *tc;

	tc = tcase_create("create");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_create_sequence);
	tcase_add_test(tc, test_create_granted_fewer);
	tcase_add_test(tc, test_create_take_fewer);
	tcase_add_test(tc, test_ask_io_queues);
	tcase_add_test(tc, test_create_auto_queue_size);
	tcase_add_test(tc, test_create_bad_opts);
	tcase_add_test(tc, test_create_twice_and_again);
	tcase_add_test(tc, test_create_fails_midway);
	tcase_add_test(tc, test_create_qid_still_held);
	tcase_add_test(tc, test_create_qid_held_for_good);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return io_check_main(io_queues_suite());
}
