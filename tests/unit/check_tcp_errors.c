/*
 * Unit tests of the NVMe/TCP transport (tcp.c, tcp_pdu.c) against a
 * scripted target on a loopback socket (tcp_peer.c): every refusal of what
 * a broken or hostile target sends, each of which must end the queue with
 * one line and write nothing outside the command's buffer, and how a queue
 * ends.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"
#include "tcp_peer.h"
#include "base/clock.h"
#include "transport/queue.h"
#include "types/transport_ops.h"

/*
 * Faults in the polls of the test's own thread (the binary is linked with
 * --wrap=poll; the peer's thread polls untouched): the next one fails with
 * poll_errno, or each of the next poll_eintr ones that would wait is
 * interrupted after at most 150 ms, as a signal would.
 */
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);

static pthread_t poll_thread;
static int poll_errno, poll_eintr;

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int ret;

	if (!pthread_equal(pthread_self(), poll_thread))
		return __real_poll(fds, n, timeout);
	if (poll_errno) {
		errno = poll_errno;
		poll_errno = 0;
		return -1;
	}
	if (!poll_eintr || !timeout)
		return __real_poll(fds, n, timeout);
	poll_eintr--;
	ret = __real_poll(fds, n, timeout < 0 || timeout > 150 ? 150 : timeout);
	if (ret)
		return ret;
	errno = EINTR;
	return -1;
}

/* What the peer reads from now on, until the stream ends: 0 when it ends
 * with the host's FIN, else the error (ECONNRESET: its RST). */
static int peer_reads_to_the_end(size_t *got)
{
	static uint8_t sink[65536];

	*got = 0;
	for (;;) {
		struct pollfd pfd = { .fd = peer.fd, .events = POLLIN };
		ssize_t n;

		ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
		n = read(peer.fd, sink, sizeof(sink));
		if (n == 0)
			return 0;
		if (n < 0)
			return errno;
		*got += (size_t)n;
	}
}

/* ------------------------------------------------------------------------ */
/* Refusals                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(test_c2h_more_than_asked)
{
	struct nvmefs_req *req = read_in_flight(4096);
	struct pdu p;

	pdu_c2h(&p, req->cid, 0, 4096 + 512, NVMEFS_TCP_F_DATA_LAST, 0x44);
	expect_refused(feed(&p, 1 << 20), "C2HData of 4608 bytes at offset 0");
	expect_term(NVMEFS_TCP_FES_DATA_OUT_OF_RANGE, 0);
}
END_TEST

START_TEST(test_c2h_outside_the_range)
{
	struct nvmefs_req *req = read_in_flight(8192);
	struct pdu p;

	pdu_c2h(&p, req->cid, 4096, 4096, 0, 0x44);
	expect_refused(feed(&p, 1 << 20), "at offset 4096, where 0 was next");
	expect_term(NVMEFS_TCP_FES_DATA_OUT_OF_RANGE, 0);
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
	expect_term(NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_data, command_id));
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
	expect_term(NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_hdr, plen));
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
	expect_term(NVMEFS_TCP_FES_DATA_OUT_OF_RANGE, 0);
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
	expect_term(NVMEFS_TCP_FES_DATA_LIMIT_EXCEEDED, 0);
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

	req = read_sent(true, false, 4096);
	pdu_rsp(&p, req->cid, 0);
	p.b[24] ^= 1;
	expect_refused(feed(&p, 1 << 20), "header digest mismatch");
	expect_term(NVMEFS_TCP_FES_HDR_DIGEST_ERR, 0);
	ck_assert_int_eq(ended, 0);
}
END_TEST

/* A data digest mismatch fails that command alone, as a transient
 * transport error that is retried, and the connection goes on: what
 * nvme-tcp does.  The PDU's bytes are all taken, so the stream stays in
 * step. */
START_TEST(test_data_digest_mismatch)
{
	struct nvmefs_req *req;
	struct pdu p;

	req = read_sent(false, true, 4096);
	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_LAST | NVMEFS_TCP_F_DATA_SUCCESS, 0x55);
	p.b[p.len - 1] ^= 1;
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 1);
	ck_assert_int_eq(last_error, 0);
	ck_assert_uint_eq(nvmefs_cqe_status(&last_cqe), NVME_SC_TRAN_TPORT_ERROR);
	ck_assert_int_eq(q.failed, 0);
	/* No H2CTermReq: the next thing the target reads is the next command. */
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 4096);
	expect_cmd(req, 0, NULL);
	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_LAST | NVMEFS_TCP_F_DATA_SUCCESS, 0x56);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 2);
	ck_assert(nvmefs_cqe_ok(&last_cqe));
	ck_assert_uint_eq(bufs[req->slot][4095], 0x56);
	guards_intact();
}
END_TEST

