/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/TCP transport (NVMe/TCP Transport Specification 1.0): one
 * non-blocking byte stream per NVMe queue (tcp_stream.h: a plain TCP
 * connection); the PDUs themselves are tcp_pdu.c's.
 *
 * Nothing is pinned or registered: the kernel copies what sendmsg() is
 * given before it returns, and receives go straight into each request's
 * buffer once its header has been checked.  Sends are queued and go out in
 * one sendmsg() per poll, gathered from where the bytes are; what the
 * socket has no room for waits in the send queue, and the queue's
 * descriptor then also wakes its owner when there is room.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tcp_pdu.h"
#include "tcp_stream.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

/* Receives per process() call before others get the worker. */
#define RX_BATCH 64

static const char *where(const struct nvmefs_queue *q)
{
	return nvmefs_ctrl_where(q->ctrl);
}

/*
 * ICReq out, ICResp in, before the deadline.  Over TLS the kernel target
 * takes the socket back from tlshd only after the handshake: an ICReq sent
 * at once may reach tlshd, which drops it, and no ICResp ever comes.  No
 * signal tells when the hand-off is done, so an ICResp that has not come
 * after a grace of a quarter of the timeout makes this -EAGAIN: the caller
 * connects again and waits longer before its ICReq.
 */
static int handshake(struct nvmefs_queue *q, int64_t deadline)
{
	struct nvmefs_ctrl *ctrl = q->ctrl;
	struct tcp_queue *tq = q->tp;
	bool hdgst = ctrl->opts.hdr_digest, ddgst = ctrl->opts.data_digest;
	struct nvmefs_tcp_icreq icreq;
	struct nvmefs_tcp_icresp icresp;
	int64_t grace = nvmefs_now_ms() + ctrl->opts.timeout_ms / 4;
	size_t done = 0;
	ssize_t n;
	int ret;

	if (!ctrl->tls_psk || grace > deadline)
		grace = deadline;
	nvmefs_tcp_icreq_build(&icreq, hdgst, ddgst);
	while (done < sizeof(icreq)) {
		struct iovec iov = { (uint8_t *)&icreq + done, sizeof(icreq) - done };

		n = tq->stream.ops->sendv(&tq->stream, &iov, 1);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && n != -EAGAIN && n != -EINTR)
			return nvmefs_error((int)n, "sending ICReq to %s failed: %s", where(q),
					    strerror((int)-n));
		ret = nvmefs_tcp_wait_fd(tq->stream.fd, POLLOUT, deadline);
		if (ret < 0)
			goto wait_failed;
	}
	for (done = 0; done < sizeof(icresp);) {
		struct iovec iov = { (uint8_t *)&icresp + done, sizeof(icresp) - done };

		n = tq->stream.ops->recvv(&tq->stream, &iov, 1);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return nvmefs_error(-ECONNRESET, "%s closed queue %u's connection instead of "
					    "answering ICReq: is it an NVMe/TCP target? If the port "
					    "requires TLS, give --tls-key", where(q), q->qid);
		if (n != -EAGAIN && n != -EINTR)
			return nvmefs_error((int)n, "%s reset queue %u's connection instead of "
					    "answering ICReq (%s): is it an NVMe/TCP target? If the "
					    "port requires TLS, give --tls-key", where(q), q->qid,
					    strerror((int)-n));
		ret = nvmefs_tcp_wait_fd(tq->stream.fd, POLLIN, done ? deadline : grace);
		if (ret == -ETIMEDOUT && !done && grace < deadline)
			return nvmefs_error(-EAGAIN, "%s gave no ICResp for queue %u over TLS within "
					    "%u ms of the handshake", where(q), q->qid,
					    ctrl->opts.timeout_ms / 4);
		if (ret < 0)
			goto wait_failed;
	}
	return nvmefs_tcp_icresp_parse(q, &icresp, hdgst, ddgst, &tq->p);
wait_failed:
	if (ret == -ETIMEDOUT)
		return nvmefs_error(-ETIMEDOUT, "%s gave no ICResp for queue %u within %u ms: is it "
				    "an NVMe/TCP target? check the address and port", where(q),
				    q->qid, ctrl->opts.timeout_ms);
	return nvmefs_error(ret, "waiting for %s's ICResp failed: %s", where(q), strerror(-ret));
}

