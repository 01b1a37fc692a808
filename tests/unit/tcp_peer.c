/*
 * The scripted NVMe/TCP target of the transport's unit tests (check_tcp.c,
 * check_tcp_errors.c): a loopback socket the test writes the target's PDUs
 * to and reads the host's from, with the queue under test driven between.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_peer.h"
#include "types/ctrl_types.h"
#include "transport/queue.h"
#include "types/transport_ops.h"

struct peer peer;
struct nvmefs_ctrl *ctrl;
struct nvmefs_queue q;
bool hd, dd;		/* the digests the peer's ICResp enables */

uint8_t *bufs[QSIZE];

void read_exact(int fd, void *buf, size_t len)
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

void setup(void)
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

void guards_intact(void)
{
	for (int i = 0; i < QSIZE; i++)
		for (int j = 0; j < GUARD; j++)
			ck_assert_msg(bufs[i][BUF_LEN + j] == 0xee, "buffer %d written past its end", i);
}

void teardown(void)
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
int connect_queue(uint16_t qid)
{
	struct nvmefs_queue_params params = { .qid = qid, .size = QSIZE + 1, .data_slot_size = 1024 };
	int ret;

	ck_assert_int_eq(nvmefs_queue_init(&q, ctrl, &params), 0);
	ck_assert_int_eq(pthread_create(&peer.thread, NULL, peer_accept, NULL), 0);
	ret = nvmefs_tcp_ops.queue_create(&q, &params);
	pthread_join(peer.thread, NULL);
	return ret;
}

void connect_ok(bool hdgst, bool ddgst)
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

void connect_small(int bytes)
{
	/* The window the peer offers is set when the connection is made. */
	ck_assert_int_eq(setsockopt(peer.lfd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)), 0);
	connect_ok(false, false);
	ck_assert_int_eq(setsockopt(((struct tcp_queue *)q.tp)->stream.fd, SOL_SOCKET, SO_SNDBUF,
				    &bytes, sizeof(bytes)), 0);
}

/* Requests, and how they ended. */
int ended;
struct nvmefs_cqe last_cqe;
int last_error;

static void req_done(struct nvmefs_req *req)
{
	ended++;
	last_cqe = req->cqe;
	last_error = req->error;
	nvmefs_req_put(req);
}

struct nvmefs_req *submit(uint8_t opcode, enum nvmefs_dir dir, uint32_t len)
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

int process(void)
{
	return nvmefs_tcp_ops.process(&q, 0);
}

void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void pdu_hdr(struct pdu *p, const void *hdr)
{
	memcpy(p->b, hdr, TCP_HDR_LEN);
	p->len = TCP_HDR_LEN;
	if (hd) {
		put32(p->b + p->len, nvmefs_tcp_crc32c(0, p->b, TCP_HDR_LEN));
		p->len += 4;
	}
}

void pdu_rsp(struct pdu *p, uint16_t cid, uint16_t status)
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

void pdu_c2h(struct pdu *p, uint16_t cid, uint32_t off, uint32_t len, uint8_t flags,
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

void pdu_r2t(struct pdu *p, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
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
void delivered(void)
{
	struct pollfd pfd = { .fd = ((struct tcp_queue *)q.tp)->stream.fd, .events = POLLIN };

	ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
}

/* Sends @p to the host @chunk bytes at a time, processing after each;
 * returns the first error, else the PDUs processed. */
int feed(const struct pdu *p, size_t chunk)
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
void expect_cmd(const struct nvmefs_req *req, uint32_t inline_len, uint8_t *data)
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
		ck_assert_uint_eq(le32_at(b + 72), nvmefs_tcp_crc32c(0, b, 72));
	if (inline_len) {
		ck_assert_uint_eq(nvmefs_sgl_type(&c.sqe.dptr.sgl), NVMEFS_SGL_TYPE_DATA_BLOCK);
		ck_assert_uint_eq(nvmefs_sgl_subtype(&c.sqe.dptr.sgl), NVMEFS_SGL_SUBTYPE_OFFSET);
		ck_assert_uint_eq(c.hdr.pdo, 72 + (hd ? 4 : 0));
		ck_assert_uint_eq(nvmefs_le32_to_cpu(c.hdr.plen), c.hdr.pdo + inline_len + (dd ? 4 : 0));
		read_exact(peer.fd, data, inline_len);
		if (dd) {
			uint8_t dg[4];

			read_exact(peer.fd, dg, 4);
			ck_assert_uint_eq(le32_at(dg), nvmefs_tcp_crc32c(0, data, inline_len));
		}
	} else {
		ck_assert_uint_eq(nvmefs_sgl_type(&c.sqe.dptr.sgl), NVMEFS_SGL_TYPE_TRANSPORT_DATA_BLOCK);
		ck_assert_uint_eq(nvmefs_sgl_subtype(&c.sqe.dptr.sgl), NVMEFS_SGL_SUBTYPE_TRANSPORT);
		ck_assert_uint_eq(le32_at(c.sqe.dptr.sgl.desc), req->len);
		ck_assert_uint_eq(nvmefs_le32_to_cpu(c.hdr.plen), 72 + (hd ? 4 : 0));
	}
}

/* The H2CTermReq a refusal sends, with @fes. */
void expect_term(uint16_t fes, uint32_t fei)
{
	uint8_t b[48];
	struct nvmefs_tcp_term t;

	read_exact(peer.fd, b, sizeof(b));
	memcpy(&t, b, sizeof(t));
	ck_assert_uint_eq(t.hdr.type, NVMEFS_TCP_H2C_TERM);
	ck_assert_uint_eq(t.hdr.flags, 0);
	ck_assert_uint_eq(t.hdr.hlen, 24);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(t.fes), fes);
	ck_assert_uint_eq(le32_at(t.fei), fei);
	/* The offending PDU's header, its HLEN bytes, and no digest. */
	ck_assert_uint_eq(nvmefs_le32_to_cpu(t.hdr.plen), 24 + 24);
	ck_assert_uint_eq(b[24 + 2], 24);
}

/* A refusal: -EPROTO, the queue failed, one line naming @what. */
void expect_refused(int ret, const char *what)
{
	ck_assert_int_eq(ret, -EPROTO);
	ck_assert_int_eq(q.failed, -EPROTO);
	ck_assert_msg(strstr(nvmefs_errmsg(), what), "message '%s' lacks '%s'", nvmefs_errmsg(), what);
	ck_assert_ptr_null(strchr(nvmefs_errmsg(), '\n'));
	guards_intact();
}

struct nvmefs_req *read_sent(bool hdgst, bool ddgst, uint32_t len)
{
	struct nvmefs_req *req;

	connect_ok(hdgst, ddgst);
	req = submit(0x02, NVMEFS_DIR_FROM_CTRL, len);
	expect_cmd(req, 0, NULL);
	return req;
}

struct nvmefs_req *read_in_flight(uint32_t len)
{
	return read_sent(false, false, len);
}
