/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of DH-HMAC-CHAP on a queue (auth.c) against a scripted
 * controller: the messages' layout, the host's response checked by the
 * controller's side of the computation, the controller's proof checked by
 * the host, and every way the exchange can go wrong, each with its own
 * error and the AUTH_Failure2 that tells the controller why.  The
 * cryptography itself has known-answer tests in check_auth_crypto.c; here
 * it plays the controller.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvme/types.h>
#include <nvmefs/wire_auth.h>

#include "fake_transport.h"
#include "test_util.h"
#include "ctrl/auth_crypto.h"
#include "lifecycle/ctrl.h"
#include "types/ctrl_types.h"

#define SUBNQN "nqn.2024-01.io.example:subsys1"
/* Made by 'nvme gen-dhchap-key -m 1' (SHA-256 transformed) and '-m 0'. */
#define HOST_SECRET "DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqa:"
#define CTRL_SECRET "DHHC-1:00:2u+6aUn5+Cifmx3l87ETY6Xr3p0E/ClCO5CyWmYNsLoL2NyH:"
#define CNTLID 7
#define ATR (1u << 17)
/* CC as the library enables: EN, IOSQES 6, IOCQES 4 (fake_transport.c). */
#define CC_ENABLED 0x00460001u

/* What the controller does wrong, if anything. */
enum misdeed {
	HONEST,
	WRONG_TID,		/* the challenge names another transaction */
	UNKNOWN_HASH,		/* the challenge picks hash 9 */
	REFUSE_REPLY,		/* AUTH_Failure1 instead of Success1 */
	WRONG_PROOF,		/* Success1 with a wrong R2 */
	NO_PROOF,		/* Success1 without R2 though the host asked */
};

struct ctl {
	unsigned int hash, group;
	enum misdeed misdeed;
	struct fake_step *negotiate, *reply;
	struct nvmefs_auth_key *host_key, *ctrl_key;
	struct nvmefs_auth_dh *dh;
	uint16_t tid;
	uint32_t s1;
	uint8_t c1[NVMEFS_AUTH_MAX_HASH_LEN];
	bool r1_checked;
	uint8_t refuse_reason;	/* REFUSE_REPLY's reason; 0: authentication failed */
	bool concat;		/* the host asks for secure channel concatenation */
	uint8_t c2[NVMEFS_AUTH_MAX_HASH_LEN];	/* the host's challenge */
};

static struct ctl ctl;

static void setup(void)
{
	fake_setup();
	memset(&ctl, 0, sizeof(ctl));
	ck_assert_int_eq(nvmefs_auth_key_parse(HOST_SECRET, &ctl.host_key), 0);
	ck_assert_int_eq(nvmefs_auth_key_parse(CTRL_SECRET, &ctl.ctrl_key), 0);
}

static void teardown(void)
{
	fake_teardown();
	nvmefs_auth_key_free(ctl.host_key);
	nvmefs_auth_key_free(ctl.ctrl_key);
	nvmefs_auth_dh_free(ctl.dh);
}

