/*
 * Unit tests of discovery.c and nvmefs_get_log_page() against the
 * scripted transport: reading the discovery log consistently while it
 * changes, the bounds on what a target can make us do, how reads are cut
 * into Get Log Page commands, and walking referrals.
 *
 * One job, kept in one file past 700 lines: reading the discovery log,
 * each case one scripted log.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvme/util.h>

#include "fake_transport.h"
#include "test_util.h"
#include "ctrl/admin_cmds.h"
#include "lifecycle/ctrl.h"
#include "types/ctrl_types.h"
#include "transport/transport.h"
#include "types/transport_ops.h"

#define LID_DISC NVME_LOG_LID_DISCOVER	/* 0x70 */
#define HDR 1024u
#define ENTRY 1024u

/* ------------------------------------------------------------------------ */
/* Log images                                                               */
/* ------------------------------------------------------------------------ */

/* A log with room for @room entries, claiming @numrec and generation @genctr. */
static struct nvmf_discovery_log *img_new(uint64_t genctr, uint64_t numrec, unsigned int room)
{
	struct nvmf_discovery_log *log = calloc(1, HDR + (size_t)room * ENTRY);

	ck_assert_ptr_nonnull(log);
	log->genctr = nvmefs_cpu_to_le64(genctr);
	log->numrec = nvmefs_cpu_to_le64(numrec);
	return log;
}

/* Copy @s into a fixed field, padded with @pad as targets do. */
static void pad_field(char *dst, size_t size, const char *s, char pad)
{
	size_t n = strlen(s);

	memset(dst, pad, size);
	memcpy(dst, s, n < size ? n : size);
}

static void entry_subsys(struct nvmf_disc_log_entry *e, const char *traddr, const char *nqn)
{
	memset(e, 0, sizeof(*e));
	e->trtype = NVMF_TRTYPE_RDMA;
	e->adrfam = NVMF_ADDR_FAMILY_IP4;
	e->subtype = NVME_NQN_NVME;
	e->portid = nvmefs_cpu_to_le16(1);
	e->cntlid = nvmefs_cpu_to_le16(0xffff);
	pad_field(e->trsvcid, sizeof(e->trsvcid), "4420", ' ');
	pad_field(e->traddr, sizeof(e->traddr), traddr, ' ');
	pad_field(e->subnqn, sizeof(e->subnqn), nqn, '\0');
}

static void entry_referral(struct nvmf_disc_log_entry *e, uint8_t trtype, const char *traddr,
			   const char *trsvcid, char pad)
{
	memset(e, 0, sizeof(*e));
	e->trtype = trtype;
	e->adrfam = NVMF_ADDR_FAMILY_IP4;
	e->subtype = NVME_NQN_DISC;
	e->portid = nvmefs_cpu_to_le16(2);
	e->cntlid = nvmefs_cpu_to_le16(0xffff);
	pad_field(e->trsvcid, sizeof(e->trsvcid), trsvcid, pad);
	pad_field(e->traddr, sizeof(e->traddr), traddr, pad);
	pad_field(e->subnqn, sizeof(e->subnqn), NVME_DISC_SUBSYS_NAME, '\0');
}

/* @n subsystem entries named "<prefix><i>". */
static struct nvmf_discovery_log *img_subsystems(uint64_t genctr, unsigned int n,
						 const char *prefix)
{
	struct nvmf_discovery_log *log = img_new(genctr, n, n);
	char nqn[64];
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(nqn, sizeof(nqn), "nqn.2024-01.io.example:%s%u", prefix, i);
		entry_subsys(&log->entries[i], "192.0.2.50", nqn);
	}
	return log;
}

static void script_header(const struct nvmf_discovery_log *img)
{
	fake_expect_log(LID_DISC, 0, HDR, img);
}

/* The whole log of @numrec records (header and entries) as the library
 * reads it after the header: in pieces of at most @piece bytes, the
 * header again after more than one.  Returns how many pieces. */
