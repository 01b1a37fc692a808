/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe/TCP PDUs without sockets (tcp_pdu.h).  Every byte the target sends
 * is checked here before it is used: a header is taken whole (24 bytes and
 * its digest) and checked against the command it names before any of its
 * data is let into that command's buffer, which is where the data then goes
 * directly.  Any refusal fails the queue with one line, and leaves the
 * H2CTermReq to tell the target why.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <isa-l/crc.h>

#include "tcp_pdu.h"

/* Padding before data that the controller wants aligned (CPDA). */
static const uint8_t zeros[(NVMEFS_TCP_MAX_PDA + 1) * 4];

uint32_t nvmefs_tcp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/* ISA-L's crc32_iscsi() runs the register without the inversions
	 * CRC32C has at both ends: seeded with ~crc and inverted after, it
	 * continues one. */
	return ~crc32_iscsi((unsigned char *)buf, (int)len, ~crc);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void nvmefs_tcp_hdgst(const void *hdr, size_t hlen, uint8_t out[NVMEFS_TCP_DIGEST_LEN])
{
	put_le32(out, nvmefs_tcp_crc32c(0, hdr, hlen));
}

static uint32_t digest_len(bool on)
{
	return on ? NVMEFS_TCP_DIGEST_LEN : 0;
}

/* Where data starts in a PDU of @hlen header bytes that the host sends. */
static uint32_t h2c_pdo(const struct tcp_params *p, uint32_t hlen)
{
	uint32_t align = (p->cpda + 1u) * 4, end = hlen + digest_len(p->hdgst);

	return (end + align - 1) / align * align;
}

/* ------------------------------------------------------------------------ */
/* Connection set-up                                                         */
/* ------------------------------------------------------------------------ */

void nvmefs_tcp_icreq_build(struct nvmefs_tcp_icreq *icreq, bool hdgst, bool ddgst)
{
	memset(icreq, 0, sizeof(*icreq));
	icreq->hdr.type = NVMEFS_TCP_ICREQ;
	icreq->hdr.hlen = sizeof(*icreq);
	icreq->hdr.plen = nvmefs_cpu_to_le32(sizeof(*icreq));
	icreq->pfv = nvmefs_cpu_to_le16(NVMEFS_TCP_PFV_1_0);
	/* C2H data right after the header: no alignment asked. */
	icreq->hpda = 0;
	icreq->digest = (uint8_t)((hdgst ? NVMEFS_TCP_HDR_DIGEST_ENABLE : 0) |
				  (ddgst ? NVMEFS_TCP_DATA_DIGEST_ENABLE : 0));
	/* One R2T outstanding per command (0's based). */
	icreq->maxr2t = 0;
}

int nvmefs_tcp_icresp_parse(const struct nvmefs_queue *q, const struct nvmefs_tcp_icresp *r,
			    bool hdgst, bool ddgst, struct tcp_params *p)
{
	const char *where = nvmefs_ctrl_where(q->ctrl);
	uint8_t asked = (uint8_t)((hdgst ? NVMEFS_TCP_HDR_DIGEST_ENABLE : 0) |
				  (ddgst ? NVMEFS_TCP_DATA_DIGEST_ENABLE : 0));
	uint32_t maxdata = nvmefs_le32_to_cpu(r->maxdata);

	if (r->hdr.type != NVMEFS_TCP_ICRESP || r->hdr.hlen != sizeof(*r) ||
	    nvmefs_le32_to_cpu(r->hdr.plen) != sizeof(*r))
		return nvmefs_error(-EPROTO, "queue %u: %s answered ICReq with a PDU of type %#x, "
				    "header length %u and length %u, not a 128-byte ICResp: is it an "
				    "NVMe/TCP target? check the address and port", q->qid, where,
				    r->hdr.type, r->hdr.hlen, nvmefs_le32_to_cpu(r->hdr.plen));
	if (nvmefs_le16_to_cpu(r->pfv) != NVMEFS_TCP_PFV_1_0)
		return nvmefs_error(-EPROTO, "queue %u: %s speaks NVMe/TCP PDU format version %u; "
				    "nvmefs knows only 1.0 (0)", q->qid, where,
				    nvmefs_le16_to_cpu(r->pfv));
	if (r->cpda > NVMEFS_TCP_MAX_PDA)
		return nvmefs_error(-EPROTO, "queue %u: %s asked for PDU data alignment (CPDA) %u, "
				    "beyond the 31 NVMe/TCP allows: the target is broken", q->qid,
				    where, r->cpda);
	if (r->digest & ~asked)
		return nvmefs_error(-EPROTO, "queue %u: %s enabled digests %#x, which were not asked "
				    "for (%#x): the target is broken", q->qid, where, r->digest, asked);
	/* As nvme-tcp: a digest asked for is one to have, or no connection. */
	if (asked & ~r->digest)
		return nvmefs_error(-EPROTO, "queue %u: %s declined the %s digest that was asked for "
				    "(%s): the target does not support it or is configured without "
				    "it; connect without that option", q->qid, where,
				    asked & ~r->digest & NVMEFS_TCP_HDR_DIGEST_ENABLE ? "header" : "data",
				    asked & ~r->digest & NVMEFS_TCP_HDR_DIGEST_ENABLE ?
				    "--hdr-digest" : "--data-digest");
	if (maxdata < NVMEFS_TCP_MIN_MAXH2CDATA || maxdata % 4)
		return nvmefs_error(-EPROTO, "queue %u: %s gave MAXH2CDATA %u: NVMe/TCP needs a "
				    "multiple of 4 of at least %u; the target is broken", q->qid,
				    where, maxdata, NVMEFS_TCP_MIN_MAXH2CDATA);
	p->hdgst = r->digest & NVMEFS_TCP_HDR_DIGEST_ENABLE;
	p->ddgst = r->digest & NVMEFS_TCP_DATA_DIGEST_ENABLE;
	p->cpda = r->cpda;
	p->maxh2cdata = maxdata;
	return 0;
}