/* The host's Negotiate, then the challenge made for its transaction. */
static void on_challenge(struct fake_step *s, void *arg)
{
	const uint8_t *n = ctl.negotiate->captured;
	size_t hl = nvmefs_auth_hash_len(ctl.hash), dhlen = nvmefs_auth_dhgroup_len(ctl.group);
	uint8_t msg[16 + 64 + 1024] = { 0 };
	struct nvmefs_dhchap_challenge *c = (void *)msg;

	(void)arg;
	/* Negotiate: common message 0, one DH-HMAC-CHAP descriptor offering
	 * SHA-256/384/512 and every group, as Linux sends it. */
	ck_assert_uint_eq(ctl.negotiate->captured_len, 72);
	ck_assert_uint_eq(n[0], NVMEFS_AUTH_COMMON_MESSAGES);
	ck_assert_uint_eq(n[1], NVMEFS_DHCHAP_NEGOTIATE);
	ck_assert_uint_eq(n[7], 1);	/* NAPD */
	ck_assert_uint_eq(n[8], NVMEFS_DHCHAP_AUTH_ID);
	if (ctl.concat) {
		/* SC_C NEWTLSPSK (02h, as Linux's), the hashes TLS has a suite
		 * for and every group but the null one. */
		ck_assert_uint_eq(n[6], 2);
		ck_assert_uint_eq(n[10], 2);
		ck_assert_uint_eq(n[11], 5);
		for (unsigned int i = 0; i < 2; i++)
			ck_assert_uint_eq(n[12 + i], i + 1);
		for (unsigned int i = 0; i < 5; i++)
			ck_assert_uint_eq(n[12 + NVMEFS_DHCHAP_IDLIST_DH + i], i + 1);
	} else {
		ck_assert_uint_eq(n[6], 0);	/* SC_C */
		ck_assert_uint_eq(n[10], 3);
		ck_assert_uint_eq(n[11], 6);
		for (unsigned int i = 0; i < 3; i++)
			ck_assert_uint_eq(n[12 + i], i + 1);
		for (unsigned int i = 0; i < 6; i++)
			ck_assert_uint_eq(n[12 + NVMEFS_DHCHAP_IDLIST_DH + i], i);
	}
	ctl.tid = le16_at(n + 4);

	c->auth_type = NVMEFS_AUTH_DHCHAP_MESSAGES;
	c->auth_id = NVMEFS_DHCHAP_CHALLENGE;
	c->tid = nvmefs_cpu_to_le16(ctl.misdeed == WRONG_TID ? (uint16_t)(ctl.tid + 1) : ctl.tid);
	c->hl = (uint8_t)hl;
	c->hashid = (uint8_t)(ctl.misdeed == UNKNOWN_HASH ? 9 : ctl.hash);
	c->dhgid = (uint8_t)ctl.group;
	c->dhvlen = nvmefs_cpu_to_le16((uint16_t)dhlen);
	ctl.s1 = 0x01020304;
	c->seqnum = nvmefs_cpu_to_le32(ctl.s1);
	for (size_t i = 0; i < hl; i++)
		ctl.c1[i] = (uint8_t)(0xa0 + i);
	memcpy(msg + sizeof(*c), ctl.c1, hl);
	if (dhlen) {
		ck_assert_int_eq(nvmefs_auth_dh_new(ctl.group, &ctl.dh), 0);
		ck_assert_int_eq(nvmefs_auth_dh_public(ctl.dh, msg + sizeof(*c) + hl, dhlen), 0);
	}
	fake_step_data(s, msg, sizeof(*c) + hl + dhlen);
}

/* The host's Reply, checked as the controller checks it, then Success1
 * (or what the misdeed makes of it). */
