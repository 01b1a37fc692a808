/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/TCP transport (NVMe/TCP Transport Specification 1.0): one
 * non-blocking TCP connection per NVMe queue, the only file that makes the
 * socket calls; the PDUs themselves are tcp_pdu.c's.
 *
 * Nothing is pinned or registered: the kernel copies what sendmsg() is
 * given before it returns, and receives go straight into each request's
 * buffer once its header has been checked.  Sends are queued and go out in
 * one sendmsg() per poll, gathered from where the bytes are; what the
 * socket has no room for waits in the send queue, and the queue's
 * descriptor then also wakes its owner when there is room.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "ctrl_state.h"
#include "ctrl_types.h"
#include "error.h"
#include "mr.h"
#include "queue.h"
#include "transport_ops.h"
#include "tcp_pdu.h"

/* Receives per process() call before others get the worker. */
#define RX_BATCH 64

static const char *where(const struct nvmefs_queue *q)
{
	return nvmefs_ctrl_where(q->ctrl);
}

/* poll() on @pfd until @deadline; a signal restarts it with only what is
 * left, so that signals cannot stretch the wait. */
static int poll_until(struct pollfd *pfd, int64_t deadline)
{
	int ret;

	for (;;) {
		int64_t left = deadline - nvmefs_now_ms();

		left = left < 0 ? 0 : left > INT_MAX ? INT_MAX : left;
		ret = poll(pfd, 1, (int)left);
		if (ret >= 0 || errno != EINTR)
			return ret;
	}
}

static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret = poll_until(&pfd, deadline);

	return ret < 0 ? -errno : ret == 0 ? -ETIMEDOUT : 0;
}

/*
 * What every queue socket gets before it connects, as nvme-tcp's
 * nvme_tcp_alloc_queue() does: one SYN retry, not the system's six (a
 * path that does not answer is another path's turn); a reset when it is
 * closed (zero linger), so that what a stopped queue left in the send
 * buffer, old writes among it, never reaches the target after the newer
 * writes that replaced it on the next connection; and no delay for small
 * commands and responses, which go at once.
 */
static int sock_setup(const struct nvmefs_ctrl *ctrl, int fd, int family)
{
	struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
	int one = 1, tos = ctrl->opts.tos;

	if (setsockopt(fd, IPPROTO_TCP, TCP_SYNCNT, &one, sizeof(one)))
		return nvmefs_error(-errno, "setting TCP_SYNCNT failed: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close)))
		return nvmefs_error(-errno, "setting SO_LINGER failed: %s", strerror(errno));
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return nvmefs_error(-errno, "setting TCP_NODELAY failed: %s", strerror(errno));
	/* nvme-cli's --host-iface and --tos, as nvme-tcp applies them. */
	if (ctrl->host_iface[0] &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ctrl->host_iface,
		       (socklen_t)strlen(ctrl->host_iface)))
		return nvmefs_error(-errno, "binding to the interface %s failed: %s: check -f",
				    ctrl->host_iface, strerror(errno));
	if (tos >= 0 && (family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos,
							 sizeof(tos))
					    : setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos))))
		return nvmefs_error(-errno, "setting the type of service %d failed: %s: check -T",
				    tos, strerror(errno));
	return 0;
}

static int bind_host(struct nvmefs_queue *q, int fd, int family)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
	struct addrinfo *src;
	int ret = 0;

	if (getaddrinfo(q->ctrl->host_traddr, NULL, &hints, &src))
		return nvmefs_error(-EADDRNOTAVAIL, "the host address '%s' is not an address of the "
				    "target's family: check -w", q->ctrl->host_traddr);
	if (bind(fd, src->ai_addr, src->ai_addrlen))
		ret = nvmefs_error(-errno, "binding to the host address '%s' failed: %s: check -w",
				   q->ctrl->host_traddr, strerror(errno));
	freeaddrinfo(src);
	return ret;
}

