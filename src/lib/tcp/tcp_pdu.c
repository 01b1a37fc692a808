/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe/TCP PDUs without sockets (tcp_pdu.h), the connection's set-up and
 * the host's side: ICReq and ICResp, the request slots, and the send queue
 * of CapsuleCmd and H2CData PDUs as iovecs gathered from where the bytes
 * are.  What the target sends is tcp_rx.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <isa-l/crc.h>

#include "tcp_pdu.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

/* Padding before data that the controller wants aligned (CPDA). */
static const uint8_t zeros[(NVMEFS_TCP_MAX_PDA + 1) * 4];

uint32_t nvmefs_tcp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/* ISA-L's crc32_iscsi() runs the register without the inversions
	 * CRC32C has at both ends: seeded with ~crc and inverted after, it
	 * continues one. */
	return ~crc32_iscsi((unsigned char *)buf, (int)len, ~crc);
}

void nvmefs_tcp_hdgst(const void *hdr, size_t hlen, uint8_t out[NVMEFS_TCP_DIGEST_LEN])
{
	put_le32(out, nvmefs_tcp_crc32c(0, hdr, hlen));
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

void nvmefs_tcp_h2c_start(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct tcp_queue *tq = q->tp;
	struct tcp_slot *s = &tq->slots[req->slot];

	h2c_build(tq, s, req);
	tx_push(tq, &s->h2c_item);
	/* Its data is ours to keep until it has gone, whatever the response
	 * says meanwhile. */
	if (s->queued++ == 0)
		req->wait |= NVMEFS_REQ_WAIT_SEND;
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