/* The mismatch in a C2HData that does not end the read: the CapsuleResp's
 * success does not hide it. */
START_TEST(test_data_digest_mismatch_then_rsp)
{
	struct nvmefs_req *req;
	struct pdu p;

	req = read_sent(true, true, 8192);
	pdu_c2h(&p, req->cid, 0, 4096, 0, 0x55);
	p.b[p.len - 1] ^= 1;
	ck_assert_int_eq(feed(&p, 1), 0);
	pdu_c2h(&p, req->cid, 4096, 4096, NVMEFS_TCP_F_DATA_LAST, 0x55);
	ck_assert_int_eq(feed(&p, 1 << 20), 0);
	pdu_rsp(&p, req->cid, 0);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_uint_eq(nvmefs_cqe_status(&last_cqe), NVME_SC_TRAN_TPORT_ERROR);
	ck_assert_int_eq(q.failed, 0);
}
END_TEST

START_TEST(test_header_digest_missing)
{
	struct nvmefs_req *req;
	struct pdu p;

	req = read_sent(false, false, 4096);
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
	expect_term(NVMEFS_TCP_FES_INVALID_PDU_HDR,
		    offsetof(struct nvmefs_tcp_rsp, cqe) + offsetof(struct nvmefs_cqe, cid));
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

/* ------------------------------------------------------------------------ */
/* How a queue ends                                                          */
/* ------------------------------------------------------------------------ */

/*
 * A stopped queue's writes still in the socket's send buffer never reach
 * the target: they could land after the same blocks were written anew on
 * the next connection.  The connection ends with a reset, as nvme-tcp's
 * (sock_no_linger()), not a FIN behind the pending bytes.
 */
START_TEST(test_stop_resets_the_connection)
{
	size_t got;

	connect_small(4096);
	for (int i = 0; i < QSIZE; i++)
		submit(0x01, NVMEFS_DIR_TO_CTRL, 4096);
	ck_assert_int_ge(process(), 0);
	/* The peer reads nothing: the socket is full, bytes wait in it. */
	ck_assert_ptr_nonnull(((struct tcp_queue *)q.tp)->tx_head);
	nvmefs_queue_stop(&q, -ETIMEDOUT);
	ck_assert_int_eq(peer_reads_to_the_end(&got), ECONNRESET);
	ck_assert_uint_lt(got, QSIZE * (72 + 4096));
}
END_TEST

/* The target's C2HTermReq says why it ended the connection: it is read
 * before the send error the reset gives. */
START_TEST(test_term_req_read_before_send_error)
{
	struct nvmefs_tcp_term t = {
		.hdr = { .type = NVMEFS_TCP_C2H_TERM, .hlen = 24, .plen = nvmefs_cpu_to_le32(24 + 24) },
		.fes = nvmefs_cpu_to_le16(NVMEFS_TCP_FES_PDU_SEQ_ERR),
	};
	struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
	uint8_t b[48] = { 0 };

	read_in_flight(4096);
	memcpy(b, &t, sizeof(t));
	ck_assert_int_eq(write(peer.fd, b, sizeof(b)), (ssize_t)sizeof(b));
	ck_assert_int_eq(setsockopt(peer.fd, SOL_SOCKET, SO_LINGER, &abort_close,
				    sizeof(abort_close)), 0);
	close(peer.fd);
	peer.fd = -1;
	delivered();
	/* A write waits to go: the send meets the reset first. */
	submit(0x01, NVMEFS_DIR_TO_CTRL, 512);
	ck_assert_int_eq(process(), -ECONNRESET);
	ck_assert_msg(strstr(nvmefs_errmsg(), "C2HTermReq: PDU sequence error"),
		      "'%s' lacks the target's reason", nvmefs_errmsg());
}
END_TEST

/* Until the host's socket stays full, the peer reading nothing: no ack
 * frees room in it any more. */
static void host_socket_full(void)
{
	struct pollfd pfd = { .fd = ((struct tcp_queue *)q.tp)->stream.fd, .events = POLLOUT };
	int still = 0;

	for (int i = 0; i < 1000 && still < 5; i++) {
		ck_assert_int_ge(process(), 0);
		still = poll(&pfd, 1, 0) == 0 ? still + 1 : 0;
		usleep(2000);
	}
	ck_assert_int_eq(still, 5);
}

/* A refusal while a PDU is half sent: the H2CTermReq cannot go into its
 * middle, nor be dropped unsaid; with no room to finish the PDU first, the
 * connection is reset and the message says so. */
START_TEST(test_term_after_half_sent_pdu)
{
	struct nvmefs_req *req;
	struct pdu p;
	size_t got;

	connect_small(4096);
	req = submit(0x01, NVMEFS_DIR_TO_CTRL, BUF_LEN);
	expect_cmd(req, 0, NULL);
	pdu_r2t(&p, req->cid, 1, 0, BUF_LEN);
	ck_assert_int_ge(feed(&p, 1 << 20), 0);
	host_socket_full();
	ck_assert_uint_gt(nvmefs_tcp_tx_partial(&q), 0);
	pdu_rsp(&p, (uint16_t)(req->cid ^ 0x100), 0);
	expect_refused(feed(&p, 1 << 20), "CapsuleResp for command id");
	ck_assert_msg(strstr(nvmefs_errmsg(), "reset"), "'%s' does not say the connection is reset",
		      nvmefs_errmsg());
	nvmefs_queue_stop(&q, -EPROTO);
	ck_assert_int_eq(peer_reads_to_the_end(&got), ECONNRESET);
}
END_TEST

/* Waiting for the connection failing otherwise than by the timeout is no
 * connection. */
START_TEST(test_connect_wait_error)
{
	/* The peer does not wait for an ICReq that never comes. */
	peer.close_at_once = true;
	poll_thread = pthread_self();
	poll_errno = ENOMEM;
	ck_assert_int_eq(connect_queue(1), -ENOMEM);
	ck_assert_int_eq(poll_errno, 0);
	ck_assert_msg(strstr(nvmefs_errmsg(), "waiting for the connection to"), "'%s'", nvmefs_errmsg());
	ck_assert_ptr_null(q.tp);
}
END_TEST

/* Signals do not stretch a wait: each restart waits only what is left. */
START_TEST(test_handshake_wait_keeps_its_deadline)
{
	int64_t start;

	peer.silent = true;
	ctrl->opts.timeout_ms = 400;
	poll_thread = pthread_self();
	poll_eintr = 3;
	start = nvmefs_now_ms();
	ck_assert_int_eq(connect_queue(1), -ETIMEDOUT);
	/* Restarting with the whole 400 ms would take at least 3 x 150 + 400:
	 * below that, with room for a loaded machine's scheduling. */
	ck_assert_int_lt(nvmefs_now_ms() - start, 800);
	/* The connect's wait may take one; the handshake's took the rest. */
	ck_assert_int_eq(poll_eintr, 0);
}
END_TEST

START_TEST(test_process_wait_keeps_its_deadline)
{
	int64_t start, took;

	read_in_flight(4096);
	poll_thread = pthread_self();
	poll_eintr = 4;
	start = nvmefs_now_ms();
	ck_assert_int_eq(nvmefs_tcp_ops.process(&q, 300), 0);
	took = nvmefs_now_ms() - start;
	ck_assert_int_ge(took, 250);
	ck_assert_int_lt(took, 450);
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
	tcase_add_test(tc, test_data_digest_mismatch_then_rsp);
	tcase_add_test(tc, test_header_digest_missing);
	tcase_add_test(tc, test_rsp_unknown_cid);
	tcase_add_test(tc, test_unexpected_pdu_type);
	tcase_add_test(tc, test_bad_hlen);
	tcase_add_test(tc, test_c2h_term_req);
	tcase_add_test(tc, test_closed_peer_noticed);
	suite_add_tcase(s, tc);

	tc = tcase_create("ending");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_stop_resets_the_connection);
	tcase_add_test(tc, test_term_req_read_before_send_error);
	tcase_add_test(tc, test_term_after_half_sent_pdu);
	tcase_add_test(tc, test_connect_wait_error);
	tcase_add_test(tc, test_handshake_wait_keeps_its_deadline);
	tcase_add_test(tc, test_process_wait_keeps_its_deadline);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(tcp_errors_suite(), CK_ENV);
}
