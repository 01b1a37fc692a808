/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/TCP receive side without sockets (tcp_pdu.h).  Every byte the
 * target sends is checked here before it is used: a header is taken whole
 * (24 bytes and its digest) and checked against the command it names
 * before any of its data is let into that command's buffer, which is where
 * the data then goes directly.  Any refusal fails the queue with one line,
 * and leaves the H2CTermReq to tell the target why.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tcp_pdu.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

static uint32_t rx_hdr_len(const struct tcp_queue *tq)
{
	return TCP_HDR_LEN + digest_len(tq->p.hdgst);
}

int nvmefs_tcp_rx_iov(struct nvmefs_queue *q, struct iovec *iov, int max)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_rx *rx = &tq->rx;
	int n = 0;

	if (max < 3)
		return 0;
	switch (rx->stage) {
	case TCP_RX_HDR:
		iov_add(iov, &n, rx->hdr + rx->have, rx_hdr_len(tq) - rx->have);
		return n;
	case TCP_RX_TERM:
		iov_add(iov, &n, rx->term + rx->have, rx->term_len - rx->have);
		return n;
	case TCP_RX_DATA:
		iov_add(iov, &n, (uint8_t *)rx->req->data + rx->data_off, rx->data_left);
		/* The digest and the next header come with it. */
		__attribute__((fallthrough));
	case TCP_RX_DDGST:
		if (tq->p.ddgst)
			iov_add(iov, &n, rx->ddgst + (rx->stage == TCP_RX_DDGST ? rx->have : 0),
				NVMEFS_TCP_DIGEST_LEN - (rx->stage == TCP_RX_DDGST ? rx->have : 0));
		iov_add(iov, &n, rx->hdr, rx_hdr_len(tq));
		return n;
	}
	return n;
}

static const char *fes_str(uint16_t fes)
{
	switch (fes) {
	case NVMEFS_TCP_FES_INVALID_PDU_HDR: return "invalid PDU header field";
	case NVMEFS_TCP_FES_PDU_SEQ_ERR: return "PDU sequence error";
	case NVMEFS_TCP_FES_HDR_DIGEST_ERR: return "header digest error";
	case NVMEFS_TCP_FES_DATA_OUT_OF_RANGE: return "data transfer out of range";
	case NVMEFS_TCP_FES_DATA_LIMIT_EXCEEDED: return "R2T or data transfer limit exceeded";
	case NVMEFS_TCP_FES_UNSUPPORTED_PARAM: return "unsupported parameter";
	default: return "reserved error status";
	}
}

/*
 * Refuses what the target sent: the message says what and on which queue,
 * the queue fails, and the H2CTermReq with @fes and @fei is left to send,
 * carrying the offending header.  FEI is the offending field's byte offset
 * for an invalid header field and reserved (0) for the other FES the host
 * sends (NVMe/TCP 1.0, "Fatal Error Information").
 */
