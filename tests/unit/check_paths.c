/*
 * Which discovery log records --all-paths connects (src/cli/paths_log.c):
 * the subsystem's records over every transport nvmefs has, as 'nvme
 * connect-all' connects them; a record that requires a secure channel is
 * refused (nvmefs has no TLS yet), and one over a transport nvmefs lacks
 * is left.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvme/types.h>

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
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_TAKE);
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
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_TAKE);
	ck_assert_str_eq(trtype, "tcp");
}
END_TEST

/* TREQ bits 1:0 say "required": refused, whatever the other bits and the
 * transport; "not specified" (nvmet's default) and "not required" are not. */
START_TEST(test_secure_channel_required_refused)
{
	static const uint8_t trtypes[] = { NVMF_TRTYPE_TCP, NVMF_TRTYPE_RDMA };
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	for (size_t i = 0; i < sizeof(trtypes); i++) {
		record(&e, trtypes[i], NVME_NQN_NVME, NVMF_TREQ_REQUIRED, SUBNQN);
		e.tsas.tcp.sectype = NVMF_TCP_SECTYPE_TLS13;
		ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_NEEDS_TLS);
		record(&e, trtypes[i], NVME_NQN_NVME,
		       NVMF_TREQ_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW, SUBNQN);
		ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_NEEDS_TLS);
	}
	/* Bits 1:0 = 3 is reserved, not "required". */
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 3, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_TAKE);
}
END_TEST

START_TEST(test_other_records_left)
{
	struct nvmf_disc_log_entry e;
	const char *trtype = NULL;

	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, "nqn.2026-11.io.nvmefs.testbed:sub2");
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_OTHER);
	/* A prefix of the NQN is another subsystem. */
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, "nqn.2026-11.io.nvmefs.testbed:sub");
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_OTHER);
	/* The discovery subsystem and referrals are not paths, TLS or not. */
	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_CURR, NVMF_TREQ_REQUIRED, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_OTHER);
	record(&e, NVMF_TRTYPE_TCP, NVME_NQN_DISC, 0, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_OTHER);
	/* Fibre Channel and loop: transports nvmefs does not have. */
	record(&e, NVMF_TRTYPE_FC, NVME_NQN_NVME, 0, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_NO_TRANSPORT);
	record(&e, NVMF_TRTYPE_LOOP, NVME_NQN_NVME, 0, SUBNQN);
	ck_assert_int_eq(path_record_kind(&e, SUBNQN, &trtype), PATH_RECORD_NO_TRANSPORT);
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
	ck_assert_int_eq(path_record_kind(&e, nqn, &trtype), PATH_RECORD_TAKE);
	memset(e.subnqn + NVMF_NQN_SIZE, ' ', sizeof(e.subnqn) - NVMF_NQN_SIZE);
	ck_assert_int_eq(path_record_kind(&e, nqn, &trtype), PATH_RECORD_TAKE);

	memcpy(longer, nqn, NVMF_NQN_SIZE);
	memcpy(longer + NVMF_NQN_SIZE, "x", 2);
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, longer);
	ck_assert_int_eq(path_record_kind(&e, nqn, &trtype), PATH_RECORD_OTHER);
	/* The whole field, without a NUL. */
	memset(longer + NVMF_NQN_SIZE, 'x', sizeof(e.subnqn) - NVMF_NQN_SIZE);
	longer[sizeof(e.subnqn)] = '\0';
	record(&e, NVMF_TRTYPE_RDMA, NVME_NQN_NVME, 0, longer);
	ck_assert_int_eq(path_record_kind(&e, nqn, &trtype), PATH_RECORD_OTHER);
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

static Suite *paths_suite(void)
{
	Suite *s = suite_create("paths");
	TCase *tc = tcase_create("records");

	tcase_add_test(tc, test_rdma_record_taken);
	tcase_add_test(tc, test_tcp_record_taken);
	tcase_add_test(tc, test_secure_channel_required_refused);
	tcase_add_test(tc, test_other_records_left);
	tcase_add_test(tc, test_longest_nqn_compared_whole);
	tcase_add_test(tc, test_full_width_where);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(paths_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
