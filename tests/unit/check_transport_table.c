/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's own transport table (src/lib/transport/transport_table.c):
 * RDMA, the default, and NVMe/TCP, with their ports, the options each
 * takes and whether what a caller registers is pinned.  What the library decides from a table is check_connect_opts', over
 * the scripted transports of tests/lib; this is the one program that links
 * the real transports, RDMA's libraries with them.
 */
#include "config.h"

#include <stdlib.h>

#include <check.h>
#include <nvme/types.h>
#include <nvmefs/nvmefs.h>

#include "test_util.h"

START_TEST(test_rdma_and_tcp)
{
	static const struct transport_want cases[] = {
		{ NULL, "rdma", "4420", "4420", NVMEFS_OPT_RKEY_PER_IO | NVMEFS_OPT_TOS, 1 },
		{ "rdma", "rdma", "4420", "4420", NVMEFS_OPT_RKEY_PER_IO | NVMEFS_OPT_TOS, 1 },
		{ "tcp", "tcp", "4420", "8009", NVMEFS_OPT_HDR_DIGEST | NVMEFS_OPT_DATA_DIGEST |
						 NVMEFS_OPT_HOST_IFACE | NVMEFS_OPT_TOS |
						 NVMEFS_OPT_TLS, 0 },
	};

	ck_assert_str_eq(nvmefs_transport_name(0), "rdma");
	ck_assert_str_eq(nvmefs_transport_name(1), "tcp");
	ck_assert_ptr_null(nvmefs_transport_name(2));
	ck_assert_str_eq(nvmefs_transport_by_trtype(NVMF_TRTYPE_RDMA), "rdma");
	ck_assert_str_eq(nvmefs_transport_by_trtype(NVMF_TRTYPE_TCP), "tcp");
	ck_assert_ptr_null(nvmefs_transport_by_trtype(NVMF_TRTYPE_FC));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_transport_info(&cases[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport_table");
	TCase *tc = tcase_create("rows");

	tcase_add_test(tc, test_rdma_and_tcp);
	suite_add_tcase(s, tc);
	return run_suite(s, CK_ENV);
}
