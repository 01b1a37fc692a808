/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct nvmefs_connect_opts across versions: a program built against 0.1
 * (its layout copied here, not taken from the library) keeps working; one
 * built against a later, longer struct is served as far as it can be; the
 * transport is chosen by name, and unknown ones are refused.  What the
 * library decides from its transport table is tested over the unit tests'
 * table (tests/lib/fake_table.c: "keyed" as RDMA, "stream" as NVMe/TCP, with
 * ports of their own); check_transport_table tests the library's rows.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvme/types.h>

#include "fake_transport.h"
#include "test_util.h"
#include "ctrl/connect_opts.h"
#include "types/ctrl_types.h"
#include "transport/transport.h"
#include "types/transport_ops.h"
#include "abi/abi_0_1.h"

/* The 0.1 layout, as a program built then has it. */
struct nvmefs_connect_opts_0_1 {
	const char *traddr;
	const char *trsvcid;
	const char *host_traddr;
	const char *subnqn;
	const char *hostnqn;
	const char *hostid;
	unsigned int timeout_ms;
	int kato_ms;
	unsigned int admin_queue_size;
	int reconnect_delay_s;
	int ctrl_loss_tmo_s;
	int fast_io_fail_tmo_s;
	const char *dhchap_secret;
	const char *dhchap_ctrl_secret;
	int rkey_per_io;
};

static const struct fake_target target = { .cntlid = 1, .vs = 0x10400 };

/* 0.1's init fills the 0.1 struct with 0.1's defaults and not a byte past
 * it (the sanitized build also catches a write past the allocation). */
START_TEST(test_init_0_1_stays_in_old_size)
{
	size_t size = sizeof(struct nvmefs_connect_opts_0_1);
	unsigned char *buf = malloc(size + 16);
	struct nvmefs_connect_opts_0_1 *old = (struct nvmefs_connect_opts_0_1 *)buf;

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0xa5, size + 16);
	nvmefs_connect_opts_init_0_1(old);
	for (size_t i = size; i < size + 16; i++)
		ck_assert_uint_eq(buf[i], 0xa5);
	ck_assert_ptr_null(old->traddr);
	ck_assert_ptr_null(old->dhchap_ctrl_secret);
	ck_assert_uint_eq(old->timeout_ms, NVMEFS_DEFAULT_TIMEOUT_MS);
	ck_assert_int_eq(old->kato_ms, -1);
	ck_assert_int_eq(old->reconnect_delay_s, NVMEFS_DEFAULT_RECONNECT_DELAY_S);
	ck_assert_int_eq(old->ctrl_loss_tmo_s, NVMEFS_DEFAULT_CTRL_LOSS_TMO_S);
	ck_assert_int_eq(old->fast_io_fail_tmo_s, -1);
	ck_assert_int_eq(old->rkey_per_io, -1);
	free(buf);
}
END_TEST

/* A 0.1 program's struct, of exactly the old size, connects with what it
 * set: its address, port, host NQN and keep-alive reach the wire. */
START_TEST(test_connect_0_1_old_layout)
{
	struct nvmefs_connect_opts_0_1 *old = malloc(sizeof(*old));
	struct nvmefs_ctrl *ctrl = NULL;
	struct fake_step *conn;

	ck_assert_ptr_nonnull(old);
	nvmefs_connect_opts_init_0_1(old);
	old->traddr = "192.0.2.30";
	old->trsvcid = "4421";
	old->hostnqn = FAKE_HOSTNQN;
	old->hostid = FAKE_HOSTID;
	old->ctrl_loss_tmo_s = 0;
	old->kato_ms = 3000;
	conn = fake_script_connect_kato("192.0.2.30", "4421", &target, 3000);
	ck_assert_int_eq(nvmefs_ctrl_connect_0_1(old, &ctrl), 0);
	ck_assert_ptr_nonnull(conn);
	ck_assert_str_eq(nvmefs_ctrl_traddr(ctrl), "192.0.2.30");
	ck_assert_str_eq(nvmefs_ctrl_trsvcid(ctrl), "4421");
	ck_assert_str_eq(nvmefs_ctrl_hostnqn(ctrl), FAKE_HOSTNQN);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
	free(old);
}
END_TEST

/* A struct without a size (not filled by nvmefs_connect_opts_init()) or
 * smaller than any version's is refused before anything is connected. */
