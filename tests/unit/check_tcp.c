/*
 * Unit tests of the NVMe/TCP transport (tcp.c, tcp_pdu.c) against a
 * scripted target on a loopback socket: the handshake, every PDU type each
 * way, partial sends and receives, and every refusal of what a broken or
 * hostile target sends, each of which must end the queue with one line and
 * write nothing outside the command's buffer.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>

#include "arm_contract.h"
#include "internal.h"
#include "tcp_pdu.h"

/* ------------------------------------------------------------------------ */
/* The scripted target                                                       */
/* ------------------------------------------------------------------------ */

struct peer {
	int lfd;
	int fd;
	char port[16];
	struct nvmefs_tcp_icreq icreq;	/* what the host sent */
	struct nvmefs_tcp_icresp icresp;	/* what the target answers */
	bool close_at_once;
	bool silent;		/* takes ICReq and answers nothing */
	pthread_t thread;
};

static struct peer peer;
static struct nvmefs_ctrl *ctrl;
static struct nvmefs_queue q;
static bool hd, dd;		/* the digests the peer's ICResp enables */

#define QSIZE 8
#define BUF_LEN 16384
/* Each request's buffer, with a guard after it that nothing may touch. */
#define GUARD 4096
static uint8_t *bufs[QSIZE];

static void read_exact(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
		n = read(fd, (uint8_t *)buf + done, len - done);
		ck_assert_int_gt(n, 0);
		done += (size_t)n;
	}
}

static void *peer_accept(void *arg)
{
	(void)arg;
	int one = 1;

	peer.fd = accept(peer.lfd, NULL, NULL);
	if (peer.fd < 0)
		return NULL;
	/* Each of the script's writes goes at once, however small. */
	setsockopt(peer.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (peer.close_at_once) {
		close(peer.fd);
		peer.fd = -1;
		return NULL;
	}
	read_exact(peer.fd, &peer.icreq, sizeof(peer.icreq));
	if (peer.silent)
		return NULL;
	if (write(peer.fd, &peer.icresp, sizeof(peer.icresp)) != sizeof(peer.icresp))
		peer.fd = -1;
	return NULL;
}

static void icresp_default(struct nvmefs_tcp_icresp *r)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = NVMEFS_TCP_ICRESP;
	r->hdr.hlen = 128;
	r->hdr.plen = nvmefs_cpu_to_le32(128);
	r->maxdata = nvmefs_cpu_to_le32(4096);
}