static void on_success1(struct fake_step *s, void *arg)
{
	const uint8_t *r = ctl.reply->captured;
	size_t hl = nvmefs_auth_hash_len(ctl.hash), dhlen = nvmefs_auth_dhgroup_len(ctl.group);
	struct nvmefs_auth_exchange x = {
		.hash = ctl.hash, .tid = ctl.tid, .hostnqn = FAKE_HOSTNQN, .subsysnqn = SUBNQN,
		.sc_c = ctl.concat ? 2 : 0,
	};
	uint8_t want[NVMEFS_AUTH_MAX_HASH_LEN], msg[16 + 64] = { 0 };
	struct nvmefs_dhchap_success1 *ok = (void *)msg;
	struct nvmefs_dhchap_failure *no = (void *)msg;
	struct nvmefs_auth_key *sess = NULL;
	bool cvalid;

	(void)arg;
	ck_assert_uint_eq(ctl.reply->captured_len, 16 + 2 * hl + dhlen);
	ck_assert_uint_eq(r[0], NVMEFS_AUTH_DHCHAP_MESSAGES);
	ck_assert_uint_eq(r[1], NVMEFS_DHCHAP_REPLY);
	ck_assert_uint_eq(le16_at(r + 4), ctl.tid);
	ck_assert_uint_eq(r[6], hl);
	ck_assert_uint_eq(le16_at(r + 10), dhlen);
	cvalid = r[8];
	/* A challenge has a sequence number, and no challenge none; secure
	 * concatenation's challenge, which only goes into the TLS PSK, has
	 * sequence number 0 (nvmet then asks no proof of itself). */
	if (ctl.concat) {
		ck_assert(cvalid && le32_at(r + 12) == 0);
		memcpy(ctl.c2, r + 16 + hl, hl);
	} else {
		ck_assert(cvalid ? le32_at(r + 12) != 0 : le32_at(r + 12) == 0);
	}
	if (dhlen) {
		ck_assert_int_eq(nvmefs_auth_dh_derive(ctl.dh, r + 16 + 2 * hl, dhlen, &sess), 0);
		x.sess = sess;
	}
	ck_assert_int_eq(nvmefs_auth_host_response(&x, ctl.host_key, ctl.c1, ctl.s1, want), 0);
	ck_assert_mem_eq(r + 16, want, hl);
	ctl.r1_checked = true;

	if (ctl.misdeed == REFUSE_REPLY) {
		no->auth_type = NVMEFS_AUTH_COMMON_MESSAGES;
		no->auth_id = NVMEFS_DHCHAP_FAILURE1;
		no->tid = nvmefs_cpu_to_le16(ctl.tid);
		no->rescode = NVMEFS_DHCHAP_RESCODE_FAILED;
		no->rescode_exp = ctl.refuse_reason ? ctl.refuse_reason : NVMEFS_DHCHAP_FAILURE_FAILED;
		fake_step_data(s, msg, sizeof(*no));
		nvmefs_auth_key_free(sess);
		return;
	}
	ok->auth_type = NVMEFS_AUTH_DHCHAP_MESSAGES;
	ok->auth_id = NVMEFS_DHCHAP_SUCCESS1;
	ok->tid = nvmefs_cpu_to_le16(ctl.tid);
	ok->hl = (uint8_t)hl;
	if (cvalid && !ctl.concat && ctl.misdeed != NO_PROOF) {
		ok->rvalid = 1;
		ck_assert_int_eq(nvmefs_auth_ctrl_response(&x, ctl.ctrl_key, r + 16 + hl,
							   le32_at(r + 12), msg + 16), 0);
		if (ctl.misdeed == WRONG_PROOF)
			msg[16] ^= 1;
	}
	fake_step_data(s, msg, sizeof(*ok) + hl);
	nvmefs_auth_key_free(sess);
}

static struct fake_step *expect_auth(uint8_t fctype)
{
	struct fake_step *s = fake_expect_fabrics(fctype);

	/* SECP E9h, SPSP1 = SPSP0 = 1 (CDW10 bits 31:8). */
	s->match |= FAKE_M_CDW10;
	s->cdw10 = 0xe9010100;
	return s;
}

static void check_failure2(const struct fake_step *s, uint8_t exp)
{
	ck_assert_uint_eq(s->captured_len, 8);
	ck_assert_uint_eq(s->captured[0], NVMEFS_AUTH_COMMON_MESSAGES);
	ck_assert_uint_eq(s->captured[1], NVMEFS_DHCHAP_FAILURE2);
	ck_assert_uint_eq(le16_at(s->captured + 4), ctl.tid);
	ck_assert_uint_eq(s->captured[6], NVMEFS_DHCHAP_RESCODE_FAILED);
	ck_assert_uint_eq(s->captured[7], exp);
}

/* The exchange on the admin queue up to the controller's second answer. */
static void script_auth(void)
{
	struct fake_step *s;

	ctl.negotiate = expect_auth(nvme_fabrics_type_auth_send);
	s = expect_auth(nvme_fabrics_type_auth_receive);
	s->on_match = on_challenge;
	if (ctl.misdeed == WRONG_TID || ctl.misdeed == UNKNOWN_HASH)
		return;
	ctl.reply = expect_auth(nvme_fabrics_type_auth_send);
	s = expect_auth(nvme_fabrics_type_auth_receive);
	s->on_match = on_success1;
}

/* The rest of a connect after the admin queue's Connect, as
 * fake_script_connect() has it. */
static void script_enable(void)
{
	struct nvme_id_ctrl id;

	fake_expect_prop_get(NVME_REG_CAP, 0x00000000010003ffULL);
	fake_expect_prop_get(NVME_REG_VS, 0x20000);
	fake_expect_prop_set(NVME_REG_CC, CC_ENABLED);
	fake_expect_prop_get(NVME_REG_CSTS, 1);
	fake_id_ctrl(&id, 8);
	fake_expect_identify(NVME_IDENTIFY_CNS_CTRL, 0, &id, sizeof(id));
}