START_TEST(test_size_too_small_refused)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	fake_opts(&opts, "192.0.2.31", 0);
	opts.size = _i ? 0 : NVMEFS_CONNECT_OPTS_SIZE_0_2 - 1;
	ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), -EINVAL);
	ck_assert_ptr_null(ctrl);
	assert_msg_has("nvmefs_connect_opts_init()");
}
END_TEST

/* A program built against a later, longer struct: fields we do not know
 * left at zero (their defaults) connect; one set is refused. */
START_TEST(test_size_larger_zero_tail)
{
	struct {
		struct nvmefs_connect_opts opts;
		uint64_t later_field;
	} newer;
	struct nvmefs_ctrl *ctrl = NULL;

	memset(&newer, 0, sizeof(newer));
	fake_opts(&newer.opts, "192.0.2.32", 0);
	newer.opts.size = sizeof(newer);
	newer.later_field = _i;
	if (_i) {
		ck_assert_int_eq(nvmefs_ctrl_connect(&newer.opts, &ctrl), -E2BIG);
		ck_assert_ptr_null(ctrl);
		assert_msg_has("does not know");
		return;
	}
	fake_script_connect_kato("192.0.2.32", "4420", &target, 0);
	ck_assert_int_eq(nvmefs_ctrl_connect(&newer.opts, &ctrl), 0);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* trtype: NULL and the table's names connect, each over its own row;
 * anything else is refused in one line that names the transports there are. */
START_TEST(test_trtype)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	ck_assert_str_eq(nvmefs_transport_name(0), "keyed");
	ck_assert_str_eq(nvmefs_transport_name(1), "stream");
	ck_assert_ptr_null(nvmefs_transport_name(2));
	ck_assert_str_eq(nvmefs_transport_by_trtype(NVMF_TRTYPE_RDMA), "keyed");
	ck_assert_str_eq(nvmefs_transport_by_trtype(NVMF_TRTYPE_TCP), "stream");
	ck_assert_ptr_null(nvmefs_transport_by_trtype(NVMF_TRTYPE_FC));

	fake_opts(&opts, "192.0.2.33", 0);
	ck_assert_ptr_null(opts.trtype);
	opts.trtype = "fc";
	ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), -EPROTONOSUPPORT);
	ck_assert_ptr_null(ctrl);
	assert_msg_has("'fc' is not supported: give one of 'keyed', 'stream'");
	ck_assert_int_eq(nvmefs_discover(&opts, 0, NULL, NULL), -EPROTONOSUPPORT);

	opts.trtype = "stream";
	fake_script_connect_kato("192.0.2.33", FAKE_STREAM_DISCOVERY_TRSVCID, &target, 0);
	ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), 0);
	ck_assert_ptr_eq(ctrl->ops, &fake_stream_ops);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* The digests a 0.2 caller, whose struct ends at trtype, cannot have set:
 * off, whatever lies in memory past its struct. */
START_TEST(test_digests_past_a_0_2_struct_off)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts in, out;

	nvmefs_connect_opts_init(&in);
	in.traddr = "192.0.2.34";
	in.trtype = "stream";
	ck_assert_int_eq(in.hdr_digest, 0);
	ck_assert_int_eq(in.data_digest, 0);
	in.hdr_digest = in.data_digest = 1;
	ck_assert_int_eq(nvmefs_connect_opts_take(&in, &out, &ops), 0);
	ck_assert_int_eq(out.hdr_digest, 1);
	ck_assert_int_eq(out.data_digest, 1);
	in.size = NVMEFS_CONNECT_OPTS_SIZE_0_2;
	ck_assert_int_eq(nvmefs_connect_opts_take(&in, &out, &ops), 0);
	ck_assert_int_eq(out.hdr_digest, 0);
	ck_assert_int_eq(out.data_digest, 0);
}
END_TEST

/* Without a service id, discovery goes to the transport's discovery port
 * (NVMe/TCP's 8009, as nvme-cli's does; "stream"'s here), everything else
 * to its I/O port; one given stays. */
