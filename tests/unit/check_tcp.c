/*
 * Unit tests of the NVMe/TCP transport (tcp.c, tcp_pdu.c) against a
 * scripted target on a loopback socket (tcp_peer.c): the handshake, and
 * every PDU type each way with partial sends and receives.  What a broken
 * or hostile target sends, and how the queue ends, is check_tcp_errors.c's.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"
#include "arm_contract.h"
#include "tcp_peer.h"
#include "base/clock.h"
#include "transport/mr.h"
#include "transport/queue.h"
#include "types/transport_ops.h"

/* ------------------------------------------------------------------------ */
/* Digests and the handshake                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(test_crc32c_known_answer)
{
	/* The CRC32C check value (RFC 3720's iSCSI CRC, as NVMe/TCP uses it). */
	ck_assert_uint_eq(nvmefs_tcp_crc32c(0, "123456789", 9), 0xe3069283u);
	/* Continued over pieces, the same. */
	ck_assert_uint_eq(nvmefs_tcp_crc32c(nvmefs_tcp_crc32c(0, "1234", 4), "56789", 5),
			  0xe3069283u);
	ck_assert_uint_eq(nvmefs_tcp_crc32c(0, "", 0), 0);
}
END_TEST

START_TEST(test_icreq_asks_what_was_asked)
{
	connect_ok(true, true);
	ck_assert_uint_eq(peer.icreq.hdr.type, NVMEFS_TCP_ICREQ);
	ck_assert_uint_eq(peer.icreq.hdr.hlen, 128);
	ck_assert_uint_eq(nvmefs_le32_to_cpu(peer.icreq.hdr.plen), 128);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(peer.icreq.pfv), 0);
	ck_assert_uint_eq(peer.icreq.hpda, 0);
	ck_assert_uint_eq(peer.icreq.digest, NVMEFS_TCP_HDR_DIGEST_ENABLE | NVMEFS_TCP_DATA_DIGEST_ENABLE);
	ck_assert_uint_eq(nvmefs_le32_to_cpu(peer.icreq.maxr2t), 0);
}
END_TEST

START_TEST(test_icreq_without_digests)
{
	connect_ok(false, false);
	ck_assert_uint_eq(peer.icreq.digest, 0);
}
END_TEST

/* A digest asked for and declined: the connection is refused, as
 * nvme-tcp refuses it, with one line naming the digest. */
static void declined(bool hdgst, bool ddgst, uint8_t granted, const char *what)
{
	ctrl->opts.hdr_digest = hdgst;
	ctrl->opts.data_digest = ddgst;
	peer.icresp.digest = granted;
	ck_assert_int_eq(connect_queue(1), -EPROTO);
	ck_assert_msg(strstr(nvmefs_errmsg(), what), "'%s' lacks '%s'", nvmefs_errmsg(), what);
	ck_assert_ptr_null(strchr(nvmefs_errmsg(), '\n'));
	ck_assert_ptr_null(q.tp);
}

START_TEST(test_header_digest_declined)
{
	declined(true, false, 0, "declined the header digest");
}
END_TEST

START_TEST(test_data_digest_declined)
{
	declined(true, true, NVMEFS_TCP_HDR_DIGEST_ENABLE, "declined the data digest");
}
END_TEST

START_TEST(test_icresp_refused)
{
	static const char *const what[] = {
		"format version 1", "MAXH2CDATA 1000", "enabled digests", "(CPDA) 32",
		"not a 128-byte ICResp",
	};

	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		if (i)
			setup();
		switch (i) {
		case 0: peer.icresp.pfv = nvmefs_cpu_to_le16(1); break;
		case 1: peer.icresp.maxdata = nvmefs_cpu_to_le32(1000); break;
		case 2: peer.icresp.digest = NVMEFS_TCP_HDR_DIGEST_ENABLE; break;
		case 3: peer.icresp.cpda = 32; break;
		case 4: peer.icresp.hdr.type = NVMEFS_TCP_RSP; break;
		}
		ck_assert_int_eq(connect_queue(1), -EPROTO);
		ck_assert_msg(strstr(nvmefs_errmsg(), what[i]), "'%s' lacks '%s'",
			      nvmefs_errmsg(), what[i]);
		ck_assert_ptr_null(q.tp);
		if (i + 1 < sizeof(what) / sizeof(what[0]))
			teardown();
	}
}
END_TEST

