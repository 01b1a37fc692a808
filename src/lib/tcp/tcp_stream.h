/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The byte stream NVMe/TCP's PDUs travel on (tcp.c): connect, send and
 * receive vectors without waiting, what a connection says of itself, close.
 * A plain socket is one implementation (tcp_stream.c); a secure channel is
 * another behind the same operations, not edits at every call site, as
 * SPDK's spdk_sock has posix and ssl implementations.
 */
#ifndef NVMEFS_TCP_STREAM_H
#define NVMEFS_TCP_STREAM_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct nvmefs_ctrl;
struct tcp_stream_ops;

struct tcp_stream {
	const struct tcp_stream_ops *ops;
	/* The socket the stream runs on, -1 while closed: what the queue's
	 * owner waits on, as every implementation's bytes arrive there. */
	int fd;
	/* What an implementation keeps beside the socket (TLS's session). */
	void *priv;
	/* TLS: how long to leave the connection quiet after the handshake,
	 * while the peer's handshake agent hands the socket back (tcp.c). */
	unsigned int settle_ms;
};

struct tcp_stream_ops {
	const char *name;
	/*
	 * Connect to @ctrl's target address and service id with its socket
	 * options (host address, interface, type of service) before
	 * @deadline, non-blocking from then on.  0, or -errno with the
	 * message; s->fd stays -1 on failure.
	 */
	int (*connect)(struct tcp_stream *s, const struct nvmefs_ctrl *ctrl, int64_t deadline);
	/* Without waiting: the bytes of @iov taken, or -errno (-EAGAIN: no room). */
	ssize_t (*sendv)(struct tcp_stream *s, const struct iovec *iov, int cnt);
	/* Without waiting: the bytes received into @iov, 0 once the peer
	 * closed, or -errno (-EAGAIN: nothing yet). */
	ssize_t (*recvv)(struct tcp_stream *s, const struct iovec *iov, int cnt);
	/* 1 if recvv() has something to say (bytes, the peer's close), 0 if
	 * not yet, or -errno for the connection's failure. */
	int (*pending)(struct tcp_stream *s);
	/* Without waiting, whether the connection ended: 0 if not, or if
	 * bytes the peer sent before it closed still wait for recvv(); 1 if
	 * the peer closed it; -errno if it failed so. */
	int (*hangup)(struct tcp_stream *s);
	/* Close for good, abortively: what was not sent yet is dropped and
	 * the peer gets a reset, not the rest.  s->fd is -1 after. */
	void (*close)(struct tcp_stream *s);
};

/* A plain TCP socket. */
extern const struct tcp_stream_ops nvmefs_tcp_stream_posix;
/* TLS 1.3 with the controller's pre-shared key on a plain socket (tcp_tls.c). */
extern const struct tcp_stream_ops nvmefs_tcp_stream_tls;

/* poll() on @pfd until @deadline; a signal restarts it with only what is
 * left, so that signals cannot stretch the wait.  As poll() returns. */
int nvmefs_tcp_poll_until(struct pollfd *pfd, int64_t deadline);
/* Wait for @events on @fd until @deadline: 0, -ETIMEDOUT or -errno. */
int nvmefs_tcp_wait_fd(int fd, short events, int64_t deadline);

#endif /* NVMEFS_TCP_STREAM_H */