START_TEST(test_default_trsvcid)
{
	static const struct {
		const char *trtype, *subnqn, *trsvcid, *want;
	} cases[] = {
		{ "stream", NULL, NULL, FAKE_STREAM_DISCOVERY_TRSVCID },
		{ "stream", NVME_DISC_SUBSYS_NAME, NULL, FAKE_STREAM_DISCOVERY_TRSVCID },
		{ "stream", "nqn.2024-01.io.example:sub", NULL, FAKE_STREAM_TRSVCID },
		{ "keyed", NULL, NULL, "4420" },
		{ NULL, NULL, NULL, "4420" },
		{ "keyed", "nqn.2024-01.io.example:sub", NULL, "4420" },
		{ "stream", NULL, "4421", "4421" },
	};
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts in, out;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		nvmefs_connect_opts_init(&in);
		in.traddr = "192.0.2.35";
		in.trtype = cases[i].trtype;
		in.subnqn = cases[i].subnqn;
		in.trsvcid = cases[i].trsvcid;
		ck_assert_int_eq(nvmefs_connect_opts_take(&in, &out, &ops), 0);
		ck_assert_msg(out.trsvcid && !strcmp(out.trsvcid, cases[i].want),
			      "case %zu: service id %s, not %s", i,
			      out.trsvcid ? out.trsvcid : "none", cases[i].want);
	}
}
END_TEST

/* A library caller connecting to discovery without a service id reaches
 * the transport's discovery port, as nvme-cli does over TCP; the fake
 * refuses a connect to any other port. */
START_TEST(test_discovery_port_from_the_table)
{
	struct nvmefs_transport_info info = { .size = sizeof(info) };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	ck_assert_int_eq(nvmefs_transport_info("stream", &info), 0);
	ck_assert_str_eq(info.discovery_trsvcid, FAKE_STREAM_DISCOVERY_TRSVCID);
	fake_opts(&opts, "192.0.2.40", 0);
	opts.trtype = "stream";
	fake_script_connect_kato("192.0.2.40", info.discovery_trsvcid, &target, 0);
	ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), 0);
	ck_assert_str_eq(nvmefs_ctrl_trsvcid(ctrl), FAKE_STREAM_DISCOVERY_TRSVCID);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

/* Each transport describes itself as its row says: name, I/O and discovery
 * ports, the options it takes, whether it pins what is registered; an unknown one and a struct too small are
 * refused, and a caller's struct longer than ours keeps its tail. */
START_TEST(test_transport_info)
{
	static const struct transport_want cases[] = {
		{ NULL, "keyed", "4420", "4420", NVMEFS_OPT_RKEY_PER_IO | NVMEFS_OPT_TOS, 1 },
		{ "keyed", "keyed", "4420", "4420", NVMEFS_OPT_RKEY_PER_IO | NVMEFS_OPT_TOS, 1 },
		{ "stream", "stream", FAKE_STREAM_TRSVCID, FAKE_STREAM_DISCOVERY_TRSVCID,
		  NVMEFS_OPT_HDR_DIGEST | NVMEFS_OPT_DATA_DIGEST | NVMEFS_OPT_HOST_IFACE |
		  NVMEFS_OPT_TOS | NVMEFS_OPT_TLS, 0 },
	};
	struct {
		struct nvmefs_transport_info info;
		uint64_t newer;
	} longer;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_transport_info(&cases[i]);
	memset(&longer, 0xa5, sizeof(longer));
	longer.info.size = sizeof(longer);
	ck_assert_int_eq(nvmefs_transport_info("stream", &longer.info), 0);
	ck_assert_uint_eq(longer.info.size, sizeof(longer.info));
	ck_assert_uint_eq(longer.newer, 0xa5a5a5a5a5a5a5a5ull);
	longer.info.size = sizeof(size_t);
	ck_assert_int_eq(nvmefs_transport_info("stream", &longer.info), -EINVAL);
	assert_msg_has("set its size to sizeof(struct nvmefs_transport_info)");
	longer.info.size = sizeof(longer.info);
	ck_assert_int_eq(nvmefs_transport_info("fc", &longer.info), -EPROTONOSUPPORT);
	assert_msg_has("'fc' is not supported: give one of 'keyed', 'stream'");
}
END_TEST

/* An option the transport does not take is refused in one line naming it
 * and the transports that take it, by the check and by a connect (the fake
 * has nothing scripted); the same options over the transport that takes
 * them pass. */
