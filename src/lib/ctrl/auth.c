/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * DH-HMAC-CHAP in-band authentication, host side (NVMe Base 2.0, 8.13.5):
 * after a queue's Connect says authentication is required, the host sends
 * AUTH_Negotiate, receives the controller's challenge, answers with its
 * response (and, with a controller secret, a challenge of its own), and
 * receives Success1, checking the controller's response, then sends
 * Success2.  With a controller secret the host starts this itself when the
 * Connect did not ask.  For secure channel concatenation (--concat) the
 * admin queue's exchange, over plain TCP, also generates the TLS PSK the
 * controller's queues then run TLS with (ctrl_setup.c connects it again).  Any failure after the challenge is reported back with
 * AUTH_Failure2, so the controller knows why.  Every queue is
 * authenticated, the admin queue first, and again after every reconnect,
 * as the Linux host does; the messages are the kernel's, byte for byte.
 *
 * The secrets sit in locked memory (auth_crypto.c) from the connect call
 * to the controller's end, and no message quotes them.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/util.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "admin.h"
#include "auth.h"
#include "auth_crypto.h"
#include "tls_key.h"
#include "nvmefs/wire_auth.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

/* Room for the largest message: a Reply with two SHA-512 values and an
 * ffdhe8192 public value is 16 + 128 + 1024 bytes. */
#define AUTH_BUF_SIZE 4096

struct nvmefs_auth {
	struct nvmefs_auth_key *host_key;
	struct nvmefs_auth_key *ctrl_key;	/* NULL: the controller is not checked */
	/* One exchange at a time: the queues are connected one after another,
	 * and the I/O queues' data slots are too small for a message. */
	pthread_mutex_t lock;
	uint8_t *buf;
	struct nvmefs_mr *mr;
	uint16_t next_tid;
};

/* One transaction on one queue. */
struct txn {
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_queue *q;
	uint8_t *buf;
	struct nvmefs_mr *mr;		/* NULL: buf is a request's data slot */
	uint16_t tid;
	unsigned int hash;
	size_t hl;
	unsigned int group;
	uint32_t s1, s2;
	uint8_t c1[NVMEFS_AUTH_MAX_HASH_LEN];
	uint8_t c2[NVMEFS_AUTH_MAX_HASH_LEN];
	struct nvmefs_auth_dh *dh;
	struct nvmefs_auth_key *sess;
	/* What went wrong, for AUTH_Failure2 (0: nothing to tell). */
	uint8_t failure;
	/* The controller asked for authentication (AUTHREQ.ATR). */
	bool asked;
	/* Secure channel concatenation: SC_C NEWTLSPSK, a challenge of the
	 * host's with sequence number 0, and the TLS PSK made from them. */
	bool concat;
};

static const char *failure_name(unsigned int exp)
{
	switch (exp) {
	case NVMEFS_DHCHAP_FAILURE_FAILED: return "authentication failed";
	case NVMEFS_DHCHAP_FAILURE_NOT_USABLE: return "authentication protocol not usable";
	case NVMEFS_DHCHAP_FAILURE_CONCAT_MISMATCH: return "secure channel concatenation mismatch";
	case NVMEFS_DHCHAP_FAILURE_HASH_UNUSABLE: return "no usable hash function";
	case NVMEFS_DHCHAP_FAILURE_DHGROUP_UNUSABLE: return "no usable Diffie-Hellman group";
	case NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD: return "incorrect payload";
	case NVMEFS_DHCHAP_FAILURE_INCORRECT_MESSAGE: return "incorrect message";
	default: return "unknown reason";
	}
}

/* @what failed: the message the failure left is the reason. */
static int with_cause(int err, const char *what)
{
	char cause[512];

	snprintf(cause, sizeof(cause), "%s", nvmefs_errmsg());
	return nvmefs_error(err, "%s: %s", what, cause);
}

/* The host's secret, and the controller's if given, parsed into *@host and
 * *@ctrl (which the caller frees, also on failure). */