int nvmefs_tcp_slots_init(struct nvmefs_queue *q, uint32_t data_slot_size)
{
	struct tcp_queue *tq = q->tp;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	tq->slots = calloc(q->nr_reqs, sizeof(*tq->slots));
	tq->data_len = (size_t)q->nr_reqs * data_slot_size;
	if (!tq->slots || (tq->data_len && posix_memalign((void **)&tq->data, page, tq->data_len)))
		return nvmefs_error(-ENOMEM, "out of memory for the buffers of queue %u", q->qid);
	if (tq->data_len)
		memset(tq->data, 0, tq->data_len);
	for (uint16_t i = 0; i < q->nr_reqs; i++) {
		struct tcp_slot *s = &tq->slots[i];

		s->cmd_item = (struct tcp_item){ .slot = i, .kind = TCP_ITEM_CMD };
		s->h2c_item = (struct tcp_item){ .slot = i, .kind = TCP_ITEM_H2C };
		q->reqs[i].cmd = &s->cmd;
		q->reqs[i].data_slot = tq->data ? tq->data + (size_t)i * data_slot_size : NULL;
		q->reqs[i].data_slot_size = tq->data ? data_slot_size : 0;
	}
	return 0;
}

void nvmefs_tcp_slots_free(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;

	free(tq->slots);
	free(tq->data);
	tq->slots = NULL;
	tq->data = NULL;
}

/* ------------------------------------------------------------------------ */
/* Sending                                                                   */
/* ------------------------------------------------------------------------ */

static void tx_push(struct tcp_queue *tq, struct tcp_item *it)
{
	it->next = NULL;
	it->off = 0;
	if (tq->tx_tail)
		tq->tx_tail->next = it;
	else
		tq->tx_head = it;
	tq->tx_tail = it;
}

/* A transport SGL data block (TRANSPORT_A): the data moves in PDUs of
 * their own, as Linux's nvme-tcp describes it. */
static void sgl_transport(struct nvmefs_sgl *d, uint32_t len)
{
	memset(d, 0, sizeof(*d));
	put_le32(d->desc, len);
	d->id = (uint8_t)(NVMEFS_SGL_TYPE_TRANSPORT_DATA_BLOCK << 4 | NVMEFS_SGL_SUBTYPE_TRANSPORT);
}

