/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_tcp_tls's target end: fuzz_tcp.c's byte stream from the target, but
 * sent as TLS 1.3 records of a session with the pre-shared key, and taken
 * by the host through its TLS stream (tcp_tls.c) as tcp.c's receive() takes
 * it: recvv() into the places nvmefs_tcp_rx_iov() names, then
 * nvmefs_tcp_rx_advance().  One real handshake per process, on a loopback
 * socket (the host's connect() with its own key derivation, an OpenSSL
 * server with the same PSK): the record layer stays in step between inputs,
 * as what an input leaves unread is read and dropped after it.  The input's
 * receive size is also its record size, so records end anywhere in a PDU.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "../../src/lib/base/clock.h"
#include "../../src/lib/ctrl/tls_key.h"
#include "../../src/lib/types/ctrl_types.h"
#include "../../src/lib/tcp/tcp_pdu.h"
#include "../../src/lib/tcp/tcp_stream.h"
#include "../../src/lib/transport/queue.h"
#include "tls_pipe.h"

#define KEY "NVMeTLSkey-1:01:ABEiM0RVZneImQARIjNEVWZ3iJkAESIzRFVmd4iZABHSNtxp:"

static struct {
	struct nvmefs_ctrl *ctrl;	/* what the host's connect reads */
	struct tcp_stream host;
	int lfd;
	SSL *srv;
	/* What the target still has to send of the current input. */
	const uint8_t *data;
	size_t len, off, record;
} pipe_;

static int find_session(SSL *ssl, const unsigned char *id, size_t len, SSL_SESSION **sessp)
{
	static const unsigned char aes128[] = { 0x13, 0x01 };
	const struct nvmefs_tls_psk *psk = pipe_.ctrl->tls_psk;
	SSL_SESSION *sess;

	*sessp = NULL;
	if (len != strlen(psk->identity) || memcmp(id, psk->identity, len))
		return 1;
	sess = SSL_SESSION_new();
	if (!sess || !SSL_SESSION_set1_master_key(sess, psk->key->data, psk->key->len) ||
	    !SSL_SESSION_set_cipher(sess, SSL_CIPHER_find(ssl, aes128)) ||
	    !SSL_SESSION_set_protocol_version(sess, TLS1_3_VERSION))
		abort();
	*sessp = sess;
	return 1;
}

static void *accept_one(void *arg)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	int fd = accept(pipe_.lfd, NULL, NULL);

	(void)arg;
	if (!ctx || fd < 0)
		abort();
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_psk_find_session_callback(ctx, find_session);
	pipe_.srv = SSL_new(ctx);
	SSL_CTX_free(ctx);
	if (!pipe_.srv || !SSL_set_fd(pipe_.srv, fd) || SSL_accept(pipe_.srv) != 1)
		abort();
	return NULL;
}

static void pipe_open(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t slen = sizeof(sin);
	struct nvmefs_ctrl *ctrl = calloc(1, sizeof(*ctrl));
	pthread_t thread;

	pipe_.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ctrl || pipe_.lfd < 0 || bind(pipe_.lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(pipe_.lfd, 1) || getsockname(pipe_.lfd, (struct sockaddr *)&sin, &slen))
		abort();
	strcpy(ctrl->traddr, "127.0.0.1");
	snprintf(ctrl->trsvcid, sizeof(ctrl->trsvcid), "%u", ntohs(sin.sin_port));
	strcpy(ctrl->hostnqn, "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-00000000f022");
	strcpy(ctrl->subnqn, "nqn.2026-11.io.nvmefs.fuzz");
	ctrl->opts.timeout_ms = 10000;
	if (nvmefs_tls_psk_new(KEY, ctrl->hostnqn, ctrl->subnqn, 1, false, &ctrl->tls_psk))
		abort();
	pipe_.ctrl = ctrl;
	pipe_.host = (struct tcp_stream){ .ops = &nvmefs_tcp_stream_tls, .fd = -1 };
	if (pthread_create(&thread, NULL, accept_one, NULL) ||
	    nvmefs_tcp_stream_tls.connect(&pipe_.host, ctrl, nvmefs_now_ms() + 10000) < 0 ||
	    pthread_join(thread, NULL))
		abort();
	/* The target's writes never wait: what the socket cannot take yet
	 * goes once the host has read some. */
	if (fcntl(SSL_get_fd(pipe_.srv), F_SETFL, O_NONBLOCK) < 0)
		abort();
}

/* The target sends what it can of the input, a record at a time. */
static void pump(void)
{
	while (pipe_.off < pipe_.len) {
		size_t n = pipe_.len - pipe_.off < pipe_.record ? pipe_.len - pipe_.off : pipe_.record;
		size_t done;

		if (!SSL_write_ex(pipe_.srv, pipe_.data + pipe_.off, n, &done)) {
			if (SSL_get_error(pipe_.srv, 0) == SSL_ERROR_WANT_WRITE)
				return;
			abort();
		}
		pipe_.off += done;
	}
}

/* The host's receive through TLS: bytes, or abort() on anything a target
 * that only sends records of its session could not cause. */
static size_t host_recv(const struct iovec *iov, int cnt)
{
	for (;;) {
		ssize_t n;

		pump();
		n = pipe_.host.ops->recvv(&pipe_.host, iov, cnt);
		if (n > 0)
			return (size_t)n;
		if (n != -EAGAIN ||
		    nvmefs_tcp_wait_fd(pipe_.host.fd, POLLIN, nvmefs_now_ms() + 10000) < 0)
			abort();
	}
}

void tls_pipe_deliver(struct nvmefs_queue *q, const uint8_t *data, size_t size, size_t record,
		      void (*sent)(struct nvmefs_queue *q))
{
	size_t got = 0;

	if (!pipe_.ctrl)
		pipe_open();
	pipe_.data = data;
	pipe_.len = size;
	pipe_.off = 0;
	pipe_.record = record;
	while (got < size) {
		struct iovec iov[3];
		int cnt = nvmefs_tcp_rx_iov(q, iov, 3);
		size_t room = record, n;

		/* A receive takes at most a record's worth, as fuzz_tcp's take
		 * its chunk: PDUs arrive in pieces. */
		for (int i = 0; i < cnt; i++) {
			if (iov[i].iov_len >= room) {
				iov[i].iov_len = room;
				cnt = i + 1;
			}
			room -= iov[i].iov_len;
		}
		n = host_recv(iov, cnt);

		got += n;
		if (nvmefs_tcp_rx_advance(q, n) < 0) {
			if (!q->failed)
				abort();
			break;
		}
		sent(q);
	}
	/* The queue failed: the rest of the input, read and dropped. */
	while (got < size) {
		uint8_t scratch[4096];
		struct iovec iov = { scratch, size - got < sizeof(scratch) ? size - got : sizeof(scratch) };

		got += host_recv(&iov, 1);
	}
}