static unsigned int script_whole(const struct nvmf_discovery_log *img, uint64_t numrec,
				 uint32_t piece)
{
	uint64_t off = 0, left = HDR + numrec * ENTRY;
	unsigned int n = 0;

	while (left) {
		uint32_t chunk = left < piece ? (uint32_t)left : piece;

		fake_expect_log(LID_DISC, off, chunk, img);
		off += chunk;
		left -= chunk;
		n++;
	}
	if (n > 1)
		script_header(img);
	return n;
}

/* A log that holds still, read by a controller without MDTS: the header,
 * then the whole log in one command (registered memory takes up to 1 MiB). */
static void script_stable_read(const struct nvmf_discovery_log *img)
{
	uint64_t numrec = nvmefs_le64_to_cpu(img->numrec);

	script_header(img);
	if (numrec)
		script_whole(img, numrec, 1u << 20);
}

static void disconnect(struct nvmefs_ctrl *ctrl)
{
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}

/* ------------------------------------------------------------------------ */
/* Reading the log                                                          */
/* ------------------------------------------------------------------------ */

/* A small log: the header, then the whole log in one command through an
 * admin data slot, nothing registered; 2 commands where libnvme takes 3. */
START_TEST(test_log_stable)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_subsystems(5, 2, "sub"), *log = NULL;
	unsigned int submits, regs;

	script_stable_read(img);
	submits = fake_stats.submits;
	regs = fake_stats.mr_regs;
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_uint_eq(fake_stats.submits - submits, 2);
	ck_assert_uint_eq(fake_stats.mr_regs, regs);
	ck_assert_ptr_nonnull(log);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->genctr), 5);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->numrec), 2);
	ck_assert_mem_eq(log->entries, img->entries, 2 * ENTRY);
	ck_assert_str_eq(log->entries[1].subnqn, "nqn.2024-01.io.example:sub1");
	free(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

START_TEST(test_log_empty)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_new(3, 0, 0), *log = NULL;

	script_header(img);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->numrec), 0);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->genctr), 3);
	free(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

/* Read in pieces (MDTS 1: 8 KiB a command), the log changed in between:
 * the header read after the pieces says so, and the log is read again. */
START_TEST(test_log_genctr_changes)
{
	static const struct fake_target t = { .cntlid = 1, .mdts = 1 };
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", &t, 0);
	struct nvmf_discovery_log *old = img_subsystems(1, 9, "old");
	struct nvmf_discovery_log *cur = img_subsystems(2, 9, "new");
	struct nvmf_discovery_log *log = NULL;

	script_header(old);
	fake_expect_log(LID_DISC, 0, 8192, old);
	fake_expect_log(LID_DISC, 8192, HDR + 9 * ENTRY - 8192, old);
	script_header(cur);		/* changed while we read: again */
	script_header(cur);
	ck_assert_uint_eq(script_whole(cur, 9, 8192), 2);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->genctr), 2);
	ck_assert_mem_eq(log->entries, cur->entries, 9 * ENTRY);
	ck_assert_str_eq(log->entries[0].subnqn, "nqn.2024-01.io.example:new0");
	free(log);
	free(old);
	free(cur);
	disconnect(ctrl);
}
END_TEST

/* 200 records, changed between the header and the read of the whole log
 * (a new generation, as many records): that read was one command, one
 * snapshot of header and entries together, so it is the log; 2 commands
 * where 4 KiB pieces took 52. */
START_TEST(test_log_one_read_is_a_snapshot)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *old = img_subsystems(1, 200, "old");
	struct nvmf_discovery_log *cur = img_subsystems(2, 200, "new");
	struct nvmf_discovery_log *log = NULL;
	unsigned int submits;

	script_header(old);
	ck_assert_uint_eq(script_whole(cur, 200, 1u << 20), 1);
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_uint_eq(fake_stats.submits - submits, 2);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->genctr), 2);
	ck_assert_mem_eq(log->entries, cur->entries, 200 * ENTRY);
	ck_assert_uint_eq(fake_stats.mr_regs, fake_stats.mr_deregs);
	free(log);
	free(old);
	free(cur);
	disconnect(ctrl);
}
END_TEST