START_TEST(test_closed_at_once_suggests_tls)
{
	peer.close_at_once = true;
	ck_assert_int_eq(connect_queue(1), -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "TLS"));
}
END_TEST

START_TEST(test_no_icresp_times_out)
{
	int64_t start = nvmefs_now_ms();

	peer.silent = true;
	ctrl->opts.timeout_ms = 300;
	ck_assert_int_eq(connect_queue(1), -ETIMEDOUT);
	ck_assert_int_ge(nvmefs_now_ms() - start, 250);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "gave no ICResp for queue 1 within 300 ms"));
	ck_assert_ptr_null(q.tp);
}
END_TEST

START_TEST(test_nothing_listening)
{
	close(peer.lfd);
	peer.lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(nvmefs_queue_init(&q, ctrl, &(struct nvmefs_queue_params){
		.qid = 1, .size = QSIZE + 1 }), 0);
	ck_assert_int_eq(nvmefs_tcp_ops.queue_create(&q, &(struct nvmefs_queue_params){
		.qid = 1, .size = QSIZE + 1 }), -ECONNREFUSED);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "nothing is listening"));
}
END_TEST

/* A connect to an address that does not answer gives up after one SYN
 * retry, as nvme-tcp's tcp_sock_set_syncnt(1), not the system's six. */
START_TEST(test_syn_retries_bounded)
{
	int cnt = 0;
	socklen_t len = sizeof(cnt);

	connect_ok(false, false);
	ck_assert_int_eq(getsockopt(((struct tcp_queue *)q.tp)->stream.fd, IPPROTO_TCP,
				    TCP_SYNCNT, &cnt, &len), 0);
	ck_assert_int_eq(cnt, 1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Reads                                                                     */
/* ------------------------------------------------------------------------ */

static void read_roundtrip(bool hdgst, bool ddgst, size_t chunk)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(hdgst, ddgst);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 8192);
	expect_cmd(req, 0, NULL);
	pdu_c2h(&p, req->cid, 0, 5000, 0, 0x11);
	ck_assert_int_eq(feed(&p, chunk), 0);
	pdu_c2h(&p, req->cid, 5000, 3192, NVMEFS_TCP_F_DATA_LAST, 0x22);
	ck_assert_int_eq(feed(&p, chunk), 0);
	ck_assert_int_eq(ended, 0);
	pdu_rsp(&p, req->cid, 0);
	ck_assert_int_eq(feed(&p, chunk), 1);
	ck_assert_int_eq(ended, 1);
	ck_assert_int_eq(last_error, 0);
	for (int i = 0; i < 8192; i++)
		ck_assert_uint_eq(bufs[req->slot][i], i < 5000 ? 0x11 : 0x22);
	guards_intact();
}

START_TEST(test_read_c2h_then_rsp)
{
	read_roundtrip(false, false, 1 << 20);
}
END_TEST

START_TEST(test_read_one_byte_at_a_time)
{
	read_roundtrip(false, false, 1);
}
END_TEST

START_TEST(test_read_with_digests)
{
	read_roundtrip(true, true, 1 << 20);
}
END_TEST

START_TEST(test_read_with_digests_one_byte_at_a_time)
{
	read_roundtrip(true, true, 1);
}
END_TEST

START_TEST(test_read_success_flag_completes)
{
	struct nvmefs_req *req;
	struct pdu p;

	req = read_sent(false, false, 4096);
	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_LAST | NVMEFS_TCP_F_DATA_SUCCESS, 0x33);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 1);
	ck_assert_int_eq(last_error, 0);
	ck_assert(nvmefs_cqe_ok(&last_cqe));
	ck_assert_uint_eq(bufs[0][4095], 0x33);
}
END_TEST

/* A read's success counts only with all of its bytes: a CapsuleResp
 * success after less C2HData than asked, or none, ends the read with a
 * transient transport error (retried, no DNR), the queue kept. */
static void short_read(uint32_t sent)
{
	struct nvmefs_req *req;
	struct pdu p;

	req = read_sent(false, false, 8192);
	if (sent) {
		pdu_c2h(&p, req->cid, 0, sent, 0, 0x11);
		ck_assert_int_eq(feed(&p, 1 << 20), 0);
	}
	pdu_rsp(&p, req->cid, 0);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 1);
	ck_assert_int_eq(last_error, 0);
	ck_assert_uint_eq(nvmefs_cqe_status(&last_cqe), NVME_SC_TRAN_TPORT_ERROR);
	ck_assert_int_eq(q.failed, 0);
	guards_intact();
}