static int connect(bool bidirectional, struct nvmefs_ctrl **ctrl)
{
	struct nvmefs_connect_opts opts;

	fake_opts(&opts, "192.0.2.10", 0);
	opts.subnqn = SUBNQN;
	opts.dhchap_secret = HOST_SECRET;
	if (bidirectional)
		opts.dhchap_ctrl_secret = CTRL_SECRET;
	return nvmefs_ctrl_connect_with(&fake_ops, &opts, ctrl);
}

/* Every hash with every group, host only and both ways. */
START_TEST(test_auth_admin_queue)
{
	static const unsigned int groups[] = { 0, 1, 5 };
	struct nvmefs_ctrl *ctrl = NULL;
	bool bidirectional = _i & 1;

	ctl.hash = 1 + (unsigned int)(_i / 2) % 3;
	ctl.group = groups[_i / 6];
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, ATR | CNTLID);
	script_auth();
	if (bidirectional)
		expect_auth(nvme_fabrics_type_auth_send);	/* Success2 */
	script_enable();
	ck_assert_msg(connect(bidirectional, &ctrl) == 0, "%s", nvmefs_errmsg());
	ck_assert(ctl.r1_checked);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* A connect with --concat and this host's secret, over the stream transport
 * (concatenation is NVMe/TCP's). */
static void concat_opts(struct nvmefs_connect_opts *opts)
{
	fake_opts(opts, "192.0.2.10", 0);
	opts->trtype = "stream";
	opts->subnqn = SUBNQN;
	opts->dhchap_secret = HOST_SECRET;
	opts->tls_concat = 1;
}

/*
 * Secure channel concatenation: the admin queue's exchange asks for it and
 * gives the host's challenge with sequence number 0; the connection that
 * made the key carries nothing more, the admin queue connects again (with
 * TLS under it, which the stream transport would run) and is not asked to
 * authenticate there; the TLS PSK is the one the vectors of check_tls_key
 * derive, from this exchange's session key and challenges.
 */
START_TEST(test_auth_concat)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	ctl.concat = true;
	ctl.hash = 1;
	ctl.group = 1;
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, ATR | CNTLID);
	script_auth();
	fake_expect_destroy();
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, CNTLID);
	script_enable();
	concat_opts(&opts);
	ck_assert_msg(nvmefs_ctrl_connect_with(&fake_stream_ops, &opts, &ctrl) == 0, "%s",
		      nvmefs_errmsg());
	ck_assert(ctl.r1_checked);
	ck_assert_str_eq(nvmefs_ctrl_tls_suite(ctrl), "TLS_AES_128_GCM_SHA256");
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

static void drop_queue(struct fake_step *s, void *arg)
{
	(void)s;
	(void)arg;
	fake_break(0);
}

/*
 * A target without secure concatenation (Linux's before 6.14) answers its
 * SC_C with AUTH_Failure1 and tears the controller down at once, which
 * often ends the queue before the answer is read: a queue lost right after
 * a Negotiate that asked for it is that refusal, and is told as such.
 */
START_TEST(test_auth_concat_dropped)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	struct fake_step *s;

	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, ATR | CNTLID);
	s = expect_auth(nvme_fabrics_type_auth_send);
	s->on_match = drop_queue;
	fake_expect_destroy();
	concat_opts(&opts);
	ck_assert_int_eq(nvmefs_ctrl_connect_with(&fake_stream_ops, &opts, &ctrl), -EPROTONOSUPPORT);
	assert_msg_has("does not do secure channel concatenation");
	assert_msg_has("leave --concat out");
}
END_TEST

/* --concat wants a host secret and no TLS key or controller secret. */
START_TEST(test_auth_concat_options)
{
	struct nvmefs_connect_opts opts;

	concat_opts(&opts);
	opts.dhchap_secret = NULL;
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("--dhchap-secret");
	opts.dhchap_secret = HOST_SECRET;
	opts.dhchap_ctrl_secret = CTRL_SECRET;
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("leave --dhchap-ctrl-secret out");
}
END_TEST