START_TEST(test_transport_opts_refused)
{
	static const struct {
		const char *trtype;
		int rkey, hdgst, ddgst;
		const char *iface, *msg;
	} cases[] = {
		{ "stream", 1, 0, 0, NULL, "per-I/O remote keys (--rkey-per-io, rkey_per_io): "
		  "transport 'stream' does not take this option, only 'keyed': leave them out" },
		{ "stream", 0, 0, 0, NULL, "per-I/O remote keys" },
		{ "keyed", -1, 1, 0, NULL, "header digests (-g/--hdr-digest, hdr_digest): "
		  "transport 'keyed' does not take this option, only 'stream': leave them out" },
		{ NULL, -1, 0, 1, NULL, "data digests (-G/--data-digest, data_digest): transport "
		  "'keyed' does not take this option, only 'stream': leave them out" },
		{ "keyed", -1, 0, 0, "lo", "a host interface (-f/--host-iface, host_iface): "
		  "transport 'keyed' does not take this option, only 'stream': give -w with an "
		  "address of that interface instead of -f" },
	};
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_opts(&opts, "192.0.2.41", 0);
		opts.trtype = cases[i].trtype;
		opts.rkey_per_io = cases[i].rkey;
		opts.hdr_digest = cases[i].hdgst;
		opts.data_digest = cases[i].ddgst;
		opts.host_iface = cases[i].iface;
		opts.tos = 16;
		ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
		assert_msg_has(cases[i].msg);
		ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), -EINVAL);
		ck_assert_ptr_null(ctrl);
		assert_msg_has(cases[i].msg);
		/* Over the other transport, which takes it. */
		opts.trtype = cases[i].rkey >= 0 ? "keyed" : "stream";
		ck_assert_msg(nvmefs_connect_opts_check(&opts) == 0, "case %zu: %s", i,
			      nvmefs_errmsg());
	}
}
END_TEST

/* nvmefs_connect_opts_fit() leaves a path the options its transport takes,
 * the others at their defaults, and says which of those were given. */
START_TEST(test_connect_opts_fit)
{
	struct nvmefs_connect_opts opts;

	nvmefs_connect_opts_init(&opts);
	opts.traddr = "192.0.2.42";
	opts.rkey_per_io = 1;
	opts.hdr_digest = opts.data_digest = 1;
	opts.host_iface = "lo";
	opts.tos = 8;
	ck_assert_int_eq(nvmefs_connect_opts_fit(&opts), NVMEFS_OPT_HDR_DIGEST |
			 NVMEFS_OPT_DATA_DIGEST | NVMEFS_OPT_HOST_IFACE);
	ck_assert_int_eq(opts.rkey_per_io, 1);
	ck_assert_int_eq(opts.hdr_digest, 0);
	ck_assert_int_eq(opts.data_digest, 0);
	ck_assert_ptr_null(opts.host_iface);
	ck_assert_int_eq(opts.tos, 8);
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), 0);

	opts.host_iface = "lo";
	opts.hdr_digest = opts.data_digest = 1;
	opts.trtype = "stream";
	ck_assert_int_eq(nvmefs_connect_opts_fit(&opts), NVMEFS_OPT_RKEY_PER_IO);
	ck_assert_int_eq(opts.rkey_per_io, -1);
	ck_assert_int_eq(opts.hdr_digest, 1);
	ck_assert_int_eq(opts.data_digest, 1);
	ck_assert_str_eq(opts.host_iface, "lo");
	ck_assert_int_eq(opts.tos, 8);
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), 0);
	ck_assert_int_eq(nvmefs_connect_opts_fit(&opts), 0);

	opts.trtype = "fc";
	ck_assert_int_eq(nvmefs_connect_opts_fit(&opts), -EPROTONOSUPPORT);
}
END_TEST

/* A caller's struct of the first 0.2 size, which ends at trtype: fitted
 * within its size and not a byte past it (the sanitized build catches a
 * write past the allocation); one smaller than any version is refused. */
