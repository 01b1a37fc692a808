/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe/TCP's byte stream over TLS 1.3 with a pre-shared key (NVMe TCP
 * transport binding, 3.6): the plain socket's connect (tcp_stream.c), then
 * OpenSSL's handshake on that non-blocking socket, bounded by the connect's
 * deadline.  Only what the binding allows: TLS 1.3, the one cipher suite of
 * the PSK's hash, (EC)DHE with the PSK (OpenSSL offers psk_dhe_ke unless
 * told otherwise), no certificates (a server that asks to be trusted by one
 * fails verification, as no trust anchor is loaded), no session tickets.
 * OpenSSL sends a KeyUpdate only when asked to, which nothing here does:
 * the kernel target cannot take one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tcp_stream.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../ctrl/auth_crypto.h"
#include "../ctrl/tls_key.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"

/* A TLS record's most plaintext: writes are gathered up to one record. */
#define TLS_RECORD_MAX 16384

struct tls_conn {
	SSL_CTX *ctx;
	SSL *ssl;
	const struct nvmefs_tls_psk *psk;
	/* Bytes of the last write that OpenSSL must be given again (it
	 * wanted the socket writable): 0 when none. */
	size_t wpend;
	uint8_t wbuf[TLS_RECORD_MAX];
};

static const unsigned char suite_sha256[] = { 0x13, 0x01 };	/* TLS_AES_128_GCM_SHA256 */
static const unsigned char suite_sha384[] = { 0x13, 0x02 };	/* TLS_AES_256_GCM_SHA384 */

/*
 * OpenSSL asks for the PSK as a session to resume; its identity may be any
 * length (NVMe's reach about 500 bytes), unlike the older PSK client
 * callback's 256.  After a HelloRetryRequest @md is the suite's hash, which
 * must still be the PSK's.
 */
static int use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		       SSL_SESSION **sessp)
{
	struct tls_conn *c = SSL_get_app_data(ssl);
	const struct nvmefs_auth_key *key = c->psk->key;
	const SSL_CIPHER *suite = SSL_CIPHER_find(ssl, key->hash == NVMEFS_AUTH_HASH_SHA384 ?
						  suite_sha384 : suite_sha256);
	SSL_SESSION *sess;

	*sessp = NULL;
	if (!suite)
		return 0;
	if (md && md != SSL_CIPHER_get_handshake_digest(suite))
		return 1;
	sess = SSL_SESSION_new();
	if (!sess || !SSL_SESSION_set1_master_key(sess, key->data, key->len) ||
	    !SSL_SESSION_set_cipher(sess, suite) ||
	    !SSL_SESSION_set_protocol_version(sess, TLS1_3_VERSION)) {
		SSL_SESSION_free(sess);
		return 0;
	}
	*id = (const unsigned char *)c->psk->identity;
	*idlen = strlen(c->psk->identity);
	*sessp = sess;
	return 1;
}

static void conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl);
	SSL_CTX_free(c->ctx);
	OPENSSL_cleanse(c->wbuf, sizeof(c->wbuf));
	free(c);
}

