/*
 * Which discovery log records --all-paths connects (src/cli/paths_log.c):
 * the subsystem's records over every transport nvmefs has, as 'nvme
 * connect-all' connects them; a record that requires a secure channel is
 * refused (nvmefs has no TLS yet), and one over a transport nvmefs lacks
 * is left.  And how --path is read (src/cli/paths.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvme/types.h>
#include <nvmefs/wire.h>

#include "test_util.h"
#include "../../src/cli/paths.h"
#include "../../src/cli/paths_log.h"

#define SUBNQN "nqn.2026-11.io.nvmefs.testbed:sub1"

/* A record as a target sends it: fields space-padded, not terminated. */
static void record(struct nvmf_disc_log_entry *e, uint8_t trtype, uint8_t subtype, uint8_t treq,
		   const char *subnqn)
{
	memset(e, 0, sizeof(*e));
	e->trtype = trtype;
	e->adrfam = NVMF_ADDR_FAMILY_IP4;
	e->subtype = subtype;
	e->treq = treq;
	memset(e->trsvcid, ' ', sizeof(e->trsvcid));
	memcpy(e->trsvcid, "4420", 4);
	memset(e->traddr, ' ', sizeof(e->traddr));
	memcpy(e->traddr, "198.18.0.1", 10);
	memcpy(e->subnqn, subnqn, strlen(subnqn));
}

START_TEST(test_rdma_record_taken)
{
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, NVMF_TREQ_NOT_SPECIFIED, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_TAKE);
	ck_assert_str_eq(trtype, "rdma");
}
END_TEST

/* Over TCP whatever transport the log was read over: paths may mix them. */
START_TEST(test_tcp_record_taken)
{
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_NVME,
	       NVMF_TREQ_NOT_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW, SUBNQN);
	e.tsas.tcp.sectype = NVMF_TCP_SECTYPE_NONE;
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_TAKE);
	ck_assert_str_eq(trtype, "tcp");
}
END_TEST

/* TREQ bits 1:0 say "required": refused, whatever the other bits, over
 * NVMe/TCP without a key, and over RDMA even with one (TLS is NVMe/TCP's:
 * nvmefs has no secure channel over RDMA); "not specified" (nvmet's
 * default) and "not required" are not. */
START_TEST(test_secure_channel_required_refused)
{
	static const struct {
		uint8_t trtype;
		bool key;
		enum path_record kind;
	} cases[] = {
		{ NVMF_TRTYPE_TCP, false, PATH_RECORD_NEEDS_TLS },
		{ NVMF_TRTYPE_RDMA, false, PATH_RECORD_NO_SECURE_CHANNEL },
		{ NVMF_TRTYPE_RDMA, true, PATH_RECORD_NO_SECURE_CHANNEL },
	};
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		record(&e, cases[i].trtype, NVME_NQN_NVME, NVMF_TREQ_REQUIRED, SUBNQN);
		e.tsas.tcp.sectype = NVMF_TCP_SECTYPE_TLS13;
		ck_assert_int_eq(path_record_kind(&e, SUBNQN, cases[i].key, &trtype), cases[i].kind);
		record(&e, cases[i].trtype, NVME_NQN_NVME,
		       NVMF_TREQ_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW, SUBNQN);
		ck_assert_int_eq(path_record_kind(&e, SUBNQN, cases[i].key, &trtype), cases[i].kind);
	}
	/* Bits 1:0 = 3 is reserved, not "required". */
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 3, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_TAKE);
}
END_TEST

/* With a TLS key, a record that requires a secure channel is a path (over
 * TLS: its TSAS says the port runs it); one that runs none goes plain. */
START_TEST(test_secure_channel_taken_with_key)
{
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_NVME, NVMF_TREQ_REQUIRED, SUBNQN);
	e.tsas.tcp.sectype = NVMF_TCP_SECTYPE_TLS13;
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, true, &trtype), PATH_RECORD_TAKE);
	ck_assert_str_eq(trtype, "tcp");
	ck_assert(nvmefs_disc_entry_tls(&e));
	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_NVME, NVMF_TREQ_NOT_SPECIFIED, SUBNQN);
	e.tsas.tcp.sectype = NVMF_TCP_SECTYPE_NONE;
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, true, &trtype), PATH_RECORD_TAKE);
	ck_assert(!nvmefs_disc_entry_tls(&e));
	/* Not required, but the port runs TLS: TLS, as libnvme's connect-all. */
	e.tsas.tcp.sectype = NVMF_TCP_SECTYPE_TLS13;
	ck_assert(nvmefs_disc_entry_tls(&e));
}
END_TEST