static int parse_secrets(const char *secret, const char *ctrl_secret,
			 struct nvmefs_auth_key **host, struct nvmefs_auth_key **ctrl)
{
	int ret;

	if (!secret)
		return nvmefs_error(-EINVAL, "a controller secret (--dhchap-ctrl-secret) checks the "
				    "controller only alongside the host's: give --dhchap-secret too");
	ret = nvmefs_auth_key_parse(secret, host);
	if (ret < 0)
		return with_cause(ret, "the host secret (--dhchap-secret)");
	if (ctrl_secret) {
		ret = nvmefs_auth_key_parse(ctrl_secret, ctrl);
		if (ret < 0)
			return with_cause(ret, "the controller secret (--dhchap-ctrl-secret)");
	}
	return 0;
}

int nvmefs_auth_check(const char *secret, const char *ctrl_secret)
{
	struct nvmefs_auth_key *host = NULL, *ctrl = NULL;
	int ret;

	if (!secret && !ctrl_secret)
		return 0;
	ret = parse_secrets(secret, ctrl_secret, &host, &ctrl);
	nvmefs_auth_key_free(host);
	nvmefs_auth_key_free(ctrl);
	return nvmefs_secret_malformed(ret);
}

int nvmefs_dhchap_secret_check(const char *secret)
{
	struct nvmefs_auth_key *key = NULL;
	int ret;

	if (!secret)
		return nvmefs_error(-EINVAL, "no DH-HMAC-CHAP secret given");
	ret = nvmefs_auth_key_parse(secret, &key);
	nvmefs_auth_key_free(key);
	return nvmefs_secret_malformed(ret);
}

int nvmefs_auth_init(struct nvmefs_ctrl *ctrl, const char *secret, const char *ctrl_secret)
{
	struct nvmefs_auth *a;
	int ret;

	if (!secret && !ctrl_secret)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return nvmefs_error(-ENOMEM, "out of memory");
	pthread_mutex_init(&a->lock, NULL);
	ctrl->auth = a;
	ret = parse_secrets(secret, ctrl_secret, &a->host_key, &a->ctrl_key);
	if (ret < 0)
		return ret;
	/* Random, so a reconnect does not replay an old transaction's id. */
	if (RAND_bytes((unsigned char *)&a->next_tid, sizeof(a->next_tid)) != 1)
		return nvmefs_error(-EIO, "OpenSSL has no random numbers for DH-HMAC-CHAP");
	return 0;
}

void nvmefs_auth_release(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_auth *a = ctrl->auth;

	if (!a)
		return;
	nvmefs_mr_free(a->mr);
	free(a->buf);
	nvmefs_auth_key_free(a->host_key);
	nvmefs_auth_key_free(a->ctrl_key);
	pthread_mutex_destroy(&a->lock);
	free(a);
	ctrl->auth = NULL;
}

/* The buffer the messages of @t go through: the request slot where it
 * holds one (the admin queue), else the controller's, registered once. */
static int txn_buffer(struct txn *t)
{
	struct nvmefs_auth *a = t->ctrl->auth;
	int ret;

	if (t->q->nr_reqs && t->q->reqs[0].data_slot_size >= AUTH_BUF_SIZE)
		return 0;
	if (!a->buf) {
		a->buf = aligned_alloc(4096, AUTH_BUF_SIZE);
		if (!a->buf)
			return nvmefs_error(-ENOMEM, "out of memory");
		ret = nvmefs_mr_new(t->ctrl, a->buf, AUTH_BUF_SIZE, &a->mr);
		if (ret < 0) {
			free(a->buf);
			a->buf = NULL;
			return ret;
		}
	}
	t->buf = a->buf;
	t->mr = a->mr;
	return 0;
}

/*
 * AUTH_Send of @len bytes of the message in the buffer, or AUTH_Receive of
 * at most AUTH_BUF_SIZE into it (zeroed first, so a short message reads as
 * zeros past its end).
 */