static void tcp_queue_destroy(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;

	if (!tq)
		return;
	tq->stream.ops->close(&tq->stream);
	if (tq->epfd >= 0)
		close(tq->epfd);
	nvmefs_tcp_slots_free(q);
	free(tq);
	q->tp = NULL;
}

static int tcp_queue_create(struct nvmefs_queue *q, const struct nvmefs_queue_params *params)
{
	int64_t deadline = nvmefs_now_ms() + q->ctrl->opts.timeout_ms;
	struct epoll_event ev = { .events = EPOLLIN };
	struct tcp_queue *tq;
	int ret;

	tq = calloc(1, sizeof(*tq));
	if (!tq)
		return nvmefs_error(-ENOMEM, "out of memory");
	tq->epfd = -1;
	q->tp = tq;
	/* handshake()'s -EAGAIN: an ICReq lost to tlshd; again, waiting 200,
	 * then 800 ms after the TLS handshake, while the deadline allows. */
	for (unsigned int settle_ms = 0;; settle_ms = settle_ms ? 4 * settle_ms : 200) {
		tq->stream = (struct tcp_stream){ .ops = q->ctrl->tls_psk ? &nvmefs_tcp_stream_tls
								  : &nvmefs_tcp_stream_posix,
						  .fd = -1, .settle_ms = settle_ms };
		ret = tq->stream.ops->connect(&tq->stream, q->ctrl, deadline);
		if (ret == 0)
			ret = handshake(q, deadline);
		if (ret != -EAGAIN)
			break;
		tq->stream.ops->close(&tq->stream);
	}
	if (ret < 0)
		goto fail;
	tq->inline_size = q->qid ? q->ctrl->inline_size : TCP_ADMIN_INLINE_SIZE;
	ret = nvmefs_tcp_slots_init(q, params->data_slot_size);
	if (ret < 0)
		goto fail;
	tq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tq->epfd < 0 || epoll_ctl(tq->epfd, EPOLL_CTL_ADD, tq->stream.fd, &ev)) {
		ret = nvmefs_error(-errno, "queue %u: watching its socket failed: %s", q->qid,
				   strerror(errno));
		goto fail;
	}
	return 0;
fail:
	tcp_queue_destroy(q);
	return ret;
}

static int tcp_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	return nvmefs_tcp_cmd_queue(q, req);
}

static int conn_error(struct nvmefs_queue *q, int err, const char *doing)
{
	/* A TLS record that failed (tcp_tls.c): its message says how. */
	if (err == EBADMSG) {
		char why[512];

		snprintf(why, sizeof(why), "%s", nvmefs_errmsg());
		return nvmefs_error(-EBADMSG, "queue %u to %s failed: %s: %s", q->qid, where(q),
				    doing, why);
	}
	if (err == EPIPE || err == ECONNRESET || err == ETIMEDOUT || err == EHOSTUNREACH)
		return nvmefs_error(-ECONNRESET, "queue %u to %s failed: %s: %s: the target went "
				    "away or dropped this controller (keep-alive timeout?)", q->qid,
				    where(q), doing, strerror(err));
	return nvmefs_error(-err, "queue %u to %s failed: %s: %s", q->qid, where(q), doing,
			    strerror(err));
}

/* Output interest while the send queue waits for room, and only then. */
static int watch_out(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	bool want = tq->tx_head != NULL;
	struct epoll_event ev = { .events = EPOLLIN | (want ? EPOLLOUT : 0) };

	if (want == tq->watch_out)
		return 0;
	if (epoll_ctl(tq->epfd, EPOLL_CTL_MOD, tq->stream.fd, &ev))
		return nvmefs_error(-errno, "queue %u: watching its socket failed: %s", q->qid,
				    strerror(errno));
	tq->watch_out = want;
	return 0;
}

/* Sends what the send queue holds until the socket has no room.  Returns
 * the requests that ended, or -errno.  A failed queue sends nothing. */