int nvmefs_tcp_cmd_queue(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_slot *s = &tq->slots[req->slot];
	struct nvmefs_sqe *sqe = &req->cmd->sqe;
	uint32_t hd = digest_len(tq->p.hdgst), plen, pdo = 0;

	if (req->len && !req->data)
		return nvmefs_error(-EINVAL, "queue %u: a command of %u bytes without a buffer",
				    q->qid, req->len);
	s->in_capsule = req->len && req->dir == NVMEFS_DIR_TO_CTRL && req->len <= tq->inline_size;
	s->c2h_rcvd = 0;
	s->c2h_bad = false;
	s->r2t_next = 0;
	s->h2c_off = s->h2c_end = 0;
	sqe->flags = (uint8_t)((sqe->flags & ~NVMEFS_SQE_PSDT_MASK) | NVMEFS_SQE_PSDT_SGL_MPTR_CONTIG);
	plen = sizeof(struct nvmefs_tcp_cmd) + hd;
	if (s->in_capsule) {
		nvmefs_sgl_inline(&sqe->dptr.sgl, 0, req->len);
		pdo = h2c_pdo(&tq->p, sizeof(struct nvmefs_tcp_cmd));
		plen = pdo + req->len + digest_len(tq->p.ddgst);
		if (tq->p.ddgst)
			put_le32(s->cmd_ddgst, nvmefs_tcp_crc32c(0, req->data, req->len));
	} else {
		sgl_transport(&sqe->dptr.sgl, req->len);
	}
	s->cmd_hdr = (struct nvmefs_tcp_hdr){
		.type = NVMEFS_TCP_CMD,
		.flags = (uint8_t)((tq->p.hdgst ? NVMEFS_TCP_F_HDGST : 0) |
				   (s->in_capsule && tq->p.ddgst ? NVMEFS_TCP_F_DDGST : 0)),
		.hlen = sizeof(struct nvmefs_tcp_cmd),
		.pdo = (uint8_t)pdo,
		.plen = nvmefs_cpu_to_le32(plen),
	};
	if (tq->p.hdgst)
		nvmefs_tcp_hdgst(&s->cmd_hdr, sizeof(struct nvmefs_tcp_cmd), s->cmd_hdgst);
	tx_push(tq, &s->cmd_item);
	s->queued++;
	return 0;
}

/* The H2CData PDU for the next piece of the R2T the slot answers. */
static void h2c_build(struct tcp_queue *tq, struct tcp_slot *s, const struct nvmefs_req *req)
{
	uint32_t len = s->h2c_end - s->h2c_off, pdo = h2c_pdo(&tq->p, TCP_HDR_LEN);
	bool last;

	if (len > tq->p.maxh2cdata)
		len = tq->p.maxh2cdata;
	last = s->h2c_off + len == s->h2c_end;
	s->h2c = (struct nvmefs_tcp_data){
		.hdr = {
			.type = NVMEFS_TCP_H2C_DATA,
			.flags = (uint8_t)((tq->p.hdgst ? NVMEFS_TCP_F_HDGST : 0) |
					   (tq->p.ddgst ? NVMEFS_TCP_F_DDGST : 0) |
					   (last ? NVMEFS_TCP_F_DATA_LAST : 0)),
			.hlen = TCP_HDR_LEN,
			.pdo = (uint8_t)pdo,
			.plen = nvmefs_cpu_to_le32(pdo + len + digest_len(tq->p.ddgst)),
		},
		.command_id = nvmefs_cpu_to_le16(req->cid),
		.ttag = nvmefs_cpu_to_le16(s->ttag),
		.data_offset = nvmefs_cpu_to_le32(s->h2c_off),
		.data_length = nvmefs_cpu_to_le32(len),
	};
	if (tq->p.hdgst)
		nvmefs_tcp_hdgst(&s->h2c, TCP_HDR_LEN, s->h2c_hdgst);
	if (tq->p.ddgst)
		put_le32(s->h2c_ddgst, nvmefs_tcp_crc32c(0, (uint8_t *)req->data + s->h2c_off, len));
}

static void iov_add(struct iovec *iov, int *n, const void *base, size_t len)
{
	if (!len)
		return;
	iov[*n] = (struct iovec){ .iov_base = (void *)base, .iov_len = len };
	(*n)++;
}