static int exchange(struct txn *t, bool send, uint32_t len)
{
	struct nvmefs_ctrl *ctrl = t->ctrl;
	struct nvmefs_req *req = nvmefs_req_get(t->q);
	struct nvmefs_auth_cmd *cmd;
	uint16_t status;
	int ret;

	if (!req)
		return nvmefs_error(-EBUSY, "queue %u: no free request slot to authenticate",
				    t->q->qid);
	nvmefs_sqe_init(&req->cmd->sqe, nvme_admin_fabrics, 0);
	cmd = &req->cmd->auth;
	cmd->fctype = send ? nvme_fabrics_type_auth_send : nvme_fabrics_type_auth_receive;
	cmd->spsp0 = NVMEFS_AUTH_SPSP_DHCHAP;
	cmd->spsp1 = NVMEFS_AUTH_SPSP_DHCHAP;
	cmd->secp = NVMEFS_AUTH_SECP_DHCHAP;
	cmd->len = nvmefs_cpu_to_le32(send ? len : AUTH_BUF_SIZE);
	if (t->mr) {
		if (!send)
			memset(t->buf, 0, AUTH_BUF_SIZE);
		req->data = t->buf;
		req->mr = t->mr;
	} else {
		/* The slot is this request's: the message is built or read there. */
		if (send)
			memcpy(req->data_slot, t->buf, len);
		else
			memset(req->data_slot, 0, AUTH_BUF_SIZE);
		req->data = req->data_slot;
	}
	req->len = send ? len : AUTH_BUF_SIZE;
	req->dir = send ? NVMEFS_DIR_TO_CTRL : NVMEFS_DIR_FROM_CTRL;
	ret = nvmefs_req_exec(req, ctrl->opts.timeout_ms);
	if (ret < 0)
		goto out;
	if (!nvmefs_cqe_ok(&req->cqe)) {
		status = nvmefs_cqe_status(&req->cqe);
		ret = nvmefs_error(-EPROTO, "%s on queue %u of %s at %s failed: %s (status %#x)",
				   send ? "AUTH_Send" : "AUTH_Receive", t->q->qid, ctrl->subnqn,
				   nvmefs_ctrl_where(ctrl), nvme_status_to_string(status, false),
				   status);
		goto out;
	}
	if (!send && !t->mr)
		memcpy(t->buf, req->data_slot, AUTH_BUF_SIZE);
out:
	nvmefs_req_put(req);
	return ret;
}

/* What the user can do about the controller's reason for giving up. */
static const char *failure_advice(uint8_t reason)
{
	switch (reason) {
	case NVMEFS_DHCHAP_FAILURE_NOT_USABLE:
	case NVMEFS_DHCHAP_FAILURE_HASH_UNUSABLE:
	case NVMEFS_DHCHAP_FAILURE_DHGROUP_UNUSABLE:
		return "check the target's dhchap_hash and dhchap_dhgroup for this host";
	case NVMEFS_DHCHAP_FAILURE_CONCAT_MISMATCH:
		return "the target and this host disagree on secure channel concatenation: "
		       "give --concat where the target wants it, or leave it out";
	case NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD:
	case NVMEFS_DHCHAP_FAILURE_INCORRECT_MESSAGE:
		return "the target could not read this host's message: report it to the nvmefs "
		       "developers with the target's make and version";
	}
	return "the target's log says why";
}

/*
 * A received message must be @msg of this transaction; the controller's
 * AUTH_Failure1 says why it gave up, which is the error.
 */