static void setup(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	peer.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(peer.lfd, 0);
	ck_assert_int_eq(bind(peer.lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(peer.lfd, 4), 0);
	ck_assert_int_eq(getsockname(peer.lfd, (struct sockaddr *)&sin, &len), 0);
	snprintf(peer.port, sizeof(peer.port), "%u", ntohs(sin.sin_port));
	peer.fd = -1;
	peer.close_at_once = false;
	peer.silent = false;
	icresp_default(&peer.icresp);
	hd = dd = false;

	ctrl = calloc(1, sizeof(*ctrl));
	ck_assert_ptr_nonnull(ctrl);
	ctrl->ops = &nvmefs_tcp_ops;
	strcpy(ctrl->traddr, "127.0.0.1");
	strcpy(ctrl->trsvcid, peer.port);
	ctrl->opts.timeout_ms = 2000;
	ctrl->inline_size = 4096;
	for (int i = 0; i < QSIZE; i++) {
		bufs[i] = malloc(BUF_LEN + GUARD);
		ck_assert_ptr_nonnull(bufs[i]);
		memset(bufs[i], 0xee, BUF_LEN + GUARD);
	}
}

static void guards_intact(void)
{
	for (int i = 0; i < QSIZE; i++)
		for (int j = 0; j < GUARD; j++)
			ck_assert_msg(bufs[i][BUF_LEN + j] == 0xee, "buffer %d written past its end", i);
}

static void teardown(void)
{
	if (q.tp) {
		nvmefs_queue_stop(&q, -ESHUTDOWN);
		nvmefs_tcp_ops.queue_destroy(&q);
	}
	nvmefs_queue_fini(&q);
	if (peer.fd >= 0)
		close(peer.fd);
	close(peer.lfd);
	for (int i = 0; i < QSIZE; i++)
		free(bufs[i]);
	free(ctrl);
}

/* Connects queue @qid, the peer answering with peer.icresp. */
static int connect_queue(uint16_t qid)
{
	struct nvmefs_queue_params params = { .qid = qid, .size = QSIZE + 1, .data_slot_size = 1024 };
	int ret;

	ck_assert_int_eq(nvmefs_queue_init(&q, ctrl, &params), 0);
	ck_assert_int_eq(pthread_create(&peer.thread, NULL, peer_accept, NULL), 0);
	ret = nvmefs_tcp_ops.queue_create(&q, &params);
	pthread_join(peer.thread, NULL);
	return ret;
}

static void connect_ok(bool hdgst, bool ddgst)
{
	ctrl->opts.hdr_digest = hdgst;
	ctrl->opts.data_digest = ddgst;
	peer.icresp.digest = (uint8_t)((hdgst ? NVMEFS_TCP_HDR_DIGEST_ENABLE : 0) |
				       (ddgst ? NVMEFS_TCP_DATA_DIGEST_ENABLE : 0));
	hd = hdgst;
	dd = ddgst;
	ck_assert_msg(connect_queue(1) == 0, "connect failed: %s", nvmefs_errmsg());
	ck_assert_int_ge(peer.fd, 0);
}

/* Requests, and how they ended. */
static int ended;
static struct nvmefs_cqe last_cqe;
static int last_error;

static void req_done(struct nvmefs_req *req)
{
	ended++;
	last_cqe = req->cqe;
	last_error = req->error;
	nvmefs_req_put(req);
}

static struct nvmefs_req *submit(uint8_t opcode, enum nvmefs_dir dir, uint32_t len)
{
	struct nvmefs_req *req = nvmefs_req_get(&q);

	ck_assert_ptr_nonnull(req);
	memset(req->cmd, 0, sizeof(*req->cmd));
	req->cmd->sqe.opcode = opcode;
	req->data = len ? bufs[req->slot] : NULL;
	req->len = len;
	req->dir = (uint8_t)dir;
	req->done = req_done;
	ck_assert_int_eq(nvmefs_req_submit(req), 0);
	return req;
}

static int process(void)
{
	return nvmefs_tcp_ops.process(&q, 0);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The peer's PDU: a 24-byte header (digest added when negotiated), and data. */
struct pdu {
	uint8_t b[BUF_LEN + 64];
	size_t len;
};

static void pdu_hdr(struct pdu *p, const void *hdr)
{
	memcpy(p->b, hdr, TCP_HDR_LEN);
	p->len = TCP_HDR_LEN;
	if (hd) {
		put32(p->b + p->len, nvmefs_tcp_crc32c(0, p->b, TCP_HDR_LEN));
		p->len += 4;
	}
}

static void pdu_rsp(struct pdu *p, uint16_t cid, uint16_t status)
{
	struct nvmefs_tcp_rsp r = {
		.hdr = { .type = NVMEFS_TCP_RSP, .flags = hd ? NVMEFS_TCP_F_HDGST : 0,
			 .hlen = TCP_HDR_LEN, .plen = nvmefs_cpu_to_le32(TCP_HDR_LEN + (hd ? 4 : 0)) },
	};

	r.cqe.cid = nvmefs_cpu_to_le16(cid);
	r.cqe.sq_id = nvmefs_cpu_to_le16(1);
	r.cqe.status = nvmefs_cpu_to_le16((uint16_t)(status << 1));
	pdu_hdr(p, &r);
}

static void pdu_c2h(struct pdu *p, uint16_t cid, uint32_t off, uint32_t len, uint8_t flags,
		    uint8_t fill)
{
	uint8_t pdo = (uint8_t)(TCP_HDR_LEN + (hd ? 4 : 0));
	struct nvmefs_tcp_data d = {
		.hdr = { .type = NVMEFS_TCP_C2H_DATA,
			 .flags = (uint8_t)(flags | (hd ? NVMEFS_TCP_F_HDGST : 0) |
					    (dd ? NVMEFS_TCP_F_DDGST : 0)),
			 .hlen = TCP_HDR_LEN, .pdo = pdo,
			 .plen = nvmefs_cpu_to_le32(pdo + len + (dd ? 4 : 0)) },
		.command_id = nvmefs_cpu_to_le16(cid),
		.data_offset = nvmefs_cpu_to_le32(off),
		.data_length = nvmefs_cpu_to_le32(len),
	};

	ck_assert_uint_le(len, BUF_LEN);
	pdu_hdr(p, &d);
	memset(p->b + p->len, fill, len);
	if (dd)
		put32(p->b + p->len + len, nvmefs_tcp_crc32c(0, p->b + p->len, len));
	p->len += len + (dd ? 4 : 0);
}

static void pdu_r2t(struct pdu *p, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
{
	struct nvmefs_tcp_r2t r = {
		.hdr = { .type = NVMEFS_TCP_R2T, .flags = hd ? NVMEFS_TCP_F_HDGST : 0,
			 .hlen = TCP_HDR_LEN, .plen = nvmefs_cpu_to_le32(TCP_HDR_LEN + (hd ? 4 : 0)) },
		.command_id = nvmefs_cpu_to_le16(cid),
		.ttag = nvmefs_cpu_to_le16(ttag),
		.r2t_offset = nvmefs_cpu_to_le32(off),
		.r2t_length = nvmefs_cpu_to_le32(len),
	};

	pdu_hdr(p, &r);
}

/* Until the host's socket has something to read: what the peer wrote
 * has arrived (the host leaves nothing unread between polls). */
static void delivered(void)
{
	struct pollfd pfd = { .fd = ((struct tcp_queue *)q.tp)->fd, .events = POLLIN };

	ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
}

/* Sends @p to the host @chunk bytes at a time, processing after each;
 * returns the first error, else the PDUs processed. */
static int feed(const struct pdu *p, size_t chunk)
{
	int total = 0, ret;

	for (size_t off = 0; off < p->len; off += chunk) {
		size_t n = p->len - off < chunk ? p->len - off : chunk;

		ck_assert_int_eq(write(peer.fd, p->b + off, n), (ssize_t)n);
		delivered();
		ret = process();
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

/* What the host sent: one CapsuleCmd, checked, with its in-capsule data. */
static void expect_cmd(const struct nvmefs_req *req, uint32_t inline_len, uint8_t *data)
{
	uint8_t b[72 + 4];
	struct nvmefs_tcp_cmd c;

	ck_assert_int_ge(process(), 0);
	read_exact(peer.fd, b, 72 + (hd ? 4 : 0));
	memcpy(&c, b, sizeof(c));
	ck_assert_uint_eq(c.hdr.type, NVMEFS_TCP_CMD);
	ck_assert_uint_eq(c.hdr.hlen, 72);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(c.sqe.cid), req->cid);
	ck_assert_uint_eq(c.hdr.flags & NVMEFS_TCP_F_HDGST, hd ? NVMEFS_TCP_F_HDGST : 0);
	if (hd)
		ck_assert_uint_eq(get32(b + 72), nvmefs_tcp_crc32c(0, b, 72));
	if (inline_len) {
		ck_assert_uint_eq(nvmefs_sgl_type(&c.sqe.dptr.sgl), NVMEFS_SGL_TYPE_DATA_BLOCK);
		ck_assert_uint_eq(nvmefs_sgl_subtype(&c.sqe.dptr.sgl), NVMEFS_SGL_SUBTYPE_OFFSET);
		ck_assert_uint_eq(c.hdr.pdo, 72 + (hd ? 4 : 0));
		ck_assert_uint_eq(nvmefs_le32_to_cpu(c.hdr.plen), c.hdr.pdo + inline_len + (dd ? 4 : 0));
		read_exact(peer.fd, data, inline_len);
		if (dd) {
			uint8_t dg[4];

			read_exact(peer.fd, dg, 4);
			ck_assert_uint_eq(get32(dg), nvmefs_tcp_crc32c(0, data, inline_len));
		}
	} else {
		ck_assert_uint_eq(nvmefs_sgl_type(&c.sqe.dptr.sgl), NVMEFS_SGL_TYPE_TRANSPORT_DATA_BLOCK);
		ck_assert_uint_eq(nvmefs_sgl_subtype(&c.sqe.dptr.sgl), NVMEFS_SGL_SUBTYPE_TRANSPORT);
		ck_assert_uint_eq(get32(c.sqe.dptr.sgl.desc), req->len);
		ck_assert_uint_eq(nvmefs_le32_to_cpu(c.hdr.plen), 72 + (hd ? 4 : 0));
	}
}

/* The H2CTermReq a refusal sends, with @fes. */
static void expect_term(uint16_t fes)
{
	uint8_t b[24];
	struct nvmefs_tcp_term t;

	read_exact(peer.fd, b, sizeof(b));
	memcpy(&t, b, sizeof(t));
	ck_assert_uint_eq(t.hdr.type, NVMEFS_TCP_H2C_TERM);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(t.fes), fes);
	ck_assert_uint_eq(nvmefs_le32_to_cpu(t.hdr.plen), 24 + 24 + (hd ? 4 : 0));
}

/* A refusal: -EPROTO, the queue failed, one line naming @what. */
static void expect_refused(int ret, const char *what)
{
	ck_assert_int_eq(ret, -EPROTO);
	ck_assert_int_eq(q.failed, -EPROTO);
	ck_assert_msg(strstr(nvmefs_errmsg(), what), "message '%s' lacks '%s'", nvmefs_errmsg(), what);
	ck_assert_ptr_null(strchr(nvmefs_errmsg(), '\n'));
	guards_intact();
}

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

/* The controller may decline digests it was asked for: none are used. */
START_TEST(test_digests_declined)
{
	struct nvmefs_req *req;
	struct pdu p;

	ctrl->opts.hdr_digest = ctrl->opts.data_digest = 1;
	ck_assert_int_eq(connect_queue(1), 0);
	ck_assert_uint_eq(peer.icreq.digest, NVMEFS_TCP_HDR_DIGEST_ENABLE | NVMEFS_TCP_DATA_DIGEST_ENABLE);
	ck_assert(!((struct tcp_queue *)q.tp)->p.hdgst);
	ck_assert(!((struct tcp_queue *)q.tp)->p.ddgst);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 512);
	expect_cmd(req, 0, NULL);
	pdu_c2h(&p, req->cid, 0, 512, NVMEFS_TCP_F_DATA_LAST | NVMEFS_TCP_F_DATA_SUCCESS, 1);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
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

	connect_ok(false, false);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, 4096);
	expect_cmd(req, 0, NULL);
	pdu_c2h(&p, req->cid, 0, 4096, NVMEFS_TCP_F_DATA_LAST | NVMEFS_TCP_F_DATA_SUCCESS, 0x33);
	ck_assert_int_eq(feed(&p, 1 << 20), 1);
	ck_assert_int_eq(ended, 1);
	ck_assert_int_eq(last_error, 0);
	ck_assert(nvmefs_cqe_ok(&last_cqe));
	ck_assert_uint_eq(bufs[0][4095], 0x33);
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
			ck_assert_uint_eq(get32(b + 24), nvmefs_tcp_crc32c(0, b, 24));
		read_exact(peer.fd, data, n);
		ck_assert_mem_eq(data, bufs[req->slot] + off, n);
		if (dd) {
			read_exact(peer.fd, b, 4);
			ck_assert_uint_eq(get32(b), nvmefs_tcp_crc32c(0, data, n));
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
	int sndbuf = 4096;

	/* The window the peer offers is set when the connection is made. */
	ck_assert_int_eq(setsockopt(peer.lfd, SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf)), 0);
	connect_ok(false, false);
	ck_assert_int_eq(setsockopt(((struct tcp_queue *)q.tp)->fd, SOL_SOCKET, SO_SNDBUF,
				    &sndbuf, sizeof(sndbuf)), 0);
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
	int small = 2048;
	size_t have = 0;
	uint8_t hdr[24];

	ck_assert_int_eq(setsockopt(peer.lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	connect_ok(false, false);
	ck_assert_int_eq(setsockopt(((struct tcp_queue *)q.tp)->fd, SOL_SOCKET, SO_SNDBUF,
				    &small, sizeof(small)), 0);
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

/* ------------------------------------------------------------------------ */
/* Refusals                                                                  */
/* ------------------------------------------------------------------------ */

static struct nvmefs_req *read_in_flight(uint32_t len)
{
	struct nvmefs_req *req;

	connect_ok(false, false);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, len);
	expect_cmd(req, 0, NULL);
	return req;
}

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
	tcase_add_test(tc, test_digests_declined);
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
	tcase_add_test(tc, test_write_in_capsule);
	tcase_add_test(tc, test_admin_queue_takes_8k_in_capsule);
	tcase_add_test(tc, test_write_r2t_h2c_pieces);
	tcase_add_test(tc, test_write_r2t_with_digests);
	tcase_add_test(tc, test_write_response_before_data_sent);
	tcase_add_test(tc, test_partial_sends);
	tcase_add_test(tc, test_stop_ends_requests);
	tcase_add_test(tc, test_nothing_pinned);
	suite_add_tcase(s, tc);

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
	tcase_add_test(tc, test_arm_contract);
	tcase_add_test(tc, test_arm_reports_a_reset);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tcp_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