START_TEST(test_read_short_c2h_fails)
{
	short_read(4096);
}
END_TEST

START_TEST(test_read_without_c2h_fails)
{
	short_read(0);
}
END_TEST

/* The target's own error stands. */
START_TEST(test_read_short_c2h_error_status_kept)
{
	struct nvmefs_req *req;
	struct pdu p;

	req = read_sent(false, false, 8192);
	pdu_rsp(&p, req->cid, 0x281);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_uint_eq(nvmefs_cqe_status(&last_cqe), 0x281);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Writes                                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(test_write_in_capsule)
{
	static uint8_t got[4096];
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(false, true);
	memset(bufs[0], 0x5a, 4096);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, 4096);
	expect_cmd(req, 4096, got);
	ck_assert_mem_eq(got, bufs[req->slot], 4096);
	pdu_rsp(&p, req->cid, 0);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 1);
}
END_TEST

START_TEST(test_admin_queue_takes_8k_in_capsule)
{
	static uint8_t got[8192];
	struct nvmefs_req *req;

	ctrl->inline_size = 0;
	ck_assert_int_eq(connect_queue(0), 0);
	req = submit(0x7f, NVMEFS_DIR_TO_CTRL, 8192);
	expect_cmd(req, 8192, got);
}
END_TEST

/* The H2CData PDUs answering an R2T that ends at @end, from @off for
 * @len, in pieces of 4096. */
static void expect_h2c(const struct nvmefs_req *req, uint16_t ttag, uint32_t off, uint32_t len,
		       uint32_t end)
{
	static uint8_t data[BUF_LEN];

	while (len) {
		uint32_t n = len < 4096 ? len : 4096;
		uint8_t b[28];
		struct nvmefs_tcp_data d;

		read_exact(peer.fd, b, 24 + (hd ? 4 : 0));
		memcpy(&d, b, sizeof(d));
		ck_assert_uint_eq(d.hdr.type, NVMEFS_TCP_H2C_DATA);
		ck_assert_uint_eq(nvmefs_le16_to_cpu(d.command_id), req->cid);
		ck_assert_uint_eq(nvmefs_le16_to_cpu(d.ttag), ttag);
		ck_assert_uint_eq(nvmefs_le32_to_cpu(d.data_offset), off);
		ck_assert_uint_eq(nvmefs_le32_to_cpu(d.data_length), n);
		ck_assert_uint_eq(!!(d.hdr.flags & NVMEFS_TCP_F_DATA_LAST), off + n == end);
		ck_assert_uint_eq(d.hdr.pdo, 24 + (hd ? 4 : 0));
		ck_assert_uint_eq(nvmefs_le32_to_cpu(d.hdr.plen), d.hdr.pdo + n + (dd ? 4 : 0));
		if (hd)
			ck_assert_uint_eq(le32_at(b + 24), nvmefs_tcp_crc32c(0, b, 24));
		read_exact(peer.fd, data, n);
		ck_assert_mem_eq(data, bufs[req->slot] + off, n);
		if (dd) {
			read_exact(peer.fd, b, 4);
			ck_assert_uint_eq(le32_at(b), nvmefs_tcp_crc32c(0, data, n));
		}
		off += n;
		len -= n;
	}
}

static void write_r2t(bool hdgst, bool ddgst)
{
	struct nvmefs_req *req;
	struct pdu p;

	connect_ok(hdgst, ddgst);
	for (int i = 0; i < 12000; i++)
		bufs[0][i] = (uint8_t)(i * 7);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, 12000);
	expect_cmd(req, 0, NULL);
	/* Two R2Ts, the first cut in MAXH2CDATA pieces. */
	pdu_r2t(&p, req->cid, 0x1234, 0, 9000);
	ck_assert_int_ge(feed(&p, 1 << 20), 0);
	ck_assert_int_ge(process(), 0);
	expect_h2c(req, 0x1234, 0, 9000, 9000);
	pdu_r2t(&p, req->cid, 0x1235, 9000, 3000);
	ck_assert_int_ge(feed(&p, 1), 0);
	ck_assert_int_ge(process(), 0);
	expect_h2c(req, 0x1235, 9000, 3000, 12000);
	ck_assert_int_eq(ended, 0);
	pdu_rsp(&p, req->cid, 0);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 1);
}