static int expect(struct txn *t, uint8_t msg, const char *stage)
{
	const struct nvmefs_dhchap_failure *f = (const void *)t->buf;
	struct nvmefs_ctrl *ctrl = t->ctrl;

	if (f->auth_type == NVMEFS_AUTH_COMMON_MESSAGES && f->auth_id == NVMEFS_DHCHAP_FAILURE1) {
		if (!t->asked)
			return nvmefs_error(-EACCES, "it ended DH-HMAC-CHAP %s: %s (reason %#x)",
					    stage, failure_name(f->rescode_exp), f->rescode_exp);
		if (f->rescode_exp == NVMEFS_DHCHAP_FAILURE_CONCAT_MISMATCH && t->concat)
			return nvmefs_error(-EPROTONOSUPPORT, "subsystem %s at %s does not do "
					    "secure channel concatenation (--concat; Linux's target "
					    "has it from 6.14 on): leave --concat out, and give "
					    "--tls-key if its port requires TLS", ctrl->subnqn,
					    nvmefs_ctrl_where(ctrl));
		if (f->rescode_exp == NVMEFS_DHCHAP_FAILURE_FAILED)
			return nvmefs_error(-EACCES, "subsystem %s at %s refused this host's "
					    "DH-HMAC-CHAP response (%s): check --dhchap-secret against "
					    "the target's key for host %s", ctrl->subnqn,
					    nvmefs_ctrl_where(ctrl), failure_name(f->rescode_exp),
					    ctrl->hostnqn);
		return nvmefs_error(-EPROTO, "subsystem %s at %s ended DH-HMAC-CHAP %s with host %s: "
				    "%s (reason %#x): %s", ctrl->subnqn, nvmefs_ctrl_where(ctrl),
				    stage, ctrl->hostnqn, failure_name(f->rescode_exp),
				    f->rescode_exp, failure_advice(f->rescode_exp));
	}
	if (f->auth_type != NVMEFS_AUTH_DHCHAP_MESSAGES || f->auth_id != msg ||
	    nvmefs_le16_to_cpu(f->tid) != t->tid) {
		t->failure = NVMEFS_DHCHAP_FAILURE_INCORRECT_MESSAGE;
		return nvmefs_error(-EPROTO, "subsystem %s at %s sent message %#x/%#x of transaction "
				    "%u %s, not the one expected: the target does not follow "
				    "DH-HMAC-CHAP, and this host cannot authenticate with it: "
				    "report it to the target's vendor", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl),
				    f->auth_type, f->auth_id, nvmefs_le16_to_cpu(f->tid), stage);
	}
	return 0;
}

static int send_negotiate(struct txn *t)
{
	struct nvmefs_dhchap_negotiate *n = (void *)t->buf;
	unsigned int i;

	memset(n, 0, sizeof(*n));
	n->auth_type = NVMEFS_AUTH_COMMON_MESSAGES;
	n->auth_id = NVMEFS_DHCHAP_NEGOTIATE;
	n->tid = nvmefs_cpu_to_le16(t->tid);
	n->napd = 1;
	n->desc.authid = NVMEFS_DHCHAP_AUTH_ID;
	n->desc.halen = 3;
	n->desc.idlist[0] = NVMEFS_AUTH_HASH_SHA256;
	n->desc.idlist[1] = NVMEFS_AUTH_HASH_SHA384;
	n->desc.idlist[2] = NVMEFS_AUTH_HASH_SHA512;
	n->desc.dhlen = 6;
	for (i = 0; i < 6; i++)
		n->desc.idlist[NVMEFS_DHCHAP_IDLIST_DH + i] = (uint8_t)(NVMEFS_AUTH_DHGROUP_NULL + i);
	if (t->concat) {
		/* The TLS PSK is made from the DH session key, and TLS has
		 * suites for SHA-256 and SHA-384 only. */
		n->sc_c = NVMEFS_AUTH_SECP_NEWTLSPSK;
		n->desc.halen = 2;
		n->desc.idlist[2] = 0;
		n->desc.dhlen = 5;
		for (i = 0; i < 6; i++)
			n->desc.idlist[NVMEFS_DHCHAP_IDLIST_DH + i] =
				i < 5 ? (uint8_t)(NVMEFS_AUTH_DHGROUP_NULL + 1 + i) : 0;
	}
	return exchange(t, true, sizeof(*n));
}

