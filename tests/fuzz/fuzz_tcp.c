/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: the NVMe/TCP receive path (tcp_pdu.c) against a
 * hostile target.  Four commands are in flight on a queue of 16 entries,
 * each with a buffer of exactly its length (so ASan sees any byte written
 * past one): a read of 4096 bytes, a read of 10000, a write of 512 in the
 * capsule and a write of 9000 by R2T.  The input's first 3 bytes choose
 * the digests, CPDA and MAXH2CDATA, and how many bytes each receive takes;
 * the rest is the byte stream from the target, put where the receive
 * machine says, with everything queued for sending "sent" between
 * receives.  Whatever the bytes, nothing is written outside a buffer, every
 * refusal fails the queue, and the queue can always be stopped and freed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/tcp/tcp_pdu.h"
#include "../../src/lib/types/ctrl_types.h"
#include "../../src/lib/transport/queue.h"
#include "../../src/lib/types/transport_ops.h"
#ifdef FUZZ_TLS
#include "tls_pipe.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fz_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	return nvmefs_tcp_cmd_queue(q, req);
}

static void fz_stop(struct nvmefs_queue *q)
{
	nvmefs_tcp_tx_drop(q);
}

static const struct nvmefs_transport_ops fz_ops = {
	.name = "fuzz",
	.submit = fz_submit,
	.queue_stop = fz_stop,
};

static void fz_done(struct nvmefs_req *req)
{
	nvmefs_req_put(req);
}

static const struct {
	enum nvmefs_dir dir;
	uint32_t len;
} cmds[] = {
	{ NVMEFS_DIR_FROM_CTRL, 4096 },
	{ NVMEFS_DIR_FROM_CTRL, 10000 },
	{ NVMEFS_DIR_TO_CTRL, 512 },
	{ NVMEFS_DIR_TO_CTRL, 9000 },
};
#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

/* Everything queued goes, as if the socket took it all. */
static void send_all(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct iovec iov[TCP_TX_IOV_MAX];

	while (tq->tx_head) {
		int n = nvmefs_tcp_tx_iov(q, iov, TCP_TX_IOV_MAX);
		size_t total = 0;

		for (int i = 0; i < n; i++)
			total += iov[i].iov_len;
		if (nvmefs_tcp_tx_advance(q, total) < 0)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvmefs_queue_params params = { .qid = 1, .size = 16 };
	struct nvmefs_ctrl *ctrl;
	struct tcp_queue *tq;
	struct nvmefs_queue q;
	uint8_t *bufs[NR_CMDS];
	size_t chunk;

	if (size < 3)
		return 0;
	ctrl = calloc(1, sizeof(*ctrl));
	tq = calloc(1, sizeof(*tq));
	if (!ctrl || !tq)
		abort();
	ctrl->ops = &fz_ops;
	strcpy(ctrl->traddr, "192.0.2.1");
	strcpy(ctrl->trsvcid, "4420");
	if (nvmefs_queue_init(&q, ctrl, &params) < 0)
		abort();
	q.tp = tq;
	tq->stream = (struct tcp_stream){ .ops = &nvmefs_tcp_stream_posix, .fd = -1 };
	tq->epfd = -1;
	tq->p.hdgst = data[0] & 1;
	tq->p.ddgst = data[0] & 2;
	tq->p.cpda = (uint8_t)(data[1] % (NVMEFS_TCP_MAX_PDA + 1));
	tq->p.maxh2cdata = 4096u << (data[0] >> 6);
	tq->inline_size = 4096;
	chunk = 1 + data[2];
	if (nvmefs_tcp_slots_init(&q, 1024) < 0)
		abort();
	for (size_t i = 0; i < NR_CMDS; i++) {
		struct nvmefs_req *req = nvmefs_req_get(&q);

		bufs[i] = malloc(cmds[i].len);
		if (!req || !bufs[i])
			abort();
		memset(bufs[i], 0, cmds[i].len);
		req->data = bufs[i];
		req->len = cmds[i].len;
		req->dir = (uint8_t)cmds[i].dir;
		req->done = fz_done;
		if (nvmefs_req_submit(req) < 0)
			abort();
	}
	send_all(&q);
#ifdef FUZZ_TLS
	tls_pipe_deliver(&q, data + 3, size - 3, chunk, send_all);
#else
	for (size_t off = 3; off < size;) {
		struct iovec iov[3];
		size_t room = chunk < size - off ? chunk : size - off, got = 0;
		int n = nvmefs_tcp_rx_iov(&q, iov, 3);

		for (int i = 0; i < n && got < room; i++) {
			size_t take = iov[i].iov_len < room - got ? iov[i].iov_len : room - got;

			memcpy(iov[i].iov_base, data + off + got, take);
			got += take;
		}
		off += got;
		if (nvmefs_tcp_rx_advance(&q, got) < 0) {
			if (!q.failed)
				abort();
			break;
		}
		send_all(&q);
	}
#endif
	nvmefs_queue_stop(&q, -ESHUTDOWN);
	nvmefs_tcp_slots_free(&q);
	nvmefs_queue_fini(&q);
	for (size_t i = 0; i < NR_CMDS; i++)
		free(bufs[i]);
	free(tq);
	free(ctrl);
	return 0;
}
