/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/TCP transport's PDUs without sockets: the headers the host sends
 * and the send queue as iovecs (tcp_pdu.c), and the receive side as a
 * machine that says where the next bytes go and checks what came
 * (tcp_rx.c), so that unit tests and the fuzzer drive it with bytes of
 * their own.  tcp.c moves the bytes.
 */
#ifndef NVMEFS_TCP_PDU_H
#define NVMEFS_TCP_PDU_H

#include <sys/uio.h>

#include "nvmefs/wire_tcp.h"
#include "tcp_stream.h"
#include "../types/transport_ops.h"
#include "../wire/le_bytes.h"

/* Every PDU after ICResp has a 24-byte header, whatever its type. */
#define TCP_HDR_LEN 24
/* In-capsule data of the admin queue, as Linux's nvme-tcp sizes it (the
 * Connect data rides in it); I/O queues take the controller's IOCCSZ. */
#define TCP_ADMIN_INLINE_SIZE 8192
/* iovecs one send gathers at most. */
#define TCP_TX_IOV_MAX 64

static inline uint32_t digest_len(bool on)
{
	return on ? NVMEFS_TCP_DIGEST_LEN : 0;
}

static inline void iov_add(struct iovec *iov, int *n, const void *base, size_t len)
{
	if (!len)
		return;
	iov[*n] = (struct iovec){ .iov_base = (void *)base, .iov_len = len };
	(*n)++;
}

/* CRC32C as NVMe/TCP's digests use it, continued from @crc (start at 0). */
uint32_t nvmefs_tcp_crc32c(uint32_t crc, const void *buf, size_t len);

/* What ICResp settled for the connection. */
struct tcp_params {
	bool hdgst;
	bool ddgst;
	uint8_t cpda;		/* H2C data alignment: (cpda + 1) * 4 bytes */
	uint32_t maxh2cdata;
};

/* A PDU, or a run of them, waiting in the send queue. */
struct tcp_item {
	struct tcp_item *next;
	uint16_t slot;
	uint8_t kind;		/* TCP_ITEM_* */
	/* Bytes of its current PDU already sent. */
	size_t off;
};
enum { TCP_ITEM_CMD, TCP_ITEM_H2C };

/* A request slot's PDUs and transfer state. */
struct tcp_slot {
	/* The CapsuleCmd header: its common header, then the SQE (req->cmd),
	 * adjacent as struct nvmefs_tcp_cmd lays them out. */
	struct nvmefs_tcp_hdr cmd_hdr;
	union nvmefs_cmd cmd;
	uint8_t cmd_hdgst[NVMEFS_TCP_DIGEST_LEN];
	uint8_t cmd_ddgst[NVMEFS_TCP_DIGEST_LEN];
	struct nvmefs_tcp_data h2c;	/* the H2CData PDU being sent */
	uint8_t h2c_hdgst[NVMEFS_TCP_DIGEST_LEN];
	uint8_t h2c_ddgst[NVMEFS_TCP_DIGEST_LEN];
	struct tcp_item cmd_item;
	struct tcp_item h2c_item;
	/* Items of this slot in the send queue. */
	uint8_t queued;
	/* The write's data rode in the capsule. */
	bool in_capsule;
	/* Reads: the bytes C2HData brought so far, in order. */
	uint32_t c2h_rcvd;
	/* Reads: a C2HData's data digest did not match. */
	bool c2h_bad;
	/* Writes: where the next R2T must start, and the one being answered:
	 * its tag, the next byte to send and its end. */
	uint32_t r2t_next;
	uint16_t ttag;
	uint32_t h2c_off;
	uint32_t h2c_end;
};

_Static_assert(offsetof(struct tcp_slot, cmd) == offsetof(struct tcp_slot, cmd_hdr) +
	       offsetof(struct nvmefs_tcp_cmd, sqe), "the slot's capsule is one CapsuleCmd header");

enum tcp_rx_stage {
	TCP_RX_HDR,		/* the 24-byte header and its digest */
	TCP_RX_DATA,		/* C2HData into the request's buffer */
	TCP_RX_DDGST,
	TCP_RX_TERM,		/* the offending header a C2HTermReq carries */
};