/* The challenge, every length checked against the buffer and the ids. */
static int take_challenge(struct txn *t)
{
	const struct nvmefs_dhchap_challenge *c = (const void *)t->buf;
	struct nvmefs_ctrl *ctrl = t->ctrl;
	size_t dhvlen = nvmefs_le16_to_cpu(c->dhvlen);
	const uint8_t *peer;
	int ret;

	ret = expect(t, NVMEFS_DHCHAP_CHALLENGE, "at the challenge");
	if (ret < 0)
		return ret;
	t->hash = c->hashid;
	t->hl = nvmefs_auth_hash_len(c->hashid);
	t->group = c->dhgid;
	if (!t->hl || c->hl != t->hl) {
		t->failure = NVMEFS_DHCHAP_FAILURE_HASH_UNUSABLE;
		return nvmefs_error(-EPROTO, "subsystem %s at %s chose hash %u with %u-byte "
				    "values, which DH-HMAC-CHAP does not define", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl), c->hashid, c->hl);
	}
	if (!nvmefs_auth_dhgroup_name(c->dhgid) ||
	    dhvlen != nvmefs_auth_dhgroup_len(c->dhgid) ||
	    sizeof(*c) + t->hl + dhvlen > AUTH_BUF_SIZE) {
		t->failure = c->dhgid == NVMEFS_AUTH_DHGROUP_NULL || nvmefs_auth_dhgroup_name(c->dhgid)
			? NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD
			: NVMEFS_DHCHAP_FAILURE_DHGROUP_UNUSABLE;
		return nvmefs_error(-EPROTO, "subsystem %s at %s chose DH group %u with a %zu-byte "
				    "value, which does not fit it", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl), c->dhgid, dhvlen);
	}
	t->s1 = nvmefs_le32_to_cpu(c->seqnum);
	memcpy(t->c1, t->buf + sizeof(*c), t->hl);
	if (t->group == NVMEFS_AUTH_DHGROUP_NULL)
		return 0;
	peer = t->buf + sizeof(*c) + t->hl;
	ret = nvmefs_auth_dh_new(t->group, &t->dh);
	if (ret == 0)
		ret = nvmefs_auth_dh_derive(t->dh, peer, dhvlen, &t->sess);
	if (ret < 0) {
		char what[512];

		t->failure = NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
		snprintf(what, sizeof(what), "DH-HMAC-CHAP with %s at %s, group %s", ctrl->subnqn,
			 nvmefs_ctrl_where(ctrl), nvmefs_auth_dhgroup_name(t->group));
		return with_cause(ret, what);
	}
	return 0;
}

static struct nvmefs_auth_exchange exchange_of(const struct txn *t)
{
	return (struct nvmefs_auth_exchange){
		.hash = t->hash, .tid = t->tid, .hostnqn = t->ctrl->hostnqn,
		.subsysnqn = t->ctrl->subnqn, .sess = t->sess,
		.sc_c = t->concat ? NVMEFS_AUTH_SECP_NEWTLSPSK : NVMEFS_AUTH_SECP_NOSC,
	};
}