__attribute__((format(printf, 4, 5)))
static int refuse(struct nvmefs_queue *q, uint16_t fes, uint32_t fei, const char *fmt, ...)
{
	struct tcp_queue *tq = q->tp;
	struct nvmefs_tcp_term *t = &tq->rx.term_out;
	char what[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	memset(t, 0, sizeof(*t));
	t->hdr.type = NVMEFS_TCP_H2C_TERM;
	t->hdr.hlen = sizeof(*t);
	/* The data is the offending header's HLEN bytes, without its digest
	 * (NVMe/TCP 1.0, H2CTermReq). */
	t->hdr.plen = nvmefs_cpu_to_le32(sizeof(*t) + TCP_HDR_LEN);
	t->fes = nvmefs_cpu_to_le16(fes);
	put_le32(t->fei, fei);
	nvmefs_queue_fail(q, -EPROTO);
	return nvmefs_error(-EPROTO, "queue %u to %s: %s: the target broke NVMe/TCP (%s), "
			    "so the queue is ended", q->qid, nvmefs_ctrl_where(q->ctrl),
			    what, fes_str(fes));
}

/* The request a PDU names by @cid: in flight and still awaiting its
 * response; NULL if none. */
static struct nvmefs_req *inflight_req(struct nvmefs_queue *q, uint16_t cid)
{
	uint16_t slot = (uint16_t)(cid & ((1u << q->cid_slot_bits) - 1));
	struct nvmefs_req *req;

	if (slot >= q->nr_reqs)
		return NULL;
	req = &q->reqs[slot];
	if (!req->inflight || req->cid != cid || !(req->wait & NVMEFS_REQ_WAIT_RESP))
		return NULL;
	return req;
}

static int rx_c2h_data(struct nvmefs_queue *q, const struct nvmefs_tcp_data *d)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_rx *rx = &tq->rx;
	uint16_t cid = nvmefs_le16_to_cpu(d->command_id);
	uint32_t off = nvmefs_le32_to_cpu(d->data_offset), len = nvmefs_le32_to_cpu(d->data_length);
	uint32_t hd = digest_len(tq->p.hdgst), dd = digest_len(tq->p.ddgst);
	uint32_t plen = nvmefs_le32_to_cpu(d->hdr.plen);
	struct nvmefs_req *req = inflight_req(q, cid);
	struct tcp_slot *s;

	if (!req || req->dir != NVMEFS_DIR_FROM_CTRL)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_data, command_id),
			      "C2HData for command id %#x, which is no read in flight", cid);
	s = &tq->slots[req->slot];
	if (!len)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR,
			      offsetof(struct nvmefs_tcp_data, data_length),
			      "C2HData of 0 bytes for command id %#x", cid);
	if (off != s->c2h_rcvd)
		return refuse(q, NVMEFS_TCP_FES_DATA_OUT_OF_RANGE, 0,
			      "C2HData for command id %#x at offset %u, where %u was next", cid, off,
			      s->c2h_rcvd);
	if (len > req->len - off)
		return refuse(q, NVMEFS_TCP_FES_DATA_OUT_OF_RANGE, 0,
			      "C2HData of %u bytes at offset %u for command id %#x, which asked for %u",
			      len, off, cid, req->len);
	if (d->hdr.pdo != TCP_HDR_LEN + hd || plen != d->hdr.pdo + len + dd)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, d->hdr.pdo != TCP_HDR_LEN + hd ?
			      offsetof(struct nvmefs_tcp_hdr, pdo) : offsetof(struct nvmefs_tcp_hdr, plen),
			      "C2HData for command id %#x with data offset %u and length %u, which do "
			      "not hold its %u bytes", cid, d->hdr.pdo, plen, len);
	if ((d->hdr.flags & NVMEFS_TCP_F_DATA_SUCCESS) &&
	    (!(d->hdr.flags & NVMEFS_TCP_F_DATA_LAST) || off + len != req->len))
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_hdr, flags),
			      "C2HData for command id %#x claims success before its last byte", cid);
	rx->req = req;
	rx->flags = d->hdr.flags;
	rx->data_off = off;
	rx->data_left = len;
	rx->crc = 0;
	rx->stage = TCP_RX_DATA;
	rx->have = 0;
	return 0;
}

static int rx_r2t(struct nvmefs_queue *q, const struct nvmefs_tcp_r2t *r)
{
	struct tcp_queue *tq = q->tp;
	uint16_t cid = nvmefs_le16_to_cpu(r->command_id);
	uint32_t off = nvmefs_le32_to_cpu(r->r2t_offset), len = nvmefs_le32_to_cpu(r->r2t_length);
	struct nvmefs_req *req = inflight_req(q, cid);
	struct tcp_slot *s;

	if (!req || req->dir != NVMEFS_DIR_TO_CTRL || tq->slots[req->slot].in_capsule)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_r2t, command_id),
			      "R2T for command id %#x, which is no write in flight awaiting one", cid);
	s = &tq->slots[req->slot];
	if (s->h2c_off != s->h2c_end)
		return refuse(q, NVMEFS_TCP_FES_DATA_LIMIT_EXCEEDED, 0,
			      "a second R2T for command id %#x before the first one's data", cid);
	if (!len || off != s->r2t_next || len > req->len - off)
		return refuse(q, NVMEFS_TCP_FES_DATA_OUT_OF_RANGE, 0,
			      "R2T for %u bytes at offset %u of command id %#x, a write of %u bytes "
			      "of which %u went", len, off, cid, req->len, s->r2t_next);
	s->ttag = nvmefs_le16_to_cpu(r->ttag);
	s->h2c_off = off;
	s->h2c_end = off + len;
	s->r2t_next = s->h2c_end;
	nvmefs_tcp_h2c_start(q, req);
	return 0;
}