static int flush(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct iovec iov[TCP_TX_IOV_MAX];
	int finished = 0, cnt, ret;
	size_t total;
	ssize_t n;

	if (q->failed)
		return q->failed;
	while (tq->tx_head) {
		cnt = nvmefs_tcp_tx_iov(q, iov, TCP_TX_IOV_MAX);
		total = 0;
		for (int i = 0; i < cnt; i++)
			total += iov[i].iov_len;
		n = tq->stream.ops->sendv(&tq->stream, iov, cnt);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			if (n == -EAGAIN)
				break;
			return conn_error(q, (int)-n, "sending");
		}
		ret = nvmefs_tcp_tx_advance(q, (size_t)n);
		if (ret < 0)
			return ret;
		finished += ret;
		if ((size_t)n < total)
			break;
	}
	ret = watch_out(q);
	return ret < 0 ? ret : finished;
}

/*
 * The H2CTermReq a refusal left, after the rest of a PDU half sent (nothing
 * may cut into one), if the socket takes both whole now.  If not, the
 * connection ends with a reset (the stream's abortive close) when the queue
 * stops, and the message says so.  The connection ends after it either way.
 */
static void send_term(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct nvmefs_tcp_term *t = &tq->rx.term_out;
	uint32_t plen = nvmefs_le32_to_cpu(t->hdr.plen);
	size_t rest = nvmefs_tcp_tx_partial(q), len = 0;
	/* The head's PDU takes at most 5 iovecs (tcp_pdu.c's item_iov()). */
	struct iovec iov[5 + 2];
	char why[1024];
	ssize_t sent;
	int cnt = 0;

	if (!plen)
		return;
	if (rest) {
		int n = nvmefs_tcp_tx_iov(q, iov, 5);

		while (cnt < n && len < rest)
			len += iov[cnt++].iov_len;
		iov[cnt - 1].iov_len -= len - rest;
	}
	iov[cnt++] = (struct iovec){ .iov_base = t, .iov_len = sizeof(*t) };
	iov[cnt++] = (struct iovec){ .iov_base = tq->rx.hdr, .iov_len = plen - sizeof(*t) };
	sent = tq->stream.ops->sendv(&tq->stream, iov, cnt);
	t->hdr.plen = 0;
	if (sent == (ssize_t)(rest + plen))
		return;
	snprintf(why, sizeof(why), "%s", nvmefs_errmsg());
	nvmefs_set_error("%s; the H2CTermReq telling it so could not go (%s%s), so the connection "
			 "is reset instead", why, sent < 0 && sent != -EAGAIN ? strerror((int)-sent) :
			 "no room in the socket", rest ? " after a PDU half sent" : "");
}

/* Receives what the socket holds, into place.  Returns the PDUs that
 * ended, or -errno. */
static int receive(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct iovec iov[3];
	int done = 0, cnt, ret;

	for (int batch = 0; batch < RX_BATCH; batch++) {
		size_t want = 0;
		ssize_t n;

		cnt = nvmefs_tcp_rx_iov(q, iov, 3);
		for (int i = 0; i < cnt; i++)
			want += iov[i].iov_len;
		n = tq->stream.ops->recvv(&tq->stream, iov, cnt);
		if (n == 0) {
			nvmefs_queue_fail(q, -ECONNRESET);
			return nvmefs_error(-ECONNRESET, "the target %s closed queue %u: it went away "
					    "or dropped this controller (keep-alive timeout?)",
					    where(q), q->qid);
		}
		if (n < 0) {
			if (n == -EINTR)
				continue;
			if (n == -EAGAIN)
				break;
			nvmefs_queue_fail(q, (int)n);
			return conn_error(q, (int)-n, "receiving");
		}
		ret = nvmefs_tcp_rx_advance(q, (size_t)n);
		if (ret < 0) {
			send_term(q);
			return ret;
		}
		done += ret;
		/* Short: the socket is empty (a read more would say EAGAIN). */
		if ((size_t)n < want)
			break;
	}
	return done;
}

/*
 * flush() failed with @err.  A send error the connection's reset gave
 * comes before what the target said: a C2HTermReq waiting to be read
 * names the reason, and is reported instead.
 */