static int send_reply(struct txn *t)
{
	struct nvmefs_auth *a = t->ctrl->auth;
	struct nvmefs_dhchap_reply *r = (void *)t->buf;
	struct nvmefs_auth_exchange x = exchange_of(t);
	size_t dhvlen = t->dh ? nvmefs_auth_dhgroup_len(t->group) : 0;
	uint8_t *rval = t->buf + sizeof(*r);
	int ret;

	memset(t->buf, 0, sizeof(*r) + 2 * t->hl + dhvlen);
	r->auth_type = NVMEFS_AUTH_DHCHAP_MESSAGES;
	r->auth_id = NVMEFS_DHCHAP_REPLY;
	r->tid = nvmefs_cpu_to_le16(t->tid);
	r->hl = (uint8_t)t->hl;
	r->dhvlen = nvmefs_cpu_to_le16((uint16_t)dhvlen);
	ret = nvmefs_auth_host_response(&x, a->host_key, t->c1, t->s1, rval);
	if (ret < 0)
		goto fail;
	if (a->ctrl_key || t->concat) {
		/* S2 must not be 0, which says "no challenge", but for secure
		 * concatenation, whose C2 only goes into the TLS PSK. */
		do {
			if ((!t->concat && RAND_bytes((unsigned char *)&t->s2, sizeof(t->s2)) != 1) ||
			    RAND_bytes(t->c2, (int)t->hl) != 1) {
				ret = nvmefs_error(-EIO, "OpenSSL has no random numbers for "
						   "DH-HMAC-CHAP");
				goto fail;
			}
		} while (!t->s2 && !t->concat);
		r->cvalid = 1;
		r->seqnum = nvmefs_cpu_to_le32(t->s2);
		memcpy(rval + t->hl, t->c2, t->hl);
	}
	if (dhvlen) {
		ret = nvmefs_auth_dh_public(t->dh, rval + 2 * t->hl, dhvlen);
		if (ret < 0)
			goto fail;
	}
	return exchange(t, true, (uint32_t)(sizeof(*r) + 2 * t->hl + dhvlen));
fail:
	t->failure = NVMEFS_DHCHAP_FAILURE_FAILED;
	return ret;
}

/* Success1, and the controller's proof when this host asked for one. */
static int take_success1(struct txn *t)
{
	const struct nvmefs_dhchap_success1 *s = (const void *)t->buf;
	struct nvmefs_auth_exchange x = exchange_of(t);
	struct nvmefs_ctrl *ctrl = t->ctrl;
	uint8_t r2[NVMEFS_AUTH_MAX_HASH_LEN];
	int ret;

	ret = expect(t, NVMEFS_DHCHAP_SUCCESS1, "after the reply");
	if (ret < 0)
		return ret;
	if (s->hl != t->hl) {
		t->failure = NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
		return nvmefs_error(-EPROTO, "subsystem %s at %s sent a %u-byte response where the "
				    "hash makes %zu", ctrl->subnqn, nvmefs_ctrl_where(ctrl), s->hl,
				    t->hl);
	}
	if (!ctrl->auth->ctrl_key)
		return 0;
	if (!s->rvalid) {
		t->failure = NVMEFS_DHCHAP_FAILURE_FAILED;
		return nvmefs_error(-EACCES, "the controller of %s at %s did not answer this host's "
				    "challenge: it does not prove it holds the controller secret; set "
				    "the target's dhchap_ctrl_key, or drop --dhchap-ctrl-secret",
				    ctrl->subnqn, nvmefs_ctrl_where(ctrl));
	}
	ret = nvmefs_auth_ctrl_response(&x, ctrl->auth->ctrl_key, t->c2, t->s2, r2);
	if (ret < 0) {
		t->failure = NVMEFS_DHCHAP_FAILURE_FAILED;
		return ret;
	}
	if (CRYPTO_memcmp(r2, t->buf + sizeof(*s), t->hl)) {
		t->failure = NVMEFS_DHCHAP_FAILURE_FAILED;
		OPENSSL_cleanse(r2, sizeof(r2));
		return nvmefs_error(-EACCES, "the controller of %s at %s failed to prove it holds the "
				    "controller secret: check --dhchap-ctrl-secret against the "
				    "target's dhchap_ctrl_key for host %s", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl), ctrl->hostnqn);
	}
	OPENSSL_cleanse(r2, sizeof(r2));
	return 0;
}

static int send_success2(struct txn *t)
{
	struct nvmefs_dhchap_success2 *s = (void *)t->buf;

	memset(s, 0, sizeof(*s));
	s->auth_type = NVMEFS_AUTH_DHCHAP_MESSAGES;
	s->auth_id = NVMEFS_DHCHAP_SUCCESS2;
	s->tid = nvmefs_cpu_to_le16(t->tid);
	return exchange(t, true, sizeof(*s));
}