START_TEST(test_log_numrec_changes)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *one = img_subsystems(7, 1, "sub");
	struct nvmf_discovery_log *two = img_subsystems(7, 2, "sub");	/* same genctr */
	struct nvmf_discovery_log *log = NULL;

	script_header(one);
	fake_expect_log(LID_DISC, 0, HDR + ENTRY, two);	/* grew after the header: again */
	script_stable_read(two);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->numrec), 2);
	ck_assert_mem_eq(log->entries, two->entries, 2 * ENTRY);
	free(log);
	free(one);
	free(two);
	disconnect(ctrl);
}
END_TEST

START_TEST(test_log_never_stable)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_subsystems(0, 1, "sub"), *log = NULL;
	unsigned int i, submits;

	/* Each header claims one record, and by the read of the log there are two. */
	for (i = 0; i < 10; i++) {
		img->numrec = nvmefs_cpu_to_le64(1);
		script_header(img);
		img->numrec = nvmefs_cpu_to_le64(2);
		fake_expect_log(LID_DISC, 0, HDR + ENTRY, img);
	}
	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), -EAGAIN);
	ck_assert_uint_eq(fake_stats.submits - submits, 20);
	assert_msg_has("kept changing");
	assert_msg_has("10 tries");
	ck_assert_ptr_null(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

/* More records than 1024: refused before anything is allocated for them
 * (under ASan, a 2^64-byte allocation would abort the test). */
START_TEST(test_log_too_many_records)
{
	static const uint64_t numrec[] = { 1025, UINT64_MAX, (UINT64_MAX >> 10) + 1 };
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_new(1, numrec[_i], 0), *log = NULL;
	char want[64];

	script_header(img);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), -E2BIG);
	snprintf(want, sizeof(want), "claims %llu records", (unsigned long long)numrec[_i]);
	assert_msg_has(want);
	ck_assert_ptr_null(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

/* Exactly 1024 records: accepted, read into registered memory in two
 * pieces (1 MiB, the most a command takes, and the last 1 KiB) and checked
 * against the header read again: 4 commands, where 4 KiB pieces took 258. */
START_TEST(test_log_max_records)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_subsystems(9, 1024, "s"), *log = NULL;
	unsigned int submits, regs;

	script_stable_read(img);
	submits = fake_stats.submits;
	regs = fake_stats.mr_regs;
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_uint_eq(fake_stats.submits - submits, 4);
	ck_assert_uint_eq(fake_stats.mr_regs - regs, 1);
	ck_assert_uint_eq(fake_stats.mr_regs, fake_stats.mr_deregs);
	ck_assert_uint_eq(nvmefs_le64_to_cpu(log->numrec), 1024);
	ck_assert_str_eq(log->entries[1023].subnqn, "nqn.2024-01.io.example:s1023");
	ck_assert_mem_eq(log->entries, img->entries, 1024 * ENTRY);
	free(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

START_TEST(test_log_truncated)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_subsystems(4, 2, "sub"), *log = NULL;
	struct nvmf_discovery_log *big = img_new(4, 3, 3);

	/* numrec 3, but the third record was never written. */
	memcpy(big->entries, img->entries, 2 * ENTRY);
	script_stable_read(big);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), -EPROTO);
	assert_msg_has("claims 3 records but record 2 is empty");
	ck_assert_ptr_null(log);
	free(img);
	free(big);
	disconnect(ctrl);
}
END_TEST

START_TEST(test_log_error_status)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	struct nvmf_discovery_log *img = img_subsystems(4, 2, "sub"), *log = NULL;
	struct fake_step *s;

	script_header(img);
	s = fake_expect_log(LID_DISC, 0, HDR + 2 * ENTRY, img);
	fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), -EIO);
	assert_msg_has("Get Log Page 0x70 (3072 bytes at 0) from 192.0.2.1:4420 failed: ");
	assert_msg_has(nvme_status_to_string(s->status, false));
	ck_assert_ptr_null(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

START_TEST(test_log_not_discovery)
{
	static const struct fake_target io = { .cntlid = 2, .io = true };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmf_discovery_log *log = NULL;

	fake_opts(&opts, "192.0.2.1", 0);
	opts.subnqn = "nqn.2024-01.io.example:subsys1";
	fake_script_connect("192.0.2.1", "4420", &io);
	ck_assert_int_eq(nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl), 0);
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), -EINVAL);
	assert_msg_has("not a discovery controller");
	disconnect(ctrl);
}
END_TEST