struct tcp_rx {
	enum tcp_rx_stage stage;
	uint32_t have;		/* bytes of this stage already there */
	uint8_t hdr[TCP_HDR_LEN + NVMEFS_TCP_DIGEST_LEN];
	uint8_t ddgst[NVMEFS_TCP_DIGEST_LEN];
	uint8_t term[NVMEFS_TCP_TERM_MAX_PLEN - TCP_HDR_LEN];
	uint32_t term_len;
	/* The C2HData being received: its flags, the next byte's offset in
	 * the request's data, the bytes still to come, their digest so far. */
	struct nvmefs_req *req;
	uint8_t flags;
	uint32_t data_off;
	uint32_t data_left;
	uint32_t crc;
	/* The H2CTermReq our refusal owes the target (hdr.plen 0: none); the
	 * offending header, its data, is hdr[]. */
	struct nvmefs_tcp_term term_out;
};

struct tcp_queue {
	struct tcp_stream stream;
	/* What queue_fd() gives: the socket, for input, and for output while
	 * the send queue waits for room. */
	int epfd;
	bool watch_out;
	struct tcp_params p;
	/* In-capsule data of this queue's writes, at most. */
	uint32_t inline_size;
	struct tcp_slot *slots;
	uint8_t *data;
	size_t data_len;
	struct tcp_item *tx_head, *tx_tail;
	struct tcp_rx rx;
};

/* The header digest bytes of @hlen header bytes at @hdr, little endian. */
void nvmefs_tcp_hdgst(const void *hdr, size_t hlen, uint8_t out[NVMEFS_TCP_DIGEST_LEN]);

void nvmefs_tcp_icreq_build(struct nvmefs_tcp_icreq *icreq, bool hdgst, bool ddgst);
/* Checks ICResp against what ICReq asked (@hdgst, @ddgst) and fills @p;
 * -EPROTO with a message if the controller answered what we cannot use. */
int nvmefs_tcp_icresp_parse(const struct nvmefs_queue *q, const struct nvmefs_tcp_icresp *icresp,
			    bool hdgst, bool ddgst, struct tcp_params *p);

/* Describes req's data in its capsule and queues the capsule; 0 or -errno. */
int nvmefs_tcp_cmd_queue(struct nvmefs_queue *q, struct nvmefs_req *req);

/* Queues the H2CData PDUs answering the R2T set in req's slot (ttag,
 * h2c_off, h2c_end). */
void nvmefs_tcp_h2c_start(struct nvmefs_queue *q, struct nvmefs_req *req);
/* The iovecs of the send queue from its head, at most @max; how many. */
int nvmefs_tcp_tx_iov(struct nvmefs_queue *q, struct iovec *iov, int max);
/* @n bytes of what nvmefs_tcp_tx_iov() gave were sent: ends what was
 * sent whole (nvmefs_queue_send_done() once a request has nothing left
 * queued) and readies the next H2CData PDU.  Returns how many requests
 * that finished, or -errno. */
int nvmefs_tcp_tx_advance(struct nvmefs_queue *q, size_t n);
/* The bytes left of a PDU half sent, which nothing may go between; 0:
 * none is. */
size_t nvmefs_tcp_tx_partial(const struct nvmefs_queue *q);
/* Drops the send queue (a stopped queue). */
void nvmefs_tcp_tx_drop(struct nvmefs_queue *q);

/* Where the next received bytes go: at most @max iovecs; how many. */
int nvmefs_tcp_rx_iov(struct nvmefs_queue *q, struct iovec *iov, int max);
/*
 * @n bytes arrived in what nvmefs_tcp_rx_iov() gave: checks every header
 * and digest that completed, puts data in place, completes requests.
 * Returns how many PDUs ended, or -errno with the message set and the
 * queue failed; rx.term_out then holds the H2CTermReq to send, if one is
 * due.
 */
int nvmefs_tcp_rx_advance(struct nvmefs_queue *q, size_t n);

/* The queue's per-slot state and buffers, once params are known; req->cmd
 * and req->data_slot set for every slot. */
int nvmefs_tcp_slots_init(struct nvmefs_queue *q, uint32_t data_slot_size);
void nvmefs_tcp_slots_free(struct nvmefs_queue *q);

#endif /* NVMEFS_TCP_PDU_H */
