/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe/TCP's byte stream over a plain socket (tcp_stream.h): the only file
 * that makes the socket calls.  Non-blocking from the connect on; closed
 * with a reset.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_stream.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"

int nvmefs_tcp_poll_until(struct pollfd *pfd, int64_t deadline)
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

int nvmefs_tcp_wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret = nvmefs_tcp_poll_until(&pfd, deadline);

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

static int bind_host(const struct nvmefs_ctrl *ctrl, int fd, int family)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
	struct addrinfo *src;
	int ret = 0;

	if (getaddrinfo(ctrl->host_traddr, NULL, &hints, &src))
		return nvmefs_error(-EADDRNOTAVAIL, "the host address '%s' is not an address of the "
				    "target's family: check -w", ctrl->host_traddr);
	if (bind(fd, src->ai_addr, src->ai_addrlen))
		ret = nvmefs_error(-errno, "binding to the host address '%s' failed: %s: check -w",
				   ctrl->host_traddr, strerror(errno));
	freeaddrinfo(src);
	return ret;
}

static int posix_connect(struct tcp_stream *s, const struct nvmefs_ctrl *ctrl, int64_t deadline)
{
	const char *where = nvmefs_ctrl_where(ctrl);
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
		    (ctrl->host_traddr[0] && (ret = bind_host(ctrl, fd, ai->ai_family)) < 0)) {
			close(fd);
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
			err = errno;
		} else {
			ret = nvmefs_tcp_wait_fd(fd, POLLOUT, deadline);
			if (ret == -ETIMEDOUT) {
				close(fd);
				ret = nvmefs_error(-ETIMEDOUT, "connecting to %s timed out after %u ms: "
						   "the address is unreachable or filtered; check the "
						   "address and port", where, ctrl->opts.timeout_ms);
				continue;
			}
			if (ret < 0) {
				close(fd);
				ret = nvmefs_error(ret, "waiting for the connection to %s failed: %s",
						   where, strerror(-ret));
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
					     "'nvmefs discover -t tcp'", where) :
				nvmefs_error(-err, "connecting to %s failed: %s: check the address and "
					     "the routing table ('ip route get ADDR')", where,
					     strerror(err));
			continue;
		}
		s->fd = fd;
		ret = 0;
		break;
	}
	freeaddrinfo(dst);
	return ret;
}

static ssize_t posix_sendv(struct tcp_stream *s, const struct iovec *iov, int cnt)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
	ssize_t n = sendmsg(s->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);

	return n < 0 ? -errno : n;
}

static ssize_t posix_recvv(struct tcp_stream *s, const struct iovec *iov, int cnt)
{
	ssize_t n = readv(s->fd, iov, cnt);

	return n < 0 ? -errno : n;
}

static int posix_pending(struct tcp_stream *s)
{
	uint8_t byte;

	if (recv(s->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
		return 1;
	return errno == EAGAIN || errno == EINTR ? 0 : -errno;
}

static int posix_hangup(struct tcp_stream *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLRDHUP };
	int avail = 0, err = 0;
	socklen_t len = sizeof(err);

	if (s->fd < 0 || poll(&pfd, 1, 0) <= 0)
		return 0;
	if (ioctl(s->fd, FIONREAD, &avail) == 0 && avail > 0)
		return 0;
	if ((pfd.revents & POLLERR) && getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
	    err)
		return -err;
	return 1;
}

/* Zero linger (sock_setup()): the close is the reset. */
static void posix_close(struct tcp_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

const struct tcp_stream_ops nvmefs_tcp_stream_posix = {
	.name = "posix",
	.connect = posix_connect,
	.sendv = posix_sendv,
	.recvv = posix_recvv,
	.pending = posix_pending,
	.hangup = posix_hangup,
	.close = posix_close,
};