/* A read's success: only once every byte arrived through C2HData, each
 * with its data digest right. */
static bool read_whole(const struct tcp_queue *tq, const struct nvmefs_req *req)
{
	const struct tcp_slot *s = &tq->slots[req->slot];

	return req->dir != NVMEFS_DIR_FROM_CTRL || (!s->c2h_bad && s->c2h_rcvd == req->len);
}

/* The status of a read whose data did not all arrive whole: a transient
 * transport error, retried like one (nvme-tcp fails a data digest error
 * so, and keeps the connection). */
static const uint16_t READ_LOST = NVME_SC_TRAN_TPORT_ERROR << 1;

static int rx_rsp(struct nvmefs_queue *q, const struct nvmefs_tcp_rsp *r)
{
	struct nvmefs_cqe cqe;
	struct nvmefs_req *req;
	int ret;

	memcpy(&cqe, &r->cqe, sizeof(cqe));
	req = inflight_req(q, nvmefs_cqe_cid(&cqe));
	if (req && nvmefs_cqe_ok(&cqe) && !read_whole(q->tp, req))
		cqe.status = nvmefs_cpu_to_le16(READ_LOST);
	ret = nvmefs_queue_response(q, &cqe);
	if (ret < 0)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR,
			      offsetof(struct nvmefs_tcp_rsp, cqe) + offsetof(struct nvmefs_cqe, cid),
			      "CapsuleResp for command id %#x, which is not in flight",
			      nvmefs_cqe_cid(&cqe));
	return 1;
}

/* The target's C2HTermReq: it ends the connection, and says why. */
static int rx_term_done(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	const struct nvmefs_tcp_term *t = (const void *)tq->rx.hdr;
	uint16_t fes = nvmefs_le16_to_cpu(t->fes);

	nvmefs_queue_fail(q, -ECONNRESET);
	return nvmefs_error(-ECONNRESET, "queue %u: the target %s ended the connection with a "
			    "C2HTermReq: %s (FES %#x, FEI %#x): a host/target mismatch; check the "
			    "target's log", q->qid, nvmefs_ctrl_where(q->ctrl), fes_str(fes), fes,
			    get_le32(t->fei));
}

static int rx_header(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_rx *rx = &tq->rx;
	const struct nvmefs_tcp_hdr *h = (const void *)rx->hdr;
	uint32_t hd = digest_len(tq->p.hdgst), plen = nvmefs_le32_to_cpu(h->plen);
	uint8_t want = tq->p.hdgst ? NVMEFS_TCP_F_HDGST : 0;

	if (h->type == NVMEFS_TCP_C2H_TERM) {
		/* No digests: what we took as one is the start of its data. */
		if (h->hlen != TCP_HDR_LEN || plen < TCP_HDR_LEN || plen > NVMEFS_TCP_TERM_MAX_PLEN ||
		    plen - TCP_HDR_LEN < hd)
			return rx_term_done(q);
		rx->term_len = plen - TCP_HDR_LEN;
		memcpy(rx->term, rx->hdr + TCP_HDR_LEN, hd);
		rx->have = hd;
		rx->stage = TCP_RX_TERM;
		return rx->have == rx->term_len ? rx_term_done(q) : 0;
	}
	if (h->hlen != TCP_HDR_LEN)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_hdr, hlen),
			      "a PDU of type %#x with a %u-byte header, not %u", h->type, h->hlen,
			      TCP_HDR_LEN);
	if ((h->flags & NVMEFS_TCP_F_HDGST) != want)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_hdr, flags),
			      "a PDU of type %#x %s a header digest, which was %snegotiated", h->type,
			      want ? "without" : "with", want ? "" : "not ");
	if (hd) {
		uint32_t got = get_le32(rx->hdr + TCP_HDR_LEN),
			 calc = nvmefs_tcp_crc32c(0, rx->hdr, TCP_HDR_LEN);

		if (got != calc)
			return refuse(q, NVMEFS_TCP_FES_HDR_DIGEST_ERR, 0,
				      "header digest mismatch in a PDU of type %#x (received %#x, "
				      "computed %#x): the connection corrupted it", h->type, got, calc);
	}
	if (h->type == NVMEFS_TCP_C2H_DATA) {
		uint8_t ddgst = tq->p.ddgst ? NVMEFS_TCP_F_DDGST : 0;

		if ((h->flags & NVMEFS_TCP_F_DDGST) != ddgst)
			return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR,
				      offsetof(struct nvmefs_tcp_hdr, flags),
				      "C2HData %s a data digest, which was %snegotiated",
				      ddgst ? "without" : "with", ddgst ? "" : "not ");
		return rx_c2h_data(q, (const void *)rx->hdr);
	}
	if (h->type != NVMEFS_TCP_RSP && h->type != NVMEFS_TCP_R2T)
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_hdr, type),
			      "a PDU of type %#x, which a controller does not send once connected",
			      h->type);
	if (plen != TCP_HDR_LEN + hd || h->pdo || (h->flags & ~NVMEFS_TCP_F_HDGST))
		return refuse(q, NVMEFS_TCP_FES_INVALID_PDU_HDR, offsetof(struct nvmefs_tcp_hdr, plen),
			      "a PDU of type %#x with flags %#x, data offset %u and length %u: it "
			      "carries no data", h->type, h->flags, h->pdo, plen);
	return h->type == NVMEFS_TCP_RSP ? rx_rsp(q, (const void *)rx->hdr) :
		rx_r2t(q, (const void *)rx->hdr);
}

