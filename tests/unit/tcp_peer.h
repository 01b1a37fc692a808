/*
 * The scripted NVMe/TCP target of the transport's unit tests (tcp_peer.c):
 * the peer's socket, the queue under test and its buffers, the PDUs the
 * target sends, and the checks of what the host sent.  Check runs each test
 * in a process of its own: one peer and one queue at a time.
 */
#ifndef NVMEFS_TESTS_TCP_PEER_H
#define NVMEFS_TESTS_TCP_PEER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <check.h>

#include "types/ctrl_types.h"
#include "types/transport_ops.h"
#include "tcp/tcp_pdu.h"
#include "test_util.h"

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

extern struct peer peer;
extern struct nvmefs_ctrl *ctrl;
extern struct nvmefs_queue q;
extern bool hd, dd;		/* the digests the peer's ICResp enables */

#define QSIZE 8
#define BUF_LEN 16384
/* Each request's buffer, with a guard after it that nothing may touch. */
#define GUARD 4096
extern uint8_t *bufs[QSIZE];

/* Requests, and how they ended. */
extern int ended;
extern struct nvmefs_cqe last_cqe;
extern int last_error;

/* The peer's PDU: a 24-byte header (digest added when negotiated), and data. */
struct pdu {
	uint8_t b[BUF_LEN + 64];
	size_t len;
};

void setup(void);
void teardown(void);
void read_exact(int fd, void *buf, size_t len);
void guards_intact(void);
/* Connects queue @qid, the peer answering with peer.icresp. */
int connect_queue(uint16_t qid);
void connect_ok(bool hdgst, bool ddgst);
/* connect_ok() without digests, the peer's receive buffer and the host's
 * send buffer @bytes: writes soon fill them. */
void connect_small(int bytes);
struct nvmefs_req *submit(uint8_t opcode, enum nvmefs_dir dir, uint32_t len);
int process(void);
void put32(uint8_t *p, uint32_t v);
void pdu_hdr(struct pdu *p, const void *hdr);
void pdu_rsp(struct pdu *p, uint16_t cid, uint16_t status);
void pdu_c2h(struct pdu *p, uint16_t cid, uint32_t off, uint32_t len, uint8_t flags,
	     uint8_t fill);
void pdu_r2t(struct pdu *p, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len);
/* Until the host's socket has something to read. */
void delivered(void);
/* Sends @p to the host @chunk bytes at a time, processing after each;
 * returns the first error, else the PDUs processed. */
int feed(const struct pdu *p, size_t chunk);
/* What the host sent: one CapsuleCmd, checked, with its in-capsule data. */
void expect_cmd(const struct nvmefs_req *req, uint32_t inline_len, uint8_t *data);
/* The H2CTermReq a refusal sends, with @fes and @fei. */
void expect_term(uint16_t fes, uint32_t fei);
/* Connected with the digests given, a read of @len sent. */
struct nvmefs_req *read_sent(bool hdgst, bool ddgst, uint32_t len);
/* The same without digests. */
struct nvmefs_req *read_in_flight(uint32_t len);
/* A refusal: -EPROTO, the queue failed, one line naming @what. */
void expect_refused(int ret, const char *what);

#endif /* NVMEFS_TESTS_TCP_PEER_H */