START_TEST(test_connect_opts_fit_old_size)
{
	/* Written through memcpy(): the compiler rightly refuses members of a
	 * struct it can see is not all there. */
	unsigned char *old = malloc(NVMEFS_CONNECT_OPTS_SIZE_0_2);
	struct nvmefs_connect_opts full;
	size_t size = NVMEFS_CONNECT_OPTS_SIZE_0_2;
	int rkey;

	ck_assert_ptr_nonnull(old);
	nvmefs_connect_opts_init(&full);
	full.size = size;
	full.traddr = "192.0.2.43";
	full.trtype = "stream";
	full.rkey_per_io = 0;
	memcpy(old, &full, size);
	ck_assert_int_eq(nvmefs_connect_opts_fit((struct nvmefs_connect_opts *)old),
			 NVMEFS_OPT_RKEY_PER_IO);
	memcpy(&rkey, old + offsetof(struct nvmefs_connect_opts, rkey_per_io), sizeof(rkey));
	ck_assert_int_eq(rkey, -1);
	/* Over the keyed transport, the fields past the struct that it does not
	 * take (the digests, the interface) are not there to look at or reset. */
	full.trtype = "keyed";
	full.rkey_per_io = 0;
	memcpy(old, &full, size);
	ck_assert_int_eq(nvmefs_connect_opts_fit((struct nvmefs_connect_opts *)old), 0);
	memcpy(&rkey, old + offsetof(struct nvmefs_connect_opts, rkey_per_io), sizeof(rkey));
	ck_assert_int_eq(rkey, 0);
	memcpy(&full, old, size);
	ck_assert_uint_eq(full.size, size);
	ck_assert_str_eq(full.trtype, "keyed");
	size--;
	memcpy(old, &size, sizeof(size));
	ck_assert_int_eq(nvmefs_connect_opts_fit((struct nvmefs_connect_opts *)old), -EINVAL);
	assert_msg_has("nvmefs_connect_opts_init()");
	free(old);
}
END_TEST

/* What a connect would refuse is refused before it: by nvmefs_connect_opts_check()
 * and by nvmefs_ctrl_connect() before the transport is touched (the fake has
 * nothing scripted, so a connect attempt would fail the teardown). */
START_TEST(test_check_before_connecting)
{
	static const char *const good_addrs[] = {
		"192.0.2.1", "2001:db8::1", "fe80::1%eth0", "target-1.example.com", "localhost",
		"storage_a",
	};
	static const char *const bad_addrs[] = {
		"192.168.1.300", "1.2.3", "fe80::1::2", "a..b", ".a", "a b", "host/1", "fe80::1%",
	};
	static const char key[] = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
	char long_nqn[230];
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	for (size_t i = 0; i < sizeof(good_addrs) / sizeof(good_addrs[0]); i++) {
		fake_opts(&opts, good_addrs[i], 0);
		ck_assert_msg(nvmefs_connect_opts_check(&opts) == 0, "%s refused: %s", good_addrs[i],
			      nvmefs_errmsg());
	}
	for (size_t i = 0; i < sizeof(bad_addrs) / sizeof(bad_addrs[0]); i++) {
		fake_opts(&opts, bad_addrs[i], 0);
		ck_assert_msg(nvmefs_connect_opts_check(&opts) == -EINVAL, "%s taken", bad_addrs[i]);
		assert_msg_has("is not an IP address or a host name: fix -a");
		ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), -EINVAL);
		ck_assert_int_eq(nvmefs_discover(&opts, 0, NULL, NULL), -EINVAL);
	}
	fake_opts(&opts, "192.0.2.36", 0);
	opts.host_traddr = "10.0.0.256";
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("the host address '10.0.0.256' is not an IP address or a host name: fix -w");

	memset(long_nqn, 'a', sizeof(long_nqn) - 1);
	memcpy(long_nqn, "nqn.", 4);
	long_nqn[224] = '\0';
	fake_opts(&opts, "192.0.2.36", 0);
	opts.subnqn = long_nqn;
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("the subsystem NQN is 224 characters long, more than the 223");
	long_nqn[223] = '\0';
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), 0);
	opts.subnqn = "subsys1";
	ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), -EINVAL);
	assert_msg_has("the subsystem NQN 'subsys1' is not an NQN: it does not start with \"nqn.\": fix -n");
	opts.subnqn = NULL;
	opts.hostnqn = "host1";
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("the host NQN 'host1' is not an NQN");

	fake_opts(&opts, "192.0.2.36", 0);
	opts.dhchap_ctrl_secret = key;
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("give --dhchap-secret too");
	opts.dhchap_secret = "DHHC-1:00:not*base64!:";
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), -EINVAL);
	assert_msg_has("the host secret (--dhchap-secret): DH-HMAC-CHAP secret: the key is not base64");
	opts.dhchap_secret = key;
	ck_assert_int_eq(nvmefs_connect_opts_check(&opts), 0);
	ck_assert_int_eq(nvmefs_dhchap_secret_check(key), 0);
	ck_assert_int_lt(nvmefs_dhchap_secret_check("DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:"), 0);
	assert_msg_has("CRC does not match");
}
END_TEST

/* nvme-cli's --tos, --host-iface and --disable-sqflow: defaults, what a
 * 0.2 struct without them gets, and what is refused before connecting. */