/* Tell the controller why the host gave up; its own failure stays the error. */
static void send_failure2(struct txn *t)
{
	struct nvmefs_dhchap_failure *f = (void *)t->buf;
	char saved[1024];

	snprintf(saved, sizeof(saved), "%s", nvmefs_errmsg());
	memset(f, 0, sizeof(*f));
	f->auth_type = NVMEFS_AUTH_COMMON_MESSAGES;
	f->auth_id = NVMEFS_DHCHAP_FAILURE2;
	f->tid = nvmefs_cpu_to_le16(t->tid);
	f->rescode = NVMEFS_DHCHAP_RESCODE_FAILED;
	f->rescode_exp = t->failure;
	exchange(t, true, sizeof(*f));
	nvmefs_set_error("%s", saved);
}

/*
 * Linux's target answers a wrong response with AUTH_Failure1 and at once
 * tears the controller down, which often ends the queue before the answer
 * is read: a queue lost right after the reply is that refusal.
 */
static int dropped_after_reply(struct nvmefs_ctrl *ctrl)
{
	char cause[512];

	snprintf(cause, sizeof(cause), "%s", nvmefs_errmsg());
	return nvmefs_error(-EACCES, "subsystem %s at %s ended the connection instead of "
			    "accepting this host's DH-HMAC-CHAP response (%s): most likely it "
			    "holds another secret for host %s; check --dhchap-secret", ctrl->subnqn,
			    nvmefs_ctrl_where(ctrl), cause, ctrl->hostnqn);
}

/*
 * A target without secure concatenation (Linux's before 6.14) answers a
 * Negotiate that asks for it with AUTH_Failure1 and tears the controller
 * down at once, as it does a wrong response (dropped_after_reply()): a
 * queue lost right then is that refusal.
 */
static int dropped_at_concat(struct nvmefs_ctrl *ctrl)
{
	char cause[512];

	snprintf(cause, sizeof(cause), "%s", nvmefs_errmsg());
	return nvmefs_error(-EPROTONOSUPPORT, "subsystem %s at %s ended the connection when this "
			    "host asked for secure channel concatenation (%s): most likely it does "
			    "not do secure channel concatenation (--concat; Linux's target has it "
			    "from 6.14 on): leave --concat out, and give --tls-key if its port "
			    "requires TLS", ctrl->subnqn, nvmefs_ctrl_where(ctrl), cause);
}

/* Secure concatenation's TLS PSK from this exchange, which the admin
 * queue's next connection and the I/O queues' present; as nvmet makes the
 * same one on its side, nothing goes on the wire. */
static int concat_psk(struct txn *t)
{
	struct nvmefs_ctrl *ctrl = t->ctrl;
	struct nvmefs_tls_psk *psk;
	int ret;

	if (!t->sess)
		return nvmefs_error(-EPROTO, "subsystem %s at %s authenticated this host without a "
				    "DH exchange, which secure concatenation (--concat) needs: set "
				    "dhchap_dhgroup for host %s on the target", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl), ctrl->hostnqn);
	ret = nvmefs_tls_psk_generated(t->hash, t->sess, t->c1, t->c2, t->hl, ctrl->hostnqn,
				       ctrl->subnqn, &psk);
	if (ret < 0)
		return ret;
	nvmefs_tls_psk_free(ctrl->tls_psk);
	ctrl->tls_psk = psk;
	return 0;
}

/* @asked: the controller asked for it; if not, its refusals are explained
 * by authenticate_unasked(). */