START_TEST(test_other_records_left)
{
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, "nqn.2026-11.io.nvmefs.testbed:sub2");
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_OTHER);
	/* A prefix of the NQN is another subsystem. */
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, "nqn.2026-11.io.nvmefs.testbed:sub");
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_OTHER);
	/* The discovery subsystem and referrals are not paths, TLS or not. */
	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_CURR, NVMF_TREQ_REQUIRED, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_OTHER);
	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_DISC, 0, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_OTHER);
	/* Fibre Channel and loop: transports nvmefs does not have. */
	record(&e, NVMF_TRTYPE_FC, NVME_NQN_NVME, 0, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_NO_TRANSPORT);
	record(&e, NVMF_TRTYPE_LOOP, NVME_NQN_NVME, 0, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, false, &trtype), PATH_RECORD_NO_TRANSPORT);
}
END_TEST

/* The longest NQN the user can give (NVMF_NQN_SIZE, 223): a record
 * matches it with the rest of its 256-byte field padded, not with more
 * characters after it, however malformed such a record is. */
START_TEST(test_longest_nqn_compared_whole)
{
	char nqn[NVMF_NQN_SIZE + 1], longer[NVME_NQN_LENGTH + 1];
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	memset(nqn, 'q', NVMF_NQN_SIZE);
	memcpy(nqn, "nqn.", 4);
	nqn[NVMF_NQN_SIZE] = '\0';
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, nqn);
	ck_assert_int_eq(path_record_kind(&e, nqn, false, &trtype), PATH_RECORD_TAKE);
	memset(e.subnqn + NVMF_NQN_SIZE, ' ', sizeof(e.subnqn) - NVMF_NQN_SIZE);
	ck_assert_int_eq(path_record_kind(&e, nqn, false, &trtype), PATH_RECORD_TAKE);

	memcpy(longer, nqn, NVMF_NQN_SIZE);
	memcpy(longer + NVMF_NQN_SIZE, "x", 2);
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, longer);
	ck_assert_int_eq(path_record_kind(&e, nqn, false, &trtype), PATH_RECORD_OTHER);
	/* The whole field, without a NUL. */
	memset(longer + NVMF_NQN_SIZE, 'x', sizeof(e.subnqn) - NVMF_NQN_SIZE);
	longer[sizeof(e.subnqn)] = '\0';
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, longer);
	ck_assert_int_eq(path_record_kind(&e, nqn, false, &trtype), PATH_RECORD_OTHER);
}
END_TEST

/* A record's address and service id filling their whole fields (256 and 32
 * bytes, no padding, no NUL) are taken whole. */
START_TEST(test_full_width_where)
{
	char traddr[PATH_TRADDR_SIZE], trsvcid[PATH_TRSVCID_SIZE];
	struct nvmf_disc_log_entry e;

	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_NVME, 0, SUBNQN);
	memset(e.traddr, 'a', sizeof(e.traddr));
	memset(e.trsvcid, '4', sizeof(e.trsvcid));
	path_record_where(&e, traddr, trsvcid);
	ck_assert_uint_eq(strlen(traddr), sizeof(e.traddr));
	ck_assert_uint_eq(strlen(trsvcid), sizeof(e.trsvcid));
	/* Padding is not part of them. */
	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_NVME, 0, SUBNQN);
	path_record_where(&e, traddr, trsvcid);
	ck_assert_str_eq(traddr, "198.18.0.1");
	ck_assert_str_eq(trsvcid, "4420");
}
END_TEST

/* --path ARG on a fresh set; EXIT_OK or EXIT_USAGE. */
static int one_path(struct path_args *p, const char *arg)
{
	bool handled = false;
	int ret;

	path_args_init(p);
	ret = path_args_option(p, "mount", OPT_PATH, arg, &handled);
	ck_assert(handled);
	return ret;
}

/* Each form --path takes: address, port, transport, IPv6 with and without
 * brackets. */
START_TEST(test_path_forms)
{
	static const struct {
		const char *arg, *trtype, *traddr, *trsvcid;
	} cases[] = {
		{ "10.0.0.2", NULL, "10.0.0.2", "" },
		{ "10.0.0.2:4421", NULL, "10.0.0.2", "4421" },
		{ "target.example:1", NULL, "target.example", "1" },
		{ "10.0.0.2:65535", NULL, "10.0.0.2", "65535" },
		{ "[fe80::1]:4421", NULL, "fe80::1", "4421" },
		{ "[fe80::1]", NULL, "fe80::1", "" },
		{ "fe80::1", NULL, "fe80::1", "" },
		{ "fd00::10.0.0.2", NULL, "fd00::10.0.0.2", "" },
		{ "tcp:10.0.0.2:4420", "tcp", "10.0.0.2", "4420" },
		{ "rdma:10.0.0.2", "rdma", "10.0.0.2", "" },
		{ "tcp:[fe80::1]:4420", "tcp", "fe80::1", "4420" },
		{ "tcp:fe80::1", "tcp", "fe80::1", "" },
	};
	struct path_args p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(one_path(&p, cases[i].arg) == EXIT_OK, "%s refused", cases[i].arg);
		ck_assert_uint_eq(p.nr, 1);
		if (cases[i].trtype)
			ck_assert_msg(p.trtype[0] && !strcmp(p.trtype[0], cases[i].trtype),
				      "%s: transport %s", cases[i].arg,
				      p.trtype[0] ? p.trtype[0] : "none");
		else
			ck_assert_msg(!p.trtype[0], "%s: transport %s", cases[i].arg, p.trtype[0]);
		ck_assert_str_eq(p.traddr[0], cases[i].traddr);
		ck_assert_str_eq(p.trsvcid[0], cases[i].trsvcid);
	}
}
END_TEST