/* A Success2 that is 16 bytes of this transaction. */
START_TEST(test_auth_success2)
{
	struct nvmefs_ctrl *ctrl = NULL;
	struct fake_step *s2;

	ctl.hash = NVMEFS_AUTH_HASH_SHA384;
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, ATR | CNTLID);
	script_auth();
	s2 = expect_auth(nvme_fabrics_type_auth_send);
	script_enable();
	ck_assert_msg(connect(true, &ctrl) == 0, "%s", nvmefs_errmsg());
	ck_assert_uint_eq(s2->captured_len, 16);
	ck_assert_uint_eq(s2->captured[0], NVMEFS_AUTH_DHCHAP_MESSAGES);
	ck_assert_uint_eq(s2->captured[1], NVMEFS_DHCHAP_SUCCESS2);
	ck_assert_uint_eq(le16_at(s2->captured + 4), ctl.tid);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* @misdeed ends the connect with @err, a message with @needle, and (@exp
 * not 0) an AUTH_Failure2 saying @exp. */
static void auth_fails(enum misdeed misdeed, bool bidirectional, int err, const char *needle,
		       uint8_t exp)
{
	struct nvmefs_ctrl *ctrl = NULL;
	struct fake_step *f2 = NULL;

	ctl.hash = NVMEFS_AUTH_HASH_SHA256;
	ctl.group = NVMEFS_AUTH_DHGROUP_2048;
	ctl.misdeed = misdeed;
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, ATR | CNTLID);
	script_auth();
	/* AUTH_Failure2, when the host is the one that gives up. */
	if (exp)
		f2 = expect_auth(nvme_fabrics_type_auth_send);
	fake_expect_destroy();
	ck_assert_int_eq(connect(bidirectional, &ctrl), err);
	ck_assert_ptr_null(ctrl);
	assert_msg_has(needle);
	if (f2)
		check_failure2(f2, exp);
}

START_TEST(test_auth_refused)
{
	auth_fails(REFUSE_REPLY, false, -EACCES, "refused this host's DH-HMAC-CHAP response", 0);
	assert_msg_has("--dhchap-secret");
}
END_TEST

/* Each reason the controller can give for ending the exchange gets advice
 * that fits it: a hash or group setting, TLS, or a message it could not read. */
START_TEST(test_auth_refused_reason_advice)
{
	static const struct {
		uint8_t reason;
		const char *advice, *not;
	} cases[] = {
		{ NVMEFS_DHCHAP_FAILURE_HASH_UNUSABLE, "dhchap_hash and dhchap_dhgroup", "TLS" },
		{ NVMEFS_DHCHAP_FAILURE_DHGROUP_UNUSABLE, "dhchap_hash and dhchap_dhgroup", "TLS" },
		{ NVMEFS_DHCHAP_FAILURE_NOT_USABLE, "dhchap_hash and dhchap_dhgroup", "TLS" },
		{ NVMEFS_DHCHAP_FAILURE_CONCAT_MISMATCH, "give --concat where the target wants it",
		  "dhchap_hash" },
		{ NVMEFS_DHCHAP_FAILURE_INCORRECT_PAYLOAD, "could not read this host's message",
		  "dhchap_hash" },
		{ NVMEFS_DHCHAP_FAILURE_INCORRECT_MESSAGE, "could not read this host's message",
		  "dhchap_hash" },
	};

	ctl.refuse_reason = cases[_i].reason;
	auth_fails(REFUSE_REPLY, false, -EPROTO, "ended DH-HMAC-CHAP", 0);
	assert_msg_has(cases[_i].advice);
	assert_msg_has("with host " FAKE_HOSTNQN);
	ck_assert_ptr_null(strstr(nvmefs_errmsg(), cases[_i].not));
}
END_TEST

START_TEST(test_auth_wrong_proof)
{
	auth_fails(WRONG_PROOF, true, -EACCES, "failed to prove it holds the controller secret",
		   NVMEFS_DHCHAP_FAILURE_FAILED);
	assert_msg_has("--dhchap-ctrl-secret");
}
END_TEST

START_TEST(test_auth_no_proof)
{
	auth_fails(NO_PROOF, true, -EACCES, "did not answer this host's challenge",
		   NVMEFS_DHCHAP_FAILURE_FAILED);
}
END_TEST