/* A log larger than a data slot, read into registered memory in pieces
 * as MDTS 1 (8 KiB) allows: NUMD and offsets worked out by hand. */
START_TEST(test_log_chunking)
{
	static const struct fake_target t = { .cntlid = 1, .mdts = 1 };
	static const struct { uint32_t cdw10, cdw12, len; } want[] = {
		{ 0x00ff0070, 0, 1024 },	/* header: NUMD 255 */
		{ 0x07ff0070, 0, 8192 },	/* header and records 0-6: NUMD 2047 */
		{ 0x01ff0070, 8192, 2048 },	/* records 7 and 8: NUMD 511 */
		{ 0x00ff0070, 0, 1024 },	/* header again */
	};
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", &t, 0);
	struct nvmf_discovery_log *img = img_subsystems(1, 9, "sub"), *log = NULL;
	unsigned int i;

	ck_assert_uint_eq(nvmefs_ctrl_admin_max_xfer(ctrl), 4096);
	for (i = 0; i < 4; i++) {
		struct fake_step *s = fake_expect_cmd(nvme_admin_get_log_page);

		s->match = FAKE_M_NSID | FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 |
			   FAKE_M_CDW13 | FAKE_M_LEN;
		s->nsid = 0;
		s->cdw10 = want[i].cdw10;
		s->cdw11 = 0;
		s->cdw12 = want[i].cdw12;
		s->cdw13 = 0;
		s->len = want[i].len;
		s->dir = NVMEFS_DIR_FROM_CTRL;
		fake_step_data(s, (uint8_t *)img + want[i].cdw12, want[i].len);
	}
	ck_assert_int_eq(nvmefs_get_discovery_log(ctrl, &log), 0);
	ck_assert_mem_eq(log->entries, img->entries, 9 * ENTRY);
	free(log);
	free(img);
	disconnect(ctrl);
}
END_TEST

/*
 * MDTS counts in minimum pages: with 64 KiB ones (CAP.MPSMIN 4) an MDTS of
 * 16 is 4 GiB, which wrapped to 0 in 32 bits and made the log page loop
 * ask for 0 bytes forever.  Any limit from 4 GiB up is no limit here.
 */
START_TEST(test_mdts_large_pages)
{
	static const struct fake_target t = { .cntlid = 1, .cap = 4ull << 48, .mdts = 16 };
	static const struct fake_target t2 = { .cntlid = 1, .cap = 15ull << 48, .mdts = 255 };
	static const struct fake_target t3 = { .cntlid = 1, .cap = 4ull << 48, .mdts = 1 };
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", &t, 0);

	ck_assert_uint_eq(nvmefs_ctrl_admin_max_xfer(ctrl), 4096);
	disconnect(ctrl);
	ctrl = fake_connect("192.0.2.1", &t2, 0);
	ck_assert_uint_eq(nvmefs_ctrl_admin_max_xfer(ctrl), 4096);
	disconnect(ctrl);
	/* 2 pages of 64 KiB: more than the 4 KiB slot, which stays the limit. */
	ctrl = fake_connect("192.0.2.1", &t3, 0);
	ck_assert_uint_eq(nvmefs_ctrl_admin_max_xfer(ctrl), 4096);
	disconnect(ctrl);
}
END_TEST