static int tcp_connect(struct nvmefs_queue *q, int64_t deadline)
{
	struct nvmefs_ctrl *ctrl = q->ctrl;
	struct tcp_queue *tq = q->tp;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *dst, *ai;
	int ret = -EHOSTUNREACH, fd, err;
	socklen_t len = sizeof(err);

	ret = getaddrinfo(ctrl->traddr, ctrl->trsvcid, &hints, &dst);
	if (ret)
		return nvmefs_error(-EHOSTUNREACH, "cannot resolve the target address '%s' port '%s': "
				    "%s: check -a and -s", ctrl->traddr, ctrl->trsvcid, gai_strerror(ret));
	for (ai = dst; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = nvmefs_error(-errno, "creating a TCP socket failed: %s", strerror(errno));
			continue;
		}
		if ((ret = sock_setup(ctrl, fd, ai->ai_family)) < 0 ||
		    (ctrl->host_traddr[0] && (ret = bind_host(q, fd, ai->ai_family)) < 0)) {
			close(fd);
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
			err = errno;
		} else {
			ret = wait_fd(fd, POLLOUT, deadline);
			if (ret == -ETIMEDOUT) {
				close(fd);
				ret = nvmefs_error(-ETIMEDOUT, "connecting to %s timed out after %u ms: "
						   "the address is unreachable or filtered; check the "
						   "address and port", where(q), ctrl->opts.timeout_ms);
				continue;
			}
			if (ret < 0) {
				close(fd);
				ret = nvmefs_error(ret, "waiting for the connection to %s failed: %s",
						   where(q), strerror(-ret));
				continue;
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
				err = errno;
		}
		if (err) {
			close(fd);
			ret = err == ECONNREFUSED ?
				nvmefs_error(-ECONNREFUSED, "nothing is listening at %s (connection "
					     "refused): check the address and the port (-s), e.g. with "
					     "'nvmefs discover -t tcp'", where(q)) :
				nvmefs_error(-err, "connecting to %s failed: %s: check the address and "
					     "the routing table ('ip route get ADDR')", where(q),
					     strerror(err));
			continue;
		}
		tq->fd = fd;
		ret = 0;
		break;
	}
	freeaddrinfo(dst);
	return ret;
}