static int authenticate(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q, bool asked)
{
	struct nvmefs_auth *a = ctrl->auth;
	uint8_t slot[AUTH_BUF_SIZE] __attribute__((aligned(8)));
	struct txn t = { .ctrl = ctrl, .q = q, .buf = slot, .asked = asked,
			 .concat = ctrl->concat && q->qid == 0 && !ctrl->tls_psk };
	int ret;

	pthread_mutex_lock(&a->lock);
	t.tid = a->next_tid++;
	ret = txn_buffer(&t);
	if (ret == 0) {
		ret = send_negotiate(&t);
		if (ret == 0)
			ret = exchange(&t, false, 0);
		if (ret < 0 && ret != -EPROTO && t.concat)
			ret = dropped_at_concat(ctrl);
	}
	if (ret == 0)
		ret = take_challenge(&t);
	if (ret == 0)
		ret = send_reply(&t);
	if (ret == 0) {
		ret = exchange(&t, false, 0);
		if (ret < 0 && ret != -EPROTO && t.asked)
			ret = dropped_after_reply(ctrl);
	}
	if (ret == 0)
		ret = take_success1(&t);
	if (ret == 0 && a->ctrl_key)
		ret = send_success2(&t);
	if (ret == 0 && t.concat)
		ret = concat_psk(&t);
	if (ret < 0 && t.failure)
		send_failure2(&t);
	nvmefs_auth_dh_free(t.dh);
	nvmefs_auth_key_free(t.sess);
	OPENSSL_cleanse(t.buf, AUTH_BUF_SIZE);
	OPENSSL_cleanse(&t, sizeof(t));
	pthread_mutex_unlock(&a->lock);
	return ret;
}

/*
 * A controller secret is there to make the controller prove itself: one
 * that does not ask for authentication is asked by the host (which the
 * protocol allows; SPDK does the same), else anything that answers on the
 * target's address would be trusted with the data.
 */
static int authenticate_unasked(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q)
{
	char cause[512];
	int ret = authenticate(ctrl, q, false);

	if (ret == 0)
		return 0;
	snprintf(cause, sizeof(cause), "%s", nvmefs_errmsg());
	return nvmefs_error(-EACCES, "subsystem %s at %s did not ask this host to authenticate, "
			    "and it could not be authenticated with the controller secret "
			    "(--dhchap-ctrl-secret), so it is not trusted (%s): give the target "
			    "dhchap_key and dhchap_ctrl_key for host %s, or drop "
			    "--dhchap-ctrl-secret", ctrl->subnqn, nvmefs_ctrl_where(ctrl), cause,
			    ctrl->hostnqn);
}

int nvmefs_auth_connected(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q,
			  const struct nvmefs_cqe *cqe)
{
	uint16_t authreq = nvmefs_connect_rsp_authreq(cqe);

	if ((authreq & NVMEFS_CONNECT_AUTHREQ_ASCR) && !ctrl->concat)
		return nvmefs_error(-EPROTONOSUPPORT, "subsystem %s at %s requires a secure channel "
				    "by secure concatenation (TLS keyed by DH-HMAC-CHAP): give "
				    "--concat with --dhchap-secret", ctrl->subnqn,
				    nvmefs_ctrl_where(ctrl));
	if (ctrl->concat && q->qid == 0 && !ctrl->tls_psk &&
	    !(authreq & (NVMEFS_CONNECT_AUTHREQ_ATR | NVMEFS_CONNECT_AUTHREQ_ASCR)))
		return nvmefs_error(-EACCES, "subsystem %s at %s did not ask this host to "
				    "authenticate, which secure concatenation (--concat) needs to make "
				    "its TLS key: give the target a dhchap_key for host %s",
				    ctrl->subnqn, nvmefs_ctrl_where(ctrl), ctrl->hostnqn);
	if (!(authreq & (NVMEFS_CONNECT_AUTHREQ_ATR | NVMEFS_CONNECT_AUTHREQ_ASCR)))
		return ctrl->auth && ctrl->auth->ctrl_key ? authenticate_unasked(ctrl, q) : 0;
	if (!ctrl->auth)
		return nvmefs_error(-EACCES, "subsystem %s at %s requires in-band authentication "
				    "(DH-HMAC-CHAP): give this host's secret with --dhchap-secret "
				    "or --dhchap-secret-file", ctrl->subnqn, nvmefs_ctrl_where(ctrl));
	return authenticate(ctrl, q, true);
}
