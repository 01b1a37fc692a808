/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of namespaces.c against the scripted transport: the active
 * list and each namespace's Identify data when I/O queues are created,
 * and the rescans after a reconnect: only a definite answer removes a
 * namespace, and a reader of its geometry races none of it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "io_fixture.h"

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
 * itself shows under ThreadSanitizer (tests/unit/tsan/check_namespaces).
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

static Suite *namespaces_suite(void)
{
	Suite *s = suite_create("namespaces");
	TCase *tc;

	tc = tcase_create("create");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_create_bad_lba_format);
	tcase_add_test(tc, test_namespace_pages);
	tcase_add_test(tc, test_namespace_identify_fails);
	suite_add_tcase(s, tc);

	tc = tcase_create("rescan");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_rescan_status_may_pass, 0, 
			    (int)(sizeof(may_pass) / sizeof(may_pass[0])));
	tcase_add_test(tc, test_rescan_timeout_keeps_namespace);
	tcase_add_test(tc, test_recheck_status_may_pass);
	tcase_add_loop_test(tc, test_rescan_definite_removes, 0, 2);
	tcase_add_test(tc, test_outage_namespace_replaced);
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
	return io_check_main(namespaces_suite());
}