static int send_failed(struct nvmefs_queue *q, int err)
{
	char msg[1024];
	int ret;

	if (q->failed)
		return err;
	snprintf(msg, sizeof(msg), "%s", nvmefs_errmsg());
	ret = receive(q);
	if (ret < 0)
		return ret;
	nvmefs_set_error("%s", msg);
	return err;
}

static int tcp_process(struct nvmefs_queue *q, int timeout_ms)
{
	struct tcp_queue *tq = q->tp;
	struct pollfd pfd;
	int n, ret;

	if (tq->stream.fd < 0)
		return q->failed ? q->failed : -ENOTCONN;
	n = flush(q);
	if (n < 0)
		return send_failed(q, n);
	ret = receive(q);
	if (ret < 0)
		return ret;
	n += ret;
	/* What completions submitted, and the data R2Ts asked for, go out now,
	 * not at the next poll. */
	if (tq->tx_head) {
		ret = flush(q);
		if (ret < 0)
			return send_failed(q, ret);
		n += ret;
	}
	if (n || !timeout_ms)
		return n;
	pfd = (struct pollfd){ .fd = tq->stream.fd, .events = POLLIN | (tq->tx_head ? POLLOUT : 0) };
	ret = nvmefs_tcp_poll_until(&pfd, nvmefs_now_ms() + timeout_ms);
	if (ret < 0)
		return nvmefs_error(-errno, "queue %u: waiting for its socket failed: %s", q->qid,
				    strerror(errno));
	if (ret == 0)
		return 0;
	return tcp_process(q, 0);
}

static void tcp_queue_stop(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;

	/* Closed, the stream reaches no buffer of ours, and what was queued
	 * never goes; what the kernel held is dropped with a reset. */
	nvmefs_tcp_tx_drop(q);
	tq->stream.ops->close(&tq->stream);
	tq->watch_out = false;
	memset(&tq->rx, 0, sizeof(tq->rx));
}

static int tcp_queue_check(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	/* What the target sent before it closed (a C2HTermReq, responses)
	 * is for process() to take first: hangup() waits for it. */
	int ret = tq->stream.ops->hangup(&tq->stream);

	if (ret == 0)
		return 0;
	if (ret < 0)
		return conn_error(q, -ret, "the connection failed");
	return nvmefs_error(-ECONNRESET, "the target %s closed queue %u: it went away or dropped "
			    "this controller (keep-alive timeout?)", where(q), q->qid);
}

static int tcp_queue_fd(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;

	return tq->epfd;
}

static int tcp_queue_arm(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	int n;

	if (tq->stream.fd < 0)
		return q->failed ? q->failed : -ENOTCONN;
	n = flush(q);
	if (n != 0)
		return n;
	/* The descriptor is level-triggered: bytes left in the stream (a
	 * response, what a batch left, the target's close) keep it readable,
	 * and a caller that polls only when told would wake forever. */
	n = tq->stream.ops->pending(&tq->stream);
	return n < 0 ? conn_error(q, -n, "receiving") : n;
}

/* Nothing to register: the kernel copies to and from any memory. */
static int tcp_mr_reg(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	(void)ctrl;
	mr->tp = mr;
	mr->lkey = mr->rkey = 0;
	return 0;
}

static void tcp_mr_dereg(struct nvmefs_mr *mr)
{
	(void)mr;
}

const struct nvmefs_transport_ops nvmefs_tcp_ops = {
	.name = "tcp",
	.trsvcid = NVMEFS_DEFAULT_TRSVCID,
	.discovery_trsvcid = NVMEFS_TCP_DISCOVERY_TRSVCID,
	.allowed_opts = NVMEFS_OPT_HDR_DIGEST | NVMEFS_OPT_DATA_DIGEST | NVMEFS_OPT_HOST_IFACE |
			NVMEFS_OPT_TOS | NVMEFS_OPT_TLS,
	.queue_create = tcp_queue_create,
	.queue_destroy = tcp_queue_destroy,
	.submit = tcp_submit,
	.queue_stop = tcp_queue_stop,
	.queue_check = tcp_queue_check,
	.process = tcp_process,
	.mr_reg = tcp_mr_reg,
	.mr_dereg = tcp_mr_dereg,
	.queue_fd = tcp_queue_fd,
	.queue_arm = tcp_queue_arm,
};