/* Offsets beyond 4 GiB go in LPOU (cdw13); odd sizes are refused. */
START_TEST(test_get_log_page_offsets)
{
	struct nvmefs_ctrl *ctrl = fake_connect("192.0.2.1", NULL, 0);
	static const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t buf[8] = { 0 };
	struct fake_step *s;
	unsigned int submits;

	s = fake_expect_cmd(nvme_admin_get_log_page);
	s->match = FAKE_M_NSID | FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 | FAKE_M_CDW13 |
		   FAKE_M_LEN;
	s->nsid = 0xffffffff;
	s->cdw10 = 0x00010002;		/* LID 2, NUMDL 1 */
	s->cdw11 = 0;
	s->cdw12 = 0x00000400;
	s->cdw13 = 0x00000001;
	s->len = 8;
	s->dir = NVMEFS_DIR_FROM_CTRL;
	fake_step_data(s, data, sizeof(data));
	ck_assert_int_eq(nvmefs_get_log_page(ctrl, 2, 0xffffffff, 0x100000400ull, buf, 8), 0);
	ck_assert_mem_eq(buf, data, 8);

	submits = fake_stats.submits;
	ck_assert_int_eq(nvmefs_get_log_page(ctrl, 2, 0, 0, buf, 6), -EINVAL);
	ck_assert_int_eq(nvmefs_get_log_page(ctrl, 2, 0, 2, buf, 8), -EINVAL);
	assert_msg_has("whole dwords");
	ck_assert_uint_eq(fake_stats.submits, submits);
	disconnect(ctrl);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Referrals                                                                */
/* ------------------------------------------------------------------------ */

/* numrec of a referral that could not be read, with the reason in msg. */
#define UNREAD UINT64_MAX

struct seen {
	char trtype[16];
	char traddr[64];
	char trsvcid[16];
	int depth;
	uint64_t numrec;
	char msg[256];
};

static struct seen seen[16];
static int nr_seen;
static int stop_at_depth = -1;

static int record(const struct nvmefs_connect_opts *where, const struct nvmf_discovery_log *log,
		  int depth, void *arg)
{
	ck_assert_ptr_eq(arg, seen);
	ck_assert_int_lt(nr_seen, 16);
	snprintf(seen[nr_seen].trtype, sizeof(seen[0].trtype), "%s",
		 where->trtype ? where->trtype : "(default)");
	snprintf(seen[nr_seen].traddr, sizeof(seen[0].traddr), "%s", where->traddr);
	snprintf(seen[nr_seen].trsvcid, sizeof(seen[0].trsvcid), "%s",
		 where->trsvcid ? where->trsvcid : "(default)");
	seen[nr_seen].depth = depth;
	seen[nr_seen].numrec = log ? nvmefs_le64_to_cpu(log->numrec) : UNREAD;
	snprintf(seen[nr_seen].msg, sizeof(seen[0].msg), "%s", log ? "" : nvmefs_errmsg());
	nr_seen++;
	return depth == stop_at_depth ? 42 : 0;
}

static void assert_seen(int i, const char *traddr, const char *trsvcid, int depth,
			uint64_t numrec)
{
	ck_assert_int_lt(i, nr_seen);
	ck_assert_str_eq(seen[i].traddr, traddr);
	ck_assert_str_eq(seen[i].trsvcid, trsvcid);
	ck_assert_int_eq(seen[i].depth, depth);
	ck_assert_uint_eq(seen[i].numrec, numrec);
}

static void referral_setup(void)
{
	fake_setup();
	nr_seen = 0;
	stop_at_depth = -1;
}

/* One discovery controller visited: connect, read, disconnect. */
static void script_visit(const char *traddr, const struct nvmf_discovery_log *img)
{
	static const struct fake_target plain = { .cntlid = 1, .vs = 0x10400 };

	fake_script_connect(traddr, "4420", &plain);
	script_stable_read(img);
	fake_script_disconnect();
}

/* A: an NVM subsystem, and a referral to B (space padded). */
static struct nvmf_discovery_log *img_a(void)
{
	struct nvmf_discovery_log *img = img_new(1, 2, 2);

	entry_subsys(&img->entries[0], "10.0.0.1", "nqn.2024-01.io.example:a");
	entry_referral(&img->entries[1], NVMF_TRTYPE_RDMA, "10.0.0.2", "4420", ' ');
	return img;
}

static int discover(int max_depth)
{
	struct nvmefs_connect_opts opts;

	fake_opts(&opts, "10.0.0.1", 0);	/* port left to the default */
	return nvmefs_discover(&opts, max_depth, record, seen);
}

START_TEST(test_referral_followed)
{
	struct nvmf_discovery_log *a = img_a(), *b = img_subsystems(1, 1, "b");

	script_visit("10.0.0.1", a);
	script_visit("10.0.0.2", b);
	ck_assert_int_eq(discover(1), 0);
	ck_assert_int_eq(nr_seen, 2);
	assert_seen(0, "10.0.0.1", "4420", 0, 2);
	assert_seen(1, "10.0.0.2", "4420", 1, 1);
	ck_assert_uint_eq(fake_stats.creates, 2);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_referral_not_followed_at_depth_0)
{
	struct nvmf_discovery_log *a = img_a();

	script_visit("10.0.0.1", a);
	ck_assert_int_eq(discover(0), 0);
	ck_assert_int_eq(nr_seen, 1);
	assert_seen(0, "10.0.0.1", "4420", 0, 2);
	ck_assert_uint_eq(fake_stats.creates, 1);
	free(a);
}
END_TEST

/* A refers to itself and to B, B back to A (NUL padded): each once. */
START_TEST(test_referral_loop)
{
	struct nvmf_discovery_log *a = img_new(1, 3, 3), *b = img_new(1, 2, 2);

	entry_referral(&a->entries[0], NVMF_TRTYPE_RDMA, "10.0.0.1", "4420", ' ');
	entry_subsys(&a->entries[1], "10.0.0.1", "nqn.2024-01.io.example:a");
	entry_referral(&a->entries[2], NVMF_TRTYPE_RDMA, "10.0.0.2", "4420", ' ');
	entry_referral(&b->entries[0], NVMF_TRTYPE_RDMA, "10.0.0.1", "4420", '\0');
	entry_subsys(&b->entries[1], "10.0.0.2", "nqn.2024-01.io.example:b");
	script_visit("10.0.0.1", a);
	script_visit("10.0.0.2", b);
	ck_assert_int_eq(discover(5), 0);
	ck_assert_int_eq(nr_seen, 2);
	assert_seen(0, "10.0.0.1", "4420", 0, 3);
	assert_seen(1, "10.0.0.2", "4420", 1, 2);
	free(a);
	free(b);
}
END_TEST

/* nvmet's ports are per transport: RDMA and TCP listen side by side on one
 * address and port. A referral there over the other transport is another
 * discovery controller, read once too; B's referral back to A over RDMA is
 * A again. */
START_TEST(test_referral_other_transport_same_port)
{
	struct nvmf_discovery_log *a = img_new(1, 2, 2), *b = img_new(1, 2, 2);

	entry_subsys(&a->entries[0], "10.0.0.1", "nqn.2024-01.io.example:a");
	entry_referral(&a->entries[1], NVMF_TRTYPE_TCP, "10.0.0.1", "4420", ' ');
	entry_referral(&b->entries[0], NVMF_TRTYPE_RDMA, "10.0.0.1", "4420", '\0');
	entry_subsys(&b->entries[1], "10.0.0.1", "nqn.2024-01.io.example:a");
	script_visit("10.0.0.1", a);
	script_visit("10.0.0.1", b);
	ck_assert_int_eq(discover(5), 0);
	ck_assert_int_eq(nr_seen, 2);
	assert_seen(0, "10.0.0.1", "4420", 0, 2);
	assert_seen(1, "10.0.0.1", "4420", 1, 2);
	/* The name the table (tests/lib/fake_table.c) gives NVMe/TCP's number. */
	ck_assert_str_eq(seen[1].trtype, "stream");
	free(a);
	free(b);
}
END_TEST

/* A -> B -> C: max_depth 1 stops at B, 2 reaches C. */
START_TEST(test_referral_depth_limit)
{
	int max_depth = _i + 1;
	struct nvmf_discovery_log *a = img_a(), *b = img_new(1, 1, 1);
	struct nvmf_discovery_log *c = img_subsystems(1, 1, "c");

	entry_referral(&b->entries[0], NVMF_TRTYPE_RDMA, "10.0.0.3", "4421", '\0');
	script_visit("10.0.0.1", a);
	script_visit("10.0.0.2", b);
	if (max_depth >= 2) {
		static const struct fake_target plain = { .cntlid = 1 };

		fake_script_connect("10.0.0.3", "4421", &plain);
		script_stable_read(c);
		fake_script_disconnect();
	}
	ck_assert_int_eq(discover(max_depth), 0);
	ck_assert_int_eq(nr_seen, max_depth + 1);
	assert_seen(1, "10.0.0.2", "4420", 1, 1);
	if (max_depth >= 2)
		assert_seen(2, "10.0.0.3", "4421", 2, 1);
	free(a);
	free(b);
	free(c);
}
END_TEST

/* Only discovery subsystems over a transport this library has are
 * referrals to follow. */
START_TEST(test_referral_other_kinds_ignored)
{
	struct nvmf_discovery_log *a = img_new(1, 2, 2);

	entry_referral(&a->entries[0], NVMF_TRTYPE_FC, "10.0.0.7", "8009", ' ');
	entry_subsys(&a->entries[1], "10.0.0.8", "nqn.2024-01.io.example:a");
	script_visit("10.0.0.1", a);
	ck_assert_int_eq(discover(3), 0);
	ck_assert_int_eq(nr_seen, 1);
	free(a);
}
END_TEST

/* A refers to B, then to C: B's log cannot be read. */
static struct nvmf_discovery_log *img_a_refers_b_c(void)
{
	struct nvmf_discovery_log *img = img_new(1, 2, 2);

	entry_referral(&img->entries[0], NVMF_TRTYPE_RDMA, "10.0.0.2", "4420", ' ');
	entry_referral(&img->entries[1], NVMF_TRTYPE_RDMA, "10.0.0.3", "4420", ' ');
	return img;
}

static void script_refused(const char *traddr)
{
	struct fake_step *s = fake_expect_create(traddr, "4420");

	s->create_ret = -ECONNREFUSED;
	snprintf(s->create_msg, sizeof(s->create_msg), "%s refused (scripted)", traddr);
}

/* A referral whose entry requires a secure channel (TREQ) is not
 * connected to without one: it is reported, and the walk goes on. */
START_TEST(test_referral_requiring_tls_refused)
{
	struct nvmf_discovery_log *a = img_a_refers_b_c(), *c = img_subsystems(1, 1, "c");

	a->entries[0].trtype = NVMF_TRTYPE_TCP;
	a->entries[0].treq = NVMF_TREQ_REQUIRED;
	script_visit("10.0.0.1", a);
	script_visit("10.0.0.3", c);
	ck_assert_int_eq(discover(1), 0);
	ck_assert_int_eq(nr_seen, 3);
	assert_seen(1, "10.0.0.2", "4420", 1, UNREAD);
	ck_assert_ptr_nonnull(strstr(seen[1].msg, "give its TLS pre-shared key with --tls-key"));
	assert_seen(2, "10.0.0.3", "4420", 1, 1);
	free(a);
	free(c);
}
END_TEST

/* One unreachable referral is reported and the walk goes on: the other
 * logs are still worth having. */
START_TEST(test_referral_unreachable_skipped)
{
	struct nvmf_discovery_log *a = img_a_refers_b_c(), *c = img_subsystems(1, 1, "c");

	script_visit("10.0.0.1", a);
	script_refused("10.0.0.2");
	script_visit("10.0.0.3", c);
	ck_assert_int_eq(discover(1), 0);
	ck_assert_int_eq(nr_seen, 3);
	assert_seen(1, "10.0.0.2", "4420", 1, UNREAD);
	ck_assert_str_eq(seen[1].msg, "10.0.0.2 refused (scripted)");
	assert_seen(2, "10.0.0.3", "4420", 1, 1);
	free(a);
	free(c);
}
END_TEST

/* Connected, but the Get Log Page fails: the same as unreachable. */
START_TEST(test_referral_log_error_skipped)
{
	static const struct fake_target plain = { .cntlid = 1, .vs = 0x10400 };
	struct nvmf_discovery_log *a = img_a_refers_b_c(), *c = img_subsystems(1, 1, "c");

	script_visit("10.0.0.1", a);
	fake_script_connect("10.0.0.2", "4420", &plain);
	fake_step_status(fake_expect_log(LID_DISC, 0, HDR, a), NVME_SCT_GENERIC,
			 NVME_SC_INTERNAL, true);
	fake_script_disconnect();
	script_visit("10.0.0.3", c);
	ck_assert_int_eq(discover(1), 0);
	ck_assert_int_eq(nr_seen, 3);
	assert_seen(1, "10.0.0.2", "4420", 1, UNREAD);
	ck_assert_msg(seen[1].msg[0] != '\0', "no reason given for the unread log");
	assert_seen(2, "10.0.0.3", "4420", 1, 1);
	free(a);
	free(c);
}
END_TEST

/* The callback may still stop the walk at an unreadable referral. */
START_TEST(test_referral_unreachable_stop)
{
	struct nvmf_discovery_log *a = img_a_refers_b_c();

	stop_at_depth = 1;
	script_visit("10.0.0.1", a);
	script_refused("10.0.0.2");
	ck_assert_int_eq(discover(1), 42);
	ck_assert_int_eq(nr_seen, 2);
	free(a);
}
END_TEST

/* The log asked for is the result: failing to read it fails the call. */
START_TEST(test_discover_first_unreachable)
{
	script_refused("10.0.0.1");
	ck_assert_int_eq(discover(1), -ECONNREFUSED);
	ck_assert_int_eq(nr_seen, 0);
	assert_msg_has("10.0.0.1 refused");
}
END_TEST

START_TEST(test_discover_callback_stops)
{
	struct nvmf_discovery_log *a = img_a();

	stop_at_depth = 0;
	script_visit("10.0.0.1", a);
	ck_assert_int_eq(discover(3), 42);
	ck_assert_int_eq(nr_seen, 1);
	free(a);
}
END_TEST

START_TEST(test_discover_bad_args)
{
	struct nvmefs_connect_opts opts;

	fake_opts(&opts, "10.0.0.1", 0);
	opts.subnqn = "nqn.2024-01.io.example:subsys1";
	ck_assert_int_eq(nvmefs_discover(&opts, 0, record, seen), -EINVAL);
	assert_msg_has("not the discovery NQN");
	fake_opts(&opts, NULL, 0);
	ck_assert_int_eq(nvmefs_discover(&opts, 0, record, seen), -EINVAL);
	ck_assert_int_eq(nr_seen, 0);
	ck_assert_uint_eq(fake_stats.creates, 0);
}
END_TEST

static Suite *discovery_suite(void)
{
	Suite *s = suite_create("discovery");
	TCase *tc;

	tc = tcase_create("log");
	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_log_stable);
	tcase_add_test(tc, test_log_empty);
	tcase_add_test(tc, test_log_genctr_changes);
	tcase_add_test(tc, test_log_one_read_is_a_snapshot);
	tcase_add_test(tc, test_log_numrec_changes);
	tcase_add_test(tc, test_log_never_stable);
	tcase_add_loop_test(tc, test_log_too_many_records, 0, 3);
	tcase_add_test(tc, test_log_max_records);
	tcase_add_test(tc, test_log_truncated);
	tcase_add_test(tc, test_log_error_status);
	tcase_add_test(tc, test_log_not_discovery);
	tcase_add_test(tc, test_log_chunking);
	tcase_add_test(tc, test_mdts_large_pages);
	tcase_add_test(tc, test_get_log_page_offsets);
	suite_add_tcase(s, tc);

	tc = tcase_create("referrals");
	tcase_add_checked_fixture(tc, referral_setup, fake_teardown);
	tcase_add_test(tc, test_referral_followed);
	tcase_add_test(tc, test_referral_not_followed_at_depth_0);
	tcase_add_test(tc, test_referral_loop);
	tcase_add_test(tc, test_referral_other_transport_same_port);
	tcase_add_loop_test(tc, test_referral_depth_limit, 0, 2);
	tcase_add_test(tc, test_referral_other_kinds_ignored);
	tcase_add_test(tc, test_referral_unreachable_skipped);
	tcase_add_test(tc, test_referral_requiring_tls_refused);
	tcase_add_test(tc, test_referral_log_error_skipped);
	tcase_add_test(tc, test_referral_unreachable_stop);
	tcase_add_test(tc, test_discover_first_unreachable);
	tcase_add_test(tc, test_discover_callback_stops);
	tcase_add_test(tc, test_discover_bad_args);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return run_suite(discovery_suite(), CK_ENV);
}