/* ICReq out, ICResp in, before the deadline. */
static int handshake(struct nvmefs_queue *q, int64_t deadline)
{
	struct nvmefs_ctrl *ctrl = q->ctrl;
	struct tcp_queue *tq = q->tp;
	bool hdgst = ctrl->opts.hdr_digest, ddgst = ctrl->opts.data_digest;
	struct nvmefs_tcp_icreq icreq;
	struct nvmefs_tcp_icresp icresp;
	size_t done = 0;
	ssize_t n;
	int ret;

	nvmefs_tcp_icreq_build(&icreq, hdgst, ddgst);
	while (done < sizeof(icreq)) {
		n = send(tq->fd, (uint8_t *)&icreq + done, sizeof(icreq) - done, MSG_NOSIGNAL);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return nvmefs_error(-errno, "sending ICReq to %s failed: %s", where(q),
					    strerror(errno));
		ret = wait_fd(tq->fd, POLLOUT, deadline);
		if (ret < 0)
			goto wait_failed;
	}
	for (done = 0; done < sizeof(icresp);) {
		n = recv(tq->fd, (uint8_t *)&icresp + done, sizeof(icresp) - done, 0);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return nvmefs_error(-ECONNRESET, "%s closed queue %u's connection instead of "
					    "answering ICReq: is it an NVMe/TCP target? If it requires "
					    "TLS, nvmefs does not support that yet", where(q), q->qid);
		if (errno != EAGAIN && errno != EINTR)
			return nvmefs_error(-errno, "%s reset queue %u's connection instead of "
					    "answering ICReq (%s): is it an NVMe/TCP target? If it "
					    "requires TLS, nvmefs does not support that yet", where(q),
					    q->qid, strerror(errno));
		ret = wait_fd(tq->fd, POLLIN, deadline);
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
	if (tq->fd >= 0)
		close(tq->fd);
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
	tq->fd = tq->epfd = -1;
	q->tp = tq;
	ret = tcp_connect(q, deadline);
	if (ret == 0)
		ret = handshake(q, deadline);
	if (ret < 0)
		goto fail;
	tq->inline_size = q->qid ? q->ctrl->inline_size : TCP_ADMIN_INLINE_SIZE;
	ret = nvmefs_tcp_slots_init(q, params->data_slot_size);
	if (ret < 0)
		goto fail;
	tq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tq->epfd < 0 || epoll_ctl(tq->epfd, EPOLL_CTL_ADD, tq->fd, &ev)) {
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
	if (epoll_ctl(tq->epfd, EPOLL_CTL_MOD, tq->fd, &ev))
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
		struct msghdr msg = { .msg_iov = iov };

		cnt = nvmefs_tcp_tx_iov(q, iov, TCP_TX_IOV_MAX);
		msg.msg_iovlen = (size_t)cnt;
		total = 0;
		for (int i = 0; i < cnt; i++)
			total += iov[i].iov_len;
		n = sendmsg(tq->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return conn_error(q, errno, "sending");
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
 * connection ends with a reset (zero linger, sock_setup()) when the queue
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
	struct msghdr msg = { .msg_iov = iov };
	char why[1024];
	ssize_t sent;
	int cnt = 0, err;

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
	msg.msg_iovlen = (size_t)cnt;
	sent = sendmsg(tq->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	err = errno;
	t->hdr.plen = 0;
	if (sent == (ssize_t)(rest + plen))
		return;
	snprintf(why, sizeof(why), "%s", nvmefs_errmsg());
	nvmefs_set_error("%s; the H2CTermReq telling it so could not go (%s%s), so the connection "
			 "is reset instead", why, sent < 0 && err != EAGAIN ? strerror(err) :
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
		n = readv(tq->fd, iov, cnt);
		if (n == 0) {
			nvmefs_queue_fail(q, -ECONNRESET);
			return nvmefs_error(-ECONNRESET, "the target %s closed queue %u: it went away "
					    "or dropped this controller (keep-alive timeout?)",
					    where(q), q->qid);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			nvmefs_queue_fail(q, -errno);
			return conn_error(q, errno, "receiving");
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

	if (tq->fd < 0)
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
	pfd = (struct pollfd){ .fd = tq->fd, .events = POLLIN | (tq->tx_head ? POLLOUT : 0) };
	ret = poll_until(&pfd, nvmefs_now_ms() + timeout_ms);
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

	/* Closed, the socket reaches no buffer of ours, and what was queued
	 * never goes; what the kernel held is dropped with a reset (zero
	 * linger, sock_setup()). */
	nvmefs_tcp_tx_drop(q);
	if (tq->fd >= 0)
		close(tq->fd);
	tq->fd = -1;
	tq->watch_out = false;
	memset(&tq->rx, 0, sizeof(tq->rx));
}

static int tcp_queue_check(struct nvmefs_queue *q)
{
	struct tcp_queue *tq = q->tp;
	struct pollfd pfd = { .fd = tq->fd, .events = POLLRDHUP };
	int avail = 0, err = 0;
	socklen_t len = sizeof(err);

	if (tq->fd < 0 || poll(&pfd, 1, 0) <= 0)
		return 0;
	/* What the target sent before it closed (a C2HTermReq, responses)
	 * is for process() to take first. */
	if (ioctl(tq->fd, FIONREAD, &avail) == 0 && avail > 0)
		return 0;
	if ((pfd.revents & POLLERR) && getsockopt(tq->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
	    err)
		return conn_error(q, err, "the connection failed");
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
	uint8_t byte;
	int n;

	if (tq->fd < 0)
		return q->failed ? q->failed : -ENOTCONN;
	n = flush(q);
	if (n != 0)
		return n;
	/* The descriptor is level-triggered: bytes left in the socket (a
	 * response, what a batch left, the target's close) keep it readable,
	 * and a caller that polls only when told would wake forever. */
	if (recv(tq->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
		return 1;
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	return conn_error(q, errno, "receiving");
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
			NVMEFS_OPT_TOS,
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