START_TEST(test_auth_wrong_tid)
{
	auth_fails(WRONG_TID, false, -EPROTO, "not the one expected",
		   NVMEFS_DHCHAP_FAILURE_INCORRECT_MESSAGE);
	/* What failed and why is not all: the line says what to do. */
	assert_msg_has("report it to the target's vendor");
}
END_TEST

START_TEST(test_auth_unknown_hash)
{
	auth_fails(UNKNOWN_HASH, false, -EPROTO, "chose hash 9",
		   NVMEFS_DHCHAP_FAILURE_HASH_UNUSABLE);
}
END_TEST

/* No secret, a bad one, a controller secret alone: refused before any
 * message, with the reason. */
START_TEST(test_auth_bad_secrets)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	fake_opts(&opts, "192.0.2.10", 0);
	opts.subnqn = SUBNQN;
	opts.dhchap_ctrl_secret = CTRL_SECRET;
	ck_assert_int_eq(nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl), -EINVAL);
	assert_msg_has("give --dhchap-secret too");
	opts.dhchap_ctrl_secret = NULL;
	opts.dhchap_secret = "DHHC-1:01:7ny5zJroP/X5xJUYEnnrTFIbmGjIiEmlf8HfBbK1/Ja/luqb:";
	ck_assert_int_eq(nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl), -EBADMSG);
	assert_msg_has("the host secret (--dhchap-secret)");
	assert_msg_has("CRC");
	/* The message never quotes the secret. */
	ck_assert_ptr_null(strstr(nvmefs_errmsg(), "7ny5zJ"));
	ck_assert_uint_eq(fake_stats.creates, 0);
}
END_TEST

/*
 * What creating one I/O queue sends, up to its Connect (returned), for a
 * controller with one namespace; @o is set for one queue.
 */
static struct fake_step *script_io_queue(struct nvmefs_io_opts *o)
{
	static const struct fake_ns ns = { .nsid = 1, .nsze = 1 << 20, .lba_shift = 9 };
	uint32_t list[NVMEFS_NS_LIST_LEN] = { 0 };
	struct nvme_id_ns id;
	struct fake_step *c;

	nvmefs_io_opts_init(o);
	o->nr_queues = 1;
	/* CNS 06h for a 2.0 controller: refused, no limits. */
	fake_step_status(fake_expect_identify(NVME_IDENTIFY_CNS_CSI_CTRL, 0, NULL, 0), 0,
			 NVME_SC_INVALID_FIELD, true);
	fake_expect_set_nr_queues(1, 0);
	list[0] = nvmefs_cpu_to_le32(ns.nsid);
	fake_expect_identify(NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list));
	fake_id_ns(&id, ns.nsze, ns.lba_shift);
	fake_expect_identify(NVME_IDENTIFY_CNS_NS, ns.nsid, &id, sizeof(id));
	fake_expect_identify(NVME_IDENTIFY_CNS_NS_DESC_LIST, ns.nsid, NULL, 0);
	c = fake_expect_create(NULL, NULL);
	c->qid = 1;
	return fake_expect_io_connect(1, (uint16_t)(o->queue_size - 1), CNTLID);
}

/* A host secret alone asks nothing of a controller that does not ask. */
START_TEST(test_auth_host_secret_not_asked)
{
	struct nvmefs_ctrl *ctrl = NULL;

	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, CNTLID);
	script_enable();
	ck_assert_msg(connect(false, &ctrl) == 0, "%s", nvmefs_errmsg());
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/*
 * The controller did not ask and cannot take part: it rejects AUTH_Send
 * (_i 0), or ends the exchange with AUTH_Failure1 as nvmet does for a host
 * it holds no key for (_i 1).  Either way it is refused, with a message that
 * names authentication and the controller secret.
 */
