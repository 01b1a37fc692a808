/*
 * Unit tests of the NVMe/TCP transport (tcp.c, tcp_pdu.c) against a
 * scripted target on a loopback socket (tcp_peer.c): every refusal of what
 * a broken or hostile target sends, each of which must end the queue with
 * one line and write nothing outside the command's buffer, and how a queue
 * ends.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_peer.h"

/* ------------------------------------------------------------------------ */
/* Refusals                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(test_c2h_more_than_asked)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_c2h(&p, req->cid, 0, 4096 + 512, NVMEFS_TCP_F_DATA_LAST, 0x44);
	expect_refused(feed(&p, 1 << 20), "C2HData of 4608 bytes at offset 0");
	expect_term(NVMEFS_TCP_FES_DATA_OUT_OF_RANGE);
}
END_TEST

START_TEST(test_c2h_outside_the_range)
{
	struct nvmefs_req *req = read_in_flight(8192);
	struct pdu p;

	pdu_c2h(&p, req->cid, 4096, 4096, 0, 0x44);
	expect_refused(feed(&p, 1 << 20), "at offset 4096, where 0 was next");
	expect_term(NVMEFS_TCP_FES_DATA_OUT_OF_RANGE);
}
END_TEST

START_TEST(test_c2h_past_the_end_after_data)
{
	struct nvmefs_req *req = read_in_flight(8192);
	struct pdu p;

	pdu_c2h(&p, req->cid, 0, 6000, 0, 0x44);
	ck_assert_int_eq(feed(&p, 1 << 20), 0);
	pdu_c2h(&p, req->cid, 6000, 4000, NVMEFS_TCP_F_DATA_LAST, 0x44);
	expect_refused(feed(&p, 1 << 20), "C2HData of 4000 bytes at offset 6000");
}
END_TEST

START_TEST(test_c2h_for_no_read)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_c2h(&p, (uint16_t)(req->cid + 1), 0, 512, 0, 0x44);
	expect_refused(feed(&p, 1 << 20), "which is no read in flight");
	expect_term(NVMEFS_TCP_FES_INVALID_PDU_HDR);
}
END_TEST

/* Data for a write would land in the caller's data, about to be written. */
START_TEST(test_c2h_for_a_write)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(false, false);
	memset(bufs[0], 0x77, BUF_LEN);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, 8192);
	expect_cmd(req, 0, NULL);
	pdu_c2h(&p, req->cid, 0, 512, 0, 0x44);
	expect_refused(feed(&p, 1 << 20), "which is no read in flight");
	ck_assert_uint_eq(bufs[0][0], 0x77);
}
END_TEST

START_TEST(test_c2h_success_without_last)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_SUCCESS, 0x44);
	expect_refused(feed(&p, 1 << 20), "claims success before its last byte");
}
END_TEST

START_TEST(test_c2h_plen_disagrees)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_c2h(&p, req->cid, 0, 512, 0, 0x44);
	p.b[4] = 0xff;		/* PLEN */
	expect_refused(feed(&p, 1 << 20), "do not hold its 512 bytes");
	expect_term(NVMEFS_TCP_FES_INVALID_PDU_HDR);
}
END_TEST

START_TEST(test_r2t_beyond_the_write)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(false, false);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, 8192);
	expect_cmd(req, 0, NULL);
	pdu_r2t(&p, req->cid, 1, 4096, 8192);
	expect_refused(feed(&p, 1 << 20), "R2T for 8192 bytes at offset 4096");
	expect_term(NVMEFS_TCP_FES_DATA_OUT_OF_RANGE);
}
END_TEST

/* MAXR2T 0: one R2T outstanding per command, its data sent before the next. */
START_TEST(test_r2t_twice)
{
	struct nvmefs_req *req;
	struct pdu p, two;

	connect_ok(false, false);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, 8192);
	expect_cmd(req, 0, NULL);
	pdu_r2t(&two, req->cid, 1, 0, 4096);
	pdu_r2t(&p, req->cid, 2, 4096, 4096);
	memcpy(two.b + two.len, p.b, p.len);
	two.len += p.len;
	expect_refused(feed(&two, 1 << 20), "a second R2T for command id");
	expect_term(NVMEFS_TCP_FES_DATA_LIMIT_EXCEEDED);
}
END_TEST

START_TEST(test_r2t_for_a_read)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_r2t(&p, req->cid, 1, 0, 4096);
	expect_refused(feed(&p, 1 << 20), "no write in flight");
}
END_TEST

START_TEST(test_r2t_for_in_capsule_write)
{
	static uint8_t got[512];
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(false, false);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, 512);
	expect_cmd(req, 512, got);
	pdu_r2t(&p, req->cid, 1, 0, 512);
	expect_refused(feed(&p, 1 << 20), "no write in flight awaiting one");
}
END_TEST