/* The C2HData's bytes are all there, and its digest checked. */
static int rx_data_done(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_rx *rx = &tq->rx;
	struct nvmefs_req *req = rx->req;
	struct tcp_slot *s = &tq->slots[req->slot];
	struct nvmefs_cqe cqe;

	s->c2h_rcvd = rx->data_off;
	rx->stage = TCP_RX_HDR;
	rx->have = 0;
	rx->req = NULL;
	if (!(rx->flags & NVMEFS_TCP_F_DATA_SUCCESS))
		return 0;
	/* No CapsuleResp follows: the completion Linux's nvme-tcp makes up,
	 * success without an SQ head to report, unless a digest failed. */
	memset(&cqe, 0, sizeof(cqe));
	if (!read_whole(tq, req))
		cqe.status = nvmefs_cpu_to_le16(READ_LOST);
	cqe.cid = nvmefs_cpu_to_le16(req->cid);
	cqe.sq_id = nvmefs_cpu_to_le16(q->qid);
	cqe.sq_head = nvmefs_cpu_to_le16(0xffff);
	nvmefs_queue_response(q, &cqe);
	return 1;
}

int nvmefs_tcp_rx_advance(struct nvmefs_queue *q, size_t n)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_rx *rx = &tq->rx;
	int done = 0, ret;

	while (n) {
		uint32_t want, take;

		switch (rx->stage) {
		case TCP_RX_HDR:
			want = rx_hdr_len(tq) - rx->have;
			take = n < want ? (uint32_t)n : want;
			rx->have += take;
			n -= take;
			if (rx->have < rx_hdr_len(tq))
				break;
			rx->have = 0;
			ret = rx_header(q);
			if (ret < 0)
				return ret;
			done += ret;
			break;
		case TCP_RX_DATA:
			take = n < rx->data_left ? (uint32_t)n : rx->data_left;
			if (tq->p.ddgst)
				rx->crc = nvmefs_tcp_crc32c(rx->crc, (uint8_t *)rx->req->data + rx->data_off,
							    take);
			rx->data_off += take;
			rx->data_left -= take;
			n -= take;
			if (rx->data_left)
				break;
			if (tq->p.ddgst) {
				rx->stage = TCP_RX_DDGST;
				rx->have = 0;
				break;
			}
			done += rx_data_done(q);
			break;
		case TCP_RX_DDGST:
			want = NVMEFS_TCP_DIGEST_LEN - rx->have;
			take = n < want ? (uint32_t)n : want;
			rx->have += take;
			n -= take;
			if (rx->have < NVMEFS_TCP_DIGEST_LEN)
				break;
			/* The PDU is whole, the stream in step: only this
			 * command failed. */
			if (get_le32(rx->ddgst) != rx->crc)
				tq->slots[rx->req->slot].c2h_bad = true;
			done += rx_data_done(q);
			break;
		case TCP_RX_TERM:
			want = rx->term_len - rx->have;
			take = n < want ? (uint32_t)n : want;
			rx->have += take;
			n -= take;
			if (rx->have == rx->term_len)
				return rx_term_done(q);
			break;
		}
	}
	return done;
}