START_TEST(test_write_r2t_h2c_pieces)
{
	write_r2t(false, false);
}
END_TEST

START_TEST(test_write_r2t_with_digests)
{
	write_r2t(true, true);
}
END_TEST

/* A response before the data an R2T asked for has gone: the buffer stays
 * the transport's until it has. */
START_TEST(test_write_response_before_data_sent)
{
	struct nvmefs_req *req;
	struct pdu p, both;

	connect_small(4096);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, BUF_LEN);
	expect_cmd(req, 0, NULL);
	pdu_r2t(&both, req->cid, 1, 0, BUF_LEN);
	pdu_rsp(&p, req->cid, 0);
	memcpy(both.b + both.len, p.b, p.len);
	both.len += p.len;
	ck_assert_int_ge(feed(&both, 1 << 20), 0);
	/* The socket took part of the data; the rest waits, and the request
	 * has not ended. */
	ck_assert_ptr_nonnull(((struct tcp_queue *)q.tp)->tx_head);
	ck_assert_int_eq(ended, 0);
	expect_h2c(req, 1, 0, 4096, BUF_LEN);
	for (int i = 0; i < 100 && !ended; i++) {
		static uint8_t sink[BUF_LEN];

		ck_assert_int_ge(nvmefs_tcp_ops.process(&q, 10), 0);
		(void)!read(peer.fd, sink, sizeof(sink));
	}
	ck_assert_int_eq(ended, 1);
}
END_TEST

/* Partial sends: a big write through small socket buffers goes out whole,
 * the worker never blocking. */
START_TEST(test_partial_sends)
{
	static uint8_t got[BUF_LEN];
	struct nvmefs_req *req;
	struct pdu p;
	size_t have = 0;
	uint8_t hdr[24];

	connect_small(2048);
	/* Three writes: two in the capsule, one by R2T. */
	for (int i = 0; i < BUF_LEN; i++)
		bufs[0][i] = bufs[1][i] = bufs[2][i] = (uint8_t)(i ^ (i >> 8));
	submit(0x01, NVMEFS_DIR_TO_CTRL, 4096);
	submit(0x01, NVMEFS_DIR_TO_CTRL, 4096);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, BUF_LEN);
	ck_assert_int_ge(process(), 0);
	/* The socket had no room for all of it. */
	ck_assert_ptr_nonnull(((struct tcp_queue *)q.tp)->tx_head);
	/* Everything the host sent, read slowly. */
	for (int round = 0; round < 2000 && have < 2 * (72 + 4096) + 72; round++) {
		ssize_t n = recv(peer.fd, got, 100, MSG_DONTWAIT);

		if (n > 0)
			have += (size_t)n;
		ck_assert_int_ge(process(), 0);
	}
	ck_assert_uint_eq(have, 2 * (72 + 4096) + 72);
	pdu_r2t(&p, req->cid, 9, 0, BUF_LEN);
	ck_assert_int_ge(feed(&p, 1 << 20), 0);
	for (uint32_t off = 0; off < BUF_LEN; off += 4096) {
		for (int round = 0; round < 200; round++) {
			struct pollfd pfd = { .fd = peer.fd, .events = POLLIN };

			ck_assert_int_ge(process(), 0);
			if (poll(&pfd, 1, 5) == 1)
				break;
		}
		read_exact(peer.fd, hdr, sizeof(hdr));
		for (size_t got_n = 0, spins = 0; got_n < 4096; spins++) {
			ssize_t n = recv(peer.fd, got + off + got_n, 4096 - got_n, MSG_DONTWAIT);

			if (n > 0)
				got_n += (size_t)n;
			ck_assert_int_ge(process(), 0);
			ck_assert_uint_lt(spins, 1000000);
		}
	}
	ck_assert_mem_eq(got, bufs[req->slot], BUF_LEN);
}
END_TEST

/* The arm contract, over a socket: a response that arrived is reported by
 * arm, not left to a level-triggered descriptor that nobody polls. */
static void answer_rsp(void *arg)
{
	const struct nvmefs_req *req = arg;
	struct pdu p;

	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_LAST, 0x5a);
	ck_assert_int_eq(write(peer.fd, p.b, p.len), (ssize_t)p.len);
	pdu_rsp(&p, req->cid, 0);
	ck_assert_int_eq(write(peer.fd, p.b, p.len), (ssize_t)p.len);
}