START_TEST(test_header_digest_mismatch)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(true, false);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 4096);
	expect_cmd(req, 0, NULL);
	pdu_rsp(&p, req->cid, 0);
	p.b[24] ^= 1;
	expect_refused(feed(&p, 1 << 20), "header digest mismatch");
	expect_term(NVMEFS_TCP_FES_HDR_DIGEST_ERR);
	ck_assert_int_eq(ended, 0);
}
END_TEST

START_TEST(test_data_digest_mismatch)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(false, true);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 4096);
	expect_cmd(req, 0, NULL);
	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_LAST | NVMEFS_TCP_F_DATA_SUCCESS, 0x55);
	p.b[p.len - 1] ^= 1;
	expect_refused(feed(&p, 1 << 20), "data digest mismatch");
	ck_assert_int_eq(ended, 0);
}
END_TEST

START_TEST(test_header_digest_missing)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(false, false);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 4096);
	expect_cmd(req, 0, NULL);
	pdu_rsp(&p, req->cid, 0);
	p.b[1] |= NVMEFS_TCP_F_HDGST;
	expect_refused(feed(&p, 1 << 20), "with a header digest, which was not negotiated");
}
END_TEST

START_TEST(test_rsp_unknown_cid)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_rsp(&p, (uint16_t)(req->cid ^ 0x100), 0);
	expect_refused(feed(&p, 1 << 20), "CapsuleResp for command id");
	expect_term(NVMEFS_TCP_FES_INVALID_PDU_HDR);
}
END_TEST

START_TEST(test_unexpected_pdu_type)
{
	struct pdu p;

	read_in_flight(4096);
	pdu_rsp(&p, 0, 0);
	p.b[0] = NVMEFS_TCP_ICRESP;
	expect_refused(feed(&p, 1 << 20), "a PDU of type 0x1");
}
END_TEST

START_TEST(test_bad_hlen)
{
	struct pdu p;

	read_in_flight(4096);
	pdu_rsp(&p, 0, 0);
	p.b[2] = 16;
	expect_refused(feed(&p, 1 << 20), "16-byte header");
}
END_TEST

START_TEST(test_c2h_term_req)
{
	struct nvmefs_tcp_term t = {
		.hdr = { .type = NVMEFS_TCP_C2H_TERM, .hlen = 24, .plen = nvmefs_cpu_to_le32(24 + 8) },
		.fes = nvmefs_cpu_to_le16(NVMEFS_TCP_FES_PDU_SEQ_ERR),
	};
	struct pdu p;

	read_in_flight(4096);
	memcpy(p.b, &t, sizeof(t));
	memset(p.b + 24, 0xab, 8);
	p.len = 32;
	ck_assert_int_eq(feed(&p, 1), -ECONNRESET);
	ck_assert_int_eq(q.failed, -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "C2HTermReq: PDU sequence error (FES 0x2"));
}
END_TEST

START_TEST(test_closed_peer_noticed)
{
	read_in_flight(4096);
	ck_assert_int_eq(nvmefs_tcp_ops.queue_check(&q), 0);
	close(peer.fd);
	peer.fd = -1;
	for (int i = 0; i < 100 && nvmefs_tcp_ops.queue_check(&q) == 0; i++)
		usleep(10000);
	ck_assert_int_eq(nvmefs_tcp_ops.queue_check(&q), -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "closed queue 1"));
	ck_assert_int_eq(process(), -ECONNRESET);
}
END_TEST

static Suite *tcp_errors_suite(void)
{
	Suite *s = suite_create("tcp_errors");
	TCase *tc;

	tc = tcase_create("refusals");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_c2h_more_than_asked);
	tcase_add_test(tc, test_c2h_outside_the_range);
	tcase_add_test(tc, test_c2h_past_the_end_after_data);
	tcase_add_test(tc, test_c2h_for_no_read);
	tcase_add_test(tc, test_c2h_for_a_write);
	tcase_add_test(tc, test_c2h_success_without_last);
	tcase_add_test(tc, test_c2h_plen_disagrees);
	tcase_add_test(tc, test_r2t_beyond_the_write);
	tcase_add_test(tc, test_r2t_twice);
	tcase_add_test(tc, test_r2t_for_a_read);
	tcase_add_test(tc, test_r2t_for_in_capsule_write);
	tcase_add_test(tc, test_header_digest_mismatch);
	tcase_add_test(tc, test_data_digest_mismatch);
	tcase_add_test(tc, test_header_digest_missing);
	tcase_add_test(tc, test_rsp_unknown_cid);
	tcase_add_test(tc, test_unexpected_pdu_type);
	tcase_add_test(tc, test_bad_hlen);
	tcase_add_test(tc, test_c2h_term_req);
	tcase_add_test(tc, test_closed_peer_noticed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tcp_errors_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