static int conn_new(struct tcp_stream *s, const struct nvmefs_tls_psk *psk, struct tls_conn **cp)
{
	struct tls_conn *c = calloc(1, sizeof(*c));
	const char *suite = psk->key->hash == NVMEFS_AUTH_HASH_SHA384 ? "TLS_AES_256_GCM_SHA384" :
									 "TLS_AES_128_GCM_SHA256";

	if (!c)
		return nvmefs_error(-ENOMEM, "TLS: out of memory");
	c->psk = psk;
	ERR_clear_error();
	c->ctx = SSL_CTX_new(TLS_client_method());
	if (!c->ctx || !SSL_CTX_set_min_proto_version(c->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(c->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(c->ctx, suite))
		goto fail;
	/* An end of the stream without close_notify is the peer's close, as
	 * over a plain socket, not an error. */
	SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(c->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
	c->ssl = SSL_new(c->ctx);
	if (!c->ssl || !SSL_set_fd(c->ssl, s->fd))
		goto fail;
	SSL_set_app_data(c->ssl, c);
	SSL_set_psk_use_session_callback(c->ssl, use_session);
	SSL_set_connect_state(c->ssl);
	*cp = c;
	return 0;
fail:
	conn_free(c);
	return nvmefs_ossl_error(-ENOMEM, "TLS: setting up the connection");
}

/* What failed in OpenSSL, for a one-line message (the queue, then it). */
static const char *ossl_why(void)
{
	unsigned long e = ERR_peek_last_error();
	const char *why = e ? ERR_reason_error_string(e) : NULL;

	return why ? why : "the connection ended";
}

static int handshake(struct tcp_stream *s, struct tls_conn *c, const struct nvmefs_ctrl *ctrl,
		     int64_t deadline)
{
	const char *where = nvmefs_ctrl_where(ctrl);
	int ret, err;

	for (;;) {
		ERR_clear_error();
		ret = SSL_connect(c->ssl);
		if (ret == 1)
			break;
		err = SSL_get_error(c->ssl, ret);
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
			ret = nvmefs_tcp_wait_fd(s->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
						 deadline);
			if (ret == -ETIMEDOUT)
				return nvmefs_error(-ETIMEDOUT, "the TLS handshake with %s did not "
						    "finish within %u ms: is it an NVMe/TCP target "
						    "with TLS on this port?", where,
						    ctrl->opts.timeout_ms);
			if (ret < 0)
				return nvmefs_error(ret, "waiting for the TLS handshake with %s failed: "
						    "%s", where, strerror(-ret));
			continue;
		}
		/* tlshd before ktls-utils 1.3 built with GnuTLS 3.8.11 (Debian
		 * 13's 1.0 among them) takes every PSK with SHA-256, the kernel
		 * initiator's too, so the binding's suite for a SHA-384 key
		 * cannot be had there: the key is likely right. */
		if (c->psk->key->hash == NVMEFS_AUTH_HASH_SHA384)
			ret = nvmefs_error(-ECONNREFUSED, "the TLS handshake with %s failed (%s): "
					   "the key is SHA-384 (TLS_AES_256_GCM_SHA384), which "
					   "tlshd before ktls-utils 1.3 with GnuTLS 3.8.11 cannot "
					   "take: give target and host a SHA-256 key (nvmefs "
					   "gen-tls-key -m 1), or check that --tls-key is the "
					   "target's key for host %s", where, ossl_why(),
					   ctrl->hostnqn);
		else
			ret = nvmefs_error(-ECONNREFUSED, "the TLS handshake with %s failed (%s): "
					   "check that --tls-key is the target's key for host %s "
					   "and that the port requires TLS", where, ossl_why(),
					   ctrl->hostnqn);
		ERR_clear_error();
		return ret;
	}
	/* Without the PSK the server could only have proven itself with a
	 * certificate, which verification refused: this cannot happen, but
	 * a channel not keyed by the PSK is not the one asked for. */
	if (!SSL_session_reused(c->ssl))
		return nvmefs_error(-ECONNREFUSED, "%s did not accept the TLS PSK: check --tls-key",
				    where);
	return 0;
}

static int tls_connect(struct tcp_stream *s, const struct nvmefs_ctrl *ctrl, int64_t deadline)
{
	struct tls_conn *c = NULL;
	int ret;

	if (!ctrl->tls_psk)
		return nvmefs_error(-EINVAL, "TLS without a key: give --tls-key");
	ret = nvmefs_tcp_stream_posix.connect(s, ctrl, deadline);
	if (ret < 0)
		return ret;
	ret = conn_new(s, ctrl->tls_psk, &c);
	if (ret == 0)
		ret = handshake(s, c, ctrl, deadline);
	if (ret < 0) {
		conn_free(c);
		nvmefs_tcp_stream_posix.close(s);
		return ret;
	}
	s->priv = c;
	/* Nothing is due from the target: the wait is the whole settle,
	 * unless it closes first, which the ICReq then finds. */
	if (s->settle_ms)
		nvmefs_tcp_wait_fd(s->fd, POLLIN, nvmefs_now_ms() + s->settle_ms);
	return 0;
}

/* A failed record layer (a bad MAC, an alert): the queue's transport error,
 * -EBADMSG with OpenSSL's reason, which no plain socket returns. */
static ssize_t io_error(struct tls_conn *c, int ret, const char *what)
{
	int err = SSL_get_error(c->ssl, ret);
	ssize_t res;

	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
		return -EAGAIN;
	if (err == SSL_ERROR_ZERO_RETURN)
		return 0;
	if (err == SSL_ERROR_SYSCALL && errno)
		res = -errno;
	else
		res = nvmefs_error(-EBADMSG, "TLS %s failed: %s", what, ossl_why());
	ERR_clear_error();
	return res;
}

static ssize_t tls_sendv(struct tcp_stream *s, const struct iovec *iov, int cnt)
{
	struct tls_conn *c = s->priv;
	/* A write OpenSSL did not finish is given again, byte for byte. */
	size_t max = c->wpend ? c->wpend : sizeof(c->wbuf), n = 0, done;

	for (int i = 0; i < cnt && n < max; i++) {
		size_t take = iov[i].iov_len < max - n ? iov[i].iov_len : max - n;

		memcpy(c->wbuf + n, iov[i].iov_base, take);
		n += take;
	}
	if (!n)
		return 0;
	ERR_clear_error();
	if (SSL_write_ex(c->ssl, c->wbuf, n, &done)) {
		c->wpend = 0;
		return (ssize_t)done;
	}
	ssize_t ret = io_error(c, 0, "send");

	if (ret == -EAGAIN)
		c->wpend = n;
	return ret == 0 ? -EPIPE : ret;
}

static ssize_t tls_recvv(struct tcp_stream *s, const struct iovec *iov, int cnt)
{
	struct tls_conn *c = s->priv;
	size_t total = 0, got;

	for (int i = 0; i < cnt; i++) {
		size_t filled = 0;

		while (filled < iov[i].iov_len) {
			ERR_clear_error();
			if (!SSL_read_ex(c->ssl, (uint8_t *)iov[i].iov_base + filled,
					 iov[i].iov_len - filled, &got)) {
				ssize_t ret = io_error(c, 0, "receive");

				return total ? (ssize_t)total : ret;
			}
			filled += got;
			total += got;
		}
	}
	return (ssize_t)total;
}

/* Decrypted bytes OpenSSL holds count: the socket may be empty. */
static int tls_pending(struct tcp_stream *s)
{
	struct tls_conn *c = s->priv;

	if (c && SSL_has_pending(c->ssl))
		return 1;
	return nvmefs_tcp_stream_posix.pending(s);
}

static int tls_hangup(struct tcp_stream *s)
{
	struct tls_conn *c = s->priv;

	if (c && SSL_has_pending(c->ssl))
		return 0;
	return nvmefs_tcp_stream_posix.hangup(s);
}

/* Abortive, as the plain stream's: no close_notify, the socket's reset. */
static void tls_close(struct tcp_stream *s)
{
	conn_free(s->priv);
	s->priv = NULL;
	nvmefs_tcp_stream_posix.close(s);
}

const struct tcp_stream_ops nvmefs_tcp_stream_tls = {
	.name = "tls",
	.connect = tls_connect,
	.sendv = tls_sendv,
	.recvv = tls_recvv,
	.pending = tls_pending,
	.hangup = tls_hangup,
	.close = tls_close,
};