/* What --path refuses, nothing taken: no address, a port outside 1-65535
 * or not a number, brackets not closed or followed by more than a port. */
START_TEST(test_path_refused)
{
	static const char *const bad[] = {
		"", ":4420", "10.0.0.2:", "10.0.0.2:0", "10.0.0.2:65536", "10.0.0.2:44x",
		"10.0.0.2:-1", "[fe80::1", "[fe80::1]4420", "[fe80::1]:", "[]:4420", "[]",
		"tcp:", "tcp::4420",
	};
	struct path_args p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(one_path(&p, bad[i]) == EXIT_USAGE, "'%s' taken", bad[i]);
		ck_assert_uint_eq(p.nr, 0);
	}
}
END_TEST

/* An address as wide as a discovery log's field (256 bytes) is taken whole;
 * one byte more is refused. */
START_TEST(test_path_full_width)
{
	char arg[NVMF_TRADDR_SIZE + 2 + 5];
	struct path_args p;

	memset(arg, 'a', NVMF_TRADDR_SIZE);
	memcpy(arg + NVMF_TRADDR_SIZE, ":4420", 6);
	ck_assert_int_eq(one_path(&p, arg), EXIT_OK);
	ck_assert_uint_eq(strlen(p.traddr[0]), NVMF_TRADDR_SIZE);
	ck_assert_str_eq(p.trsvcid[0], "4420");
	memset(arg, 'a', NVMF_TRADDR_SIZE + 1);
	memcpy(arg + NVMF_TRADDR_SIZE + 1, ":4420", 6);
	ck_assert_int_eq(one_path(&p, arg), EXIT_USAGE);
}
END_TEST

/* --path repeats up to one fewer than NVMEFS_MAX_PATHS (-a/-s is the first
 * path), in order; one more is refused. */
START_TEST(test_path_repeated)
{
	struct path_args p;
	bool handled;
	char arg[32];

	path_args_init(&p);
	ck_assert(!path_args_multipath(&p));
	for (unsigned int i = 0; i < NVMEFS_MAX_PATHS - 1; i++) {
		snprintf(arg, sizeof(arg), "10.0.0.%u:%u", i + 1, 4420 + i);
		ck_assert_int_eq(path_args_option(&p, "perf", OPT_PATH, arg, &handled), EXIT_OK);
	}
	ck_assert_uint_eq(p.nr, NVMEFS_MAX_PATHS - 1);
	ck_assert(path_args_multipath(&p));
	ck_assert_str_eq(p.traddr[NVMEFS_MAX_PATHS - 2], "10.0.0.7");
	ck_assert_str_eq(p.trsvcid[NVMEFS_MAX_PATHS - 2], "4426");
	ck_assert_int_eq(path_args_option(&p, "perf", OPT_PATH, "10.0.0.9", &handled), EXIT_USAGE);
	ck_assert_uint_eq(p.nr, NVMEFS_MAX_PATHS - 1);
	/* Not a paths option: left to the caller. */
	ck_assert_int_eq(path_args_option(&p, "perf", 'a', "10.0.0.9", &handled), EXIT_OK);
	ck_assert(!handled);
}
END_TEST

static Suite *paths_suite(void)
{
	Suite *s = suite_create("paths");
	TCase *tc = tcase_create("records");

	tcase_add_test(tc, test_rdma_record_taken);
	tcase_add_test(tc, test_tcp_record_taken);
	tcase_add_test(tc, test_secure_channel_required_refused);
	tcase_add_test(tc, test_secure_channel_taken_with_key);
	tcase_add_test(tc, test_other_records_left);
	tcase_add_test(tc, test_longest_nqn_compared_whole);
	tcase_add_test(tc, test_full_width_where);
	suite_add_tcase(s, tc);

	tc = tcase_create("--path");
	tcase_add_test(tc, test_path_forms);
	tcase_add_test(tc, test_path_refused);
	tcase_add_test(tc, test_path_full_width);
	tcase_add_test(tc, test_path_repeated);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(paths_suite(), CK_NORMAL);
}