/* The whole current PDU of @it: at most 5 iovecs. */
static int item_iov(struct nvmefs_queue *q, const struct tcp_item *it, struct iovec *iov)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_slot *s = &tq->slots[it->slot];
	const struct nvmefs_req *req = &q->reqs[it->slot];
	uint32_t hd = digest_len(tq->p.hdgst), dd = digest_len(tq->p.ddgst);
	int n = 0;

	if (it->kind == TCP_ITEM_CMD) {
		iov_add(iov, &n, &s->cmd_hdr, sizeof(struct nvmefs_tcp_cmd));
		iov_add(iov, &n, s->cmd_hdgst, hd);
		if (s->in_capsule) {
			iov_add(iov, &n, zeros, s->cmd_hdr.pdo - sizeof(struct nvmefs_tcp_cmd) - hd);
			iov_add(iov, &n, req->data, req->len);
			iov_add(iov, &n, s->cmd_ddgst, dd);
		}
	} else {
		iov_add(iov, &n, &s->h2c, TCP_HDR_LEN);
		iov_add(iov, &n, s->h2c_hdgst, hd);
		iov_add(iov, &n, zeros, s->h2c.hdr.pdo - TCP_HDR_LEN - hd);
		iov_add(iov, &n, (uint8_t *)req->data + nvmefs_le32_to_cpu(s->h2c.data_offset),
			nvmefs_le32_to_cpu(s->h2c.data_length));
		iov_add(iov, &n, s->h2c_ddgst, dd);
	}
	return n;
}

static size_t item_len(const struct tcp_queue *tq, const struct tcp_item *it)
{
	const struct tcp_slot *s = &tq->slots[it->slot];

	return nvmefs_le32_to_cpu(it->kind == TCP_ITEM_CMD ? s->cmd_hdr.plen : s->h2c.hdr.plen);
}

int nvmefs_tcp_tx_iov(struct nvmefs_queue *q, struct iovec *iov, int max)
{
	struct tcp_queue *tq = q->tp;
	const struct tcp_item *it;
	int n = 0;

	for (it = tq->tx_head; it && max - n >= 5; it = it->next) {
		const struct tcp_slot *s = &tq->slots[it->slot];

		n += item_iov(q, it, iov + n);
		/* The R2T's next piece needs this one's header buffer: it
		 * goes, and what follows, once this one has. */
		if (it->kind == TCP_ITEM_H2C &&
		    s->h2c_off + nvmefs_le32_to_cpu(s->h2c.data_length) < s->h2c_end)
			break;
	}
	/* What of the head's PDU went already. */
	if (tq->tx_head) {
		size_t skip = tq->tx_head->off;
		int i = 0;

		while (skip && skip >= iov[i].iov_len)
			skip -= iov[i++].iov_len;
		memmove(iov, iov + i, (size_t)(n - i) * sizeof(*iov));
		n -= i;
		iov[0].iov_base = (uint8_t *)iov[0].iov_base + skip;
		iov[0].iov_len -= skip;
	}
	return n;
}

size_t nvmefs_tcp_tx_partial(const struct nvmefs_queue *q)
{
	const struct tcp_queue *tq = q->tp;

	return tq->tx_head && tq->tx_head->off ? item_len(tq, tq->tx_head) - tq->tx_head->off : 0;
}

int nvmefs_tcp_tx_advance(struct nvmefs_queue *q, size_t n)
{
	struct tcp_queue *tq = q->tp;
	int finished = 0;

	while (n && tq->tx_head) {
		struct tcp_item *it = tq->tx_head;
		struct tcp_slot *s = &tq->slots[it->slot];
		struct nvmefs_req *req = &q->reqs[it->slot];
		size_t len = item_len(tq, it), take = len - it->off < n ? len - it->off : n;

		it->off += take;
		n -= take;
		if (it->off < len)
			break;
		it->off = 0;
		if (it->kind == TCP_ITEM_H2C) {
			s->h2c_off += nvmefs_le32_to_cpu(s->h2c.data_length);
			if (s->h2c_off < s->h2c_end) {
				h2c_build(tq, s, req);
				continue;
			}
		}
		tq->tx_head = it->next;
		if (!tq->tx_head)
			tq->tx_tail = NULL;
		if (--s->queued == 0) {
			nvmefs_queue_send_done(q, req);
			if (!req->inflight)
				finished++;
		}
	}
	return finished;
}

void nvmefs_tcp_tx_drop(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;

	tq->tx_head = tq->tx_tail = NULL;
	for (uint16_t i = 0; tq->slots && i < q->nr_reqs; i++)
		tq->slots[i].queued = 0;
}

/* ------------------------------------------------------------------------ */
/* Receiving                                                                 */
/* ------------------------------------------------------------------------ */

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
	h2c_build(tq, s, req);
	tx_push(tq, &s->h2c_item);
	/* Its data is ours to keep until it has gone, whatever the response
	 * says meanwhile. */
	if (s->queued++ == 0)
		req->wait |= NVMEFS_REQ_WAIT_SEND;
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