START_TEST(test_link_options)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts in, out;
	struct nvmefs_ctrl *ctrl = NULL;

	nvmefs_connect_opts_init(&in);
	ck_assert_int_eq(in.tos, -1);
	ck_assert_ptr_null(in.host_iface);
	ck_assert_int_eq(in.disable_sqflow, 0);
	in.traddr = "192.0.2.38";
	in.trtype = "stream";
	in.tos = 0x20;
	in.host_iface = "lo";
	in.disable_sqflow = 1;
	ck_assert_int_eq(nvmefs_connect_opts_take(&in, &out, &ops), 0);
	ck_assert_int_eq(out.tos, 0x20);
	ck_assert_str_eq(out.host_iface, "lo");
	ck_assert_int_eq(out.disable_sqflow, 1);
	in.size = NVMEFS_CONNECT_OPTS_SIZE_0_2;
	ck_assert_int_eq(nvmefs_connect_opts_take(&in, &out, &ops), 0);
	ck_assert_int_eq(out.tos, -1);
	ck_assert_ptr_null(out.host_iface);
	ck_assert_int_eq(out.disable_sqflow, 0);

	nvmefs_connect_opts_init(&in);
	in.traddr = "192.0.2.38";
	in.trtype = "stream";
	in.tos = 255;
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), 0);
	in.tos = 256;
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), -EINVAL);
	assert_msg_has("a type of service of 256: give 0 to 255 (-T)");
	in.tos = -1;
	in.host_iface = "nosuch0";
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), -EINVAL);
	assert_msg_has("this machine has no network interface 'nosuch0': fix -f");
	in.host_iface = "a/b";
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), -EINVAL);
	assert_msg_has("holds a byte (0x2f) no interface name has");
	in.host_iface = "";
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), -EINVAL);
	assert_msg_has("is not 1 to 15 characters long");
	in.host_iface = "interface-of-16c";
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), -EINVAL);
	assert_msg_has("is not 1 to 15 characters long");
	/* As the kernel's nvme-rdma, which takes no host_iface. */
	in.host_iface = "lo";
	in.trtype = "keyed";
	ck_assert_int_eq(nvmefs_connect_opts_check(&in), -EINVAL);
	assert_msg_has("a host interface (-f/--host-iface, host_iface): transport 'keyed' does not");
	ck_assert_int_eq(nvmefs_ctrl_connect(&in, &ctrl), -EINVAL);
	ck_assert_ptr_null(ctrl);
}
END_TEST

/* --disable-sqflow: CATTR bit 2 in Connect, as the kernel's nvmf_connect_cmd_prep()
 * sets it (the fake refuses any other CDW11). */
START_TEST(test_disable_sqflow_in_connect)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	struct fake_step *conn;

	fake_opts(&opts, "192.0.2.39", 0);
	opts.disable_sqflow = 1;
	conn = fake_script_connect_kato("192.0.2.39", "4420", &target, 0);
	conn->cdw11 |= (uint32_t)NVMEFS_CONNECT_CATTR_DISABLE_SQFLOW << 16;
	ck_assert_int_eq(nvmefs_ctrl_connect(&opts, &ctrl), 0);
	fake_script_disconnect();
	nvmefs_ctrl_disconnect(ctrl);
}
END_TEST

static Suite *connect_opts_suite(void)
{
	Suite *s = suite_create("connect_opts");
	TCase *tc = tcase_create("versions");

	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_add_test(tc, test_init_0_1_stays_in_old_size);
	tcase_add_test(tc, test_connect_0_1_old_layout);
	tcase_add_loop_test(tc, test_size_too_small_refused, 0, 2);
	tcase_add_loop_test(tc, test_size_larger_zero_tail, 0, 2);
	tcase_add_test(tc, test_trtype);
	tcase_add_test(tc, test_digests_past_a_0_2_struct_off);
	tcase_add_test(tc, test_default_trsvcid);
	tcase_add_test(tc, test_discovery_port_from_the_table);
	tcase_add_test(tc, test_transport_info);
	tcase_add_test(tc, test_transport_opts_refused);
	tcase_add_test(tc, test_connect_opts_fit);
	tcase_add_test(tc, test_connect_opts_fit_old_size);
	tcase_add_test(tc, test_check_before_connecting);
	tcase_add_test(tc, test_link_options);
	tcase_add_test(tc, test_disable_sqflow_in_connect);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(connect_opts_suite(), CK_ENV);
}