START_TEST(test_auth_host_initiated_refused)
{
	struct nvmefs_ctrl *ctrl = NULL;
	struct fake_step *s;

	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, CNTLID);
	s = expect_auth(nvme_fabrics_type_auth_send);
	if (_i == 0) {
		fake_step_status(s, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE, true);
	} else {
		uint8_t msg[16] = { 0 };
		struct nvmefs_dhchap_failure *no = (void *)msg;

		no->auth_type = NVMEFS_AUTH_COMMON_MESSAGES;
		no->auth_id = NVMEFS_DHCHAP_FAILURE1;
		no->rescode = NVMEFS_DHCHAP_RESCODE_FAILED;
		no->rescode_exp = NVMEFS_DHCHAP_FAILURE_FAILED;
		fake_step_data(expect_auth(nvme_fabrics_type_auth_receive), msg, sizeof(*no));
	}
	fake_expect_destroy();
	ck_assert_int_eq(connect(true, &ctrl), -EACCES);
	ck_assert_ptr_null(ctrl);
	assert_msg_has("did not ask this host to authenticate");
	assert_msg_has("--dhchap-ctrl-secret");
	ck_assert_ptr_null(strchr(nvmefs_errmsg(), '\n'));
}
END_TEST

/*
 * A controller secret makes the host authenticate the controller even when
 * its Connect does not ask (no AUTHREQ.ATR): a machine that answers on the
 * target's address and simply skips authentication must not be trusted.
 * So is each I/O queue.
 */
START_TEST(test_auth_host_initiated)
{
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts o;

	ctl.hash = NVMEFS_AUTH_HASH_SHA512;
	ctl.group = NVMEFS_AUTH_DHGROUP_NULL;
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, CNTLID);
	script_auth();
	expect_auth(nvme_fabrics_type_auth_send);	/* Success2 */
	script_enable();
	ck_assert_msg(connect(true, &ctrl) == 0, "%s", nvmefs_errmsg());
	ck_assert(ctl.r1_checked);

	script_io_queue(&o);
	ctl.r1_checked = false;
	script_auth();
	expect_auth(nvme_fabrics_type_auth_send);	/* Success2 */
	ck_assert_msg(nvmefs_ctrl_create_io_queues(ctrl, &o) == 0, "%s", nvmefs_errmsg());
	ck_assert(ctl.r1_checked);
	ck_assert_uint_eq(ctl.negotiate->seen_qid, 1);
	fake_expect_destroy();
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/*
 * An I/O queue is authenticated too, through the controller's own
 * registered buffer: its data slots are too small for a message.
 */
START_TEST(test_auth_io_queue)
{
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts o;
	struct fake_step *c, *first;

	ctl.hash = NVMEFS_AUTH_HASH_SHA512;
	ctl.group = NVMEFS_AUTH_DHGROUP_NULL;
	fake_expect_create("192.0.2.10", "4420");
	fake_expect_connect(31, 5000, ATR | CNTLID);
	script_auth();
	script_enable();
	ck_assert_msg(connect(false, &ctrl) == 0, "%s", nvmefs_errmsg());

	c = script_io_queue(&o);
	c->dw0 = ATR;
	memset(&ctl.c1, 0, sizeof(ctl.c1));
	ctl.r1_checked = false;
	first = ctl.negotiate;
	script_auth();
	ck_assert_ptr_ne(first, ctl.negotiate);
	ck_assert_msg(nvmefs_ctrl_create_io_queues(ctrl, &o) == 0, "%s", nvmefs_errmsg());
	ck_assert(ctl.r1_checked);
	ck_assert_uint_eq(ctl.negotiate->seen_qid, 1);
	ck_assert_ptr_nonnull(ctl.negotiate->seen_mr);
	fake_expect_destroy();
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

static Suite *auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("exchange");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_auth_admin_queue, 0, 18);
	tcase_add_test(tc, test_auth_success2);
	tcase_add_test(tc, test_auth_concat);
	tcase_add_test(tc, test_auth_concat_options);
	tcase_add_test(tc, test_auth_concat_dropped);
	tcase_add_test(tc, test_auth_io_queue);
	tcase_add_test(tc, test_auth_host_initiated);
	tcase_add_test(tc, test_auth_host_secret_not_asked);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_auth_refused);
	tcase_add_loop_test(tc, test_auth_refused_reason_advice, 0, 6);
	tcase_add_test(tc, test_auth_wrong_proof);
	tcase_add_test(tc, test_auth_no_proof);
	tcase_add_test(tc, test_auth_wrong_tid);
	tcase_add_test(tc, test_auth_unknown_hash);
	tcase_add_test(tc, test_auth_bad_secrets);
	tcase_add_loop_test(tc, test_auth_host_initiated_refused, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(auth_suite(), CK_ENV);
}