static bool req_ended(void *arg)
{
	(void)arg;
	return ended == 1;
}

START_TEST(test_arm_contract)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct arm_contract c = { .q = &q, .answer = answer_rsp, .ended = req_ended, .arg = req };

	arm_contract_check(&c);
	ck_assert_int_eq(last_error, 0);
}
END_TEST

/* A connection that is gone is an arm error: the caller fails the queue
 * rather than sleeping on it. */
START_TEST(test_arm_reports_a_reset)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	read_in_flight(4096);
	ck_assert_int_eq(nvmefs_tcp_ops.queue_arm(&q), 0);
	/* Abortive: the host's socket gets a reset, not an end of stream. */
	ck_assert_int_eq(setsockopt(peer.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
	close(peer.fd);
	peer.fd = -1;
	delivered();
	ck_assert_int_eq(nvmefs_tcp_ops.queue_arm(&q), -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(nvmefs_errmsg(), "queue 1"));
}
END_TEST

/* The kernel copies to and from any memory: a registration is a mark that
 * the region is known (mr.c reads tp as "registered"), and pins nothing. */
START_TEST(test_nothing_pinned)
{
	struct nvmefs_mr mr = { .ctrl = ctrl, .addr = bufs[0], .len = BUF_LEN };

	connect_ok(false, false);
	ck_assert_int_eq(nvmefs_tcp_ops.mr_reg(ctrl, &mr), 0);
	ck_assert_ptr_nonnull(mr.tp);
	nvmefs_tcp_ops.mr_dereg(&mr);
	ck_assert_uint_eq(atomic_load(&ctrl->pinned_bytes), 0);
}
END_TEST

/* Stopped, the queue ends what was in flight and nothing more reaches it. */
START_TEST(test_stop_ends_requests)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	nvmefs_queue_stop(&q, -ECONNRESET);
	ck_assert_int_eq(ended, 1);
	ck_assert_int_eq(last_error, -ECONNRESET);
	pdu_c2h(&p, req->cid, 0, 4096, 0, 0x66);
	(void)!write(peer.fd, p.b, p.len);
	ck_assert_int_lt(process(), 0);
	ck_assert_uint_eq(bufs[0][0], 0xee);
}
END_TEST

static Suite *tcp_suite(void)
{
	Suite *s = suite_create("tcp");
	TCase *tc = tcase_create("handshake");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_crc32c_known_answer);
	tcase_add_test(tc, test_icreq_asks_what_was_asked);
	tcase_add_test(tc, test_icreq_without_digests);
	tcase_add_test(tc, test_header_digest_declined);
	tcase_add_test(tc, test_data_digest_declined);
	tcase_add_test(tc, test_syn_retries_bounded);
	tcase_add_test(tc, test_icresp_refused);
	tcase_add_test(tc, test_closed_at_once_suggests_tls);
	tcase_add_test(tc, test_no_icresp_times_out);
	tcase_add_test(tc, test_nothing_listening);
	suite_add_tcase(s, tc);

	tc = tcase_create("data");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_read_c2h_then_rsp);
	tcase_add_test(tc, test_read_one_byte_at_a_time);
	tcase_add_test(tc, test_read_with_digests);
	tcase_add_test(tc, test_read_with_digests_one_byte_at_a_time);
	tcase_add_test(tc, test_read_success_flag_completes);
	tcase_add_test(tc, test_read_short_c2h_fails);
	tcase_add_test(tc, test_read_without_c2h_fails);
	tcase_add_test(tc, test_read_short_c2h_error_status_kept);
	tcase_add_test(tc, test_write_in_capsule);
	tcase_add_test(tc, test_admin_queue_takes_8k_in_capsule);
	tcase_add_test(tc, test_write_r2t_h2c_pieces);
	tcase_add_test(tc, test_write_r2t_with_digests);
	tcase_add_test(tc, test_write_response_before_data_sent);
	tcase_add_test(tc, test_partial_sends);
	tcase_add_test(tc, test_stop_ends_requests);
	tcase_add_test(tc, test_arm_contract);
	tcase_add_test(tc, test_arm_reports_a_reset);
	tcase_add_test(tc, test_nothing_pinned);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return run_suite(tcp_suite(), CK_ENV);
}
