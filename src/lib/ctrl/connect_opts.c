/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct nvmefs_connect_opts across versions: its defaults, and a caller's
 * copy taken in as this library's own, whatever size the caller was built
 * with (as the kernel's copy_struct_from_user() does).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "connect_opts.h"
#include "host_id.h"
#include "../base/error.h"
#include "../transport/transport.h"
#include "../types/transport_ops.h"

/*
 * Whether @addr can name a host: an IPv4 or IPv6 literal (with a zone,
 * fe80::1%eth0), or a host name, letters, digits, '-' and '_' in labels of
 * at most 63 between dots.  All digits and dots is a mistyped IPv4 address,
 * not a name; a colon, a mistyped IPv6 one.
 */
static bool addr_well_formed(const char *addr)
{
	unsigned char buf[sizeof(struct in6_addr)];
	char v6[INET6_ADDRSTRLEN];
	size_t zone = strcspn(addr, "%"), label = 0;
	bool digits_only = true;

	if (inet_pton(AF_INET, addr, buf) == 1)
		return true;
	if (zone < sizeof(v6) && addr[zone] == '%' && addr[zone + 1]) {
		memcpy(v6, addr, zone);
		v6[zone] = '\0';
		return inet_pton(AF_INET6, v6, buf) == 1;
	}
	if (strchr(addr, ':'))
		return inet_pton(AF_INET6, addr, buf) == 1;
	if (!*addr || strlen(addr) > 253 || addr[0] == '.')
		return false;
	for (const char *c = addr; *c; c++) {
		if (*c == '.') {
			if (!label)
				return false;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return false;
		if (!isdigit((unsigned char)*c))
			digits_only = false;
		if (++label > 63)
			return false;
	}
	return !digits_only;
}

static int check_addr(const char *addr, const char *what, const char *fix)
{
	/* Not echoed: a control byte would reach the terminal. */
	for (const char *c = addr; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			return nvmefs_error(-EINVAL, "the %s holds a byte (0x%02x) that is not printable "
					    "ASCII: fix %s", what, (unsigned char)*c, fix);
	if (!addr_well_formed(addr))
		return nvmefs_error(-EINVAL, "the %s '%s' is not an IP address or a host name: fix %s",
				    what, addr, fix);
	return 0;
}

/*
 * The options not every transport takes (NVMEFS_OPT_*): what each is called
 * in the refusal, whether a caller gave it, and what to do instead.  Over
 * RDMA the kernel's nvme-rdma takes no host_iface (the device follows the
 * source address), and neither does this library.
 */
static const struct {
	unsigned int opt;
	const char *name;
	const char *fix;
} transport_opts[] = {
	{ NVMEFS_OPT_RKEY_PER_IO, "per-I/O remote keys (--rkey-per-io, rkey_per_io)",
	  "leave them out" },
	{ NVMEFS_OPT_HDR_DIGEST, "header digests (-g/--hdr-digest, hdr_digest)", "leave them out" },
	{ NVMEFS_OPT_DATA_DIGEST, "data digests (-G/--data-digest, data_digest)", "leave them out" },
	{ NVMEFS_OPT_HOST_IFACE, "a host interface (-f/--host-iface, host_iface)",
	  "give -w with an address of that interface instead of -f" },
	{ NVMEFS_OPT_TOS, "a type of service (-T/--tos, tos)", "leave it out" },
	{ NVMEFS_OPT_TLS, "TLS (--tls, --tls-key, tls_key, --concat)", "leave it out" },
};

#define NR_TRANSPORT_OPTS (sizeof(transport_opts) / sizeof(transport_opts[0]))

static bool opt_given(const struct nvmefs_connect_opts *opts, unsigned int opt)
{
	switch (opt) {
	case NVMEFS_OPT_RKEY_PER_IO:
		return opts->rkey_per_io >= 0;
	case NVMEFS_OPT_HDR_DIGEST:
		return opts->hdr_digest;
	case NVMEFS_OPT_DATA_DIGEST:
		return opts->data_digest;
	case NVMEFS_OPT_HOST_IFACE:
		return opts->host_iface != NULL;
	case NVMEFS_OPT_TOS:
		return opts->tos >= 0;
	case NVMEFS_OPT_TLS:
		return opts->tls_key != NULL || opts->tls_concat;
	}
	return false;
}

/* To nvmefs_connect_opts_init_0_2()'s default. */
static void opt_reset(struct nvmefs_connect_opts *opts, unsigned int opt)
{
	switch (opt) {
	case NVMEFS_OPT_RKEY_PER_IO:
		opts->rkey_per_io = -1;
		break;
	case NVMEFS_OPT_HDR_DIGEST:
		opts->hdr_digest = 0;
		break;
	case NVMEFS_OPT_DATA_DIGEST:
		opts->data_digest = 0;
		break;
	case NVMEFS_OPT_HOST_IFACE:
		opts->host_iface = NULL;
		break;
	case NVMEFS_OPT_TOS:
		opts->tos = -1;
		break;
	case NVMEFS_OPT_TLS:
		opts->tls_key = NULL;
		opts->tls_concat = 0;
		break;
	}
}

/* As Linux's nvmf_check_allowed_opts(): what @ops does not take is refused,
 * naming the transports that do. */
static int check_allowed(const struct nvmefs_connect_opts *opts,
			 const struct nvmefs_transport_ops *ops)
{
	char takers[64] = "";
	const char *name;

	for (size_t i = 0; i < NR_TRANSPORT_OPTS; i++) {
		unsigned int opt = transport_opts[i].opt;

		if ((ops->allowed_opts & opt) || !opt_given(opts, opt))
			continue;
		for (unsigned int t = 0; (name = nvmefs_transport_name(t)); t++)
			if (nvmefs_transport_named(name)->allowed_opts & opt)
				snprintf(takers + strlen(takers), sizeof(takers) - strlen(takers),
					 "%s'%s'", takers[0] ? " and " : "", name);
		return nvmefs_error(-EINVAL, "%s: transport '%s' does not take this option, only %s: "
				    "%s", transport_opts[i].name, ops->name, takers,
				    transport_opts[i].fix);
	}
	return 0;
}

static int size_check(size_t size)
{
	if (size < NVMEFS_CONNECT_OPTS_SIZE_0_2)
		return nvmefs_error(-EINVAL, "connect options of %zu bytes, fewer than any version "
				    "has: fill them with nvmefs_connect_opts_init()", size);
	return 0;
}

int nvmefs_connect_opts_fit(struct nvmefs_connect_opts *opts)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts ours;
	unsigned int dropped = 0;
	size_t size = opts->size;
	int ret = size_check(size);

	if (ret < 0)
		return ret;
	/* Only the caller's @size bytes are there: the fields past them, of a
	 * newer header, are left alone, and those of ours past them are not
	 * the caller's to have given. */
	if (size > sizeof(ours))
		size = sizeof(ours);
	nvmefs_connect_opts_init_0_2(&ours);
	memcpy(&ours, opts, size);
	ops = nvmefs_transport_named(ours.trtype);
	if (!ops)
		return nvmefs_transport_find(ours.trtype, &ops);
	for (size_t i = 0; i < NR_TRANSPORT_OPTS; i++) {
		unsigned int opt = transport_opts[i].opt;

		if (ops->allowed_opts & opt)
			continue;
		if (opt_given(&ours, opt))
			dropped |= opt;
		opt_reset(&ours, opt);
	}
	memcpy(opts, &ours, size);
	return (int)dropped;
}

/* The interface NVMe/TCP's sockets are bound to: one this machine has. */
static int check_iface(const char *iface)
{
	size_t len = strlen(iface);

	for (size_t i = 0; i < len; i++)
		if (iface[i] <= 0x20 || iface[i] >= 0x7f || iface[i] == '/')
			return nvmefs_error(-EINVAL, "the host interface name holds a byte (0x%02x) "
					    "no interface name has: fix -f", (unsigned char)iface[i]);
	if (!len || len >= IF_NAMESIZE)
		return nvmefs_error(-EINVAL, "the host interface name '%s' is not 1 to %d characters "
				    "long: fix -f", iface, IF_NAMESIZE - 1);
	if (!if_nametoindex(iface))
		return nvmefs_error(-EINVAL, "this machine has no network interface '%s': fix -f "
				    "('ip link' lists them)", iface);
	return 0;
}

/* The TLS PSK's form and the identity version; the key is never quoted. */
static int check_tls(const struct nvmefs_connect_opts *opts)
{
	struct nvmefs_tls_key_info info;
	int ret;

	if (opts->tls_identity != 0 && opts->tls_identity != 1)
		return nvmefs_error(-EINVAL, "TLS PSK identity version %d: give 0 or 1 "
				    "(--tls-identity)", opts->tls_identity);
	ret = nvmefs_tls_key_check(opts->tls_key, &info);
	if (ret < 0)
		return nvmefs_error(ret, "the TLS key (--tls-key): %s", nvmefs_errmsg());
	return 0;
}

/* Secure concatenation makes its TLS PSK from DH-HMAC-CHAP with the
 * controller's challenge alone (the host's sequence number is 0, so the
 * controller proves nothing), as the Linux host does it. */
static int check_concat(const struct nvmefs_connect_opts *opts)
{
	if (!opts->dhchap_secret)
		return nvmefs_error(-EINVAL, "secure concatenation (--concat) generates its TLS key "
				    "by DH-HMAC-CHAP: give this host's secret with --dhchap-secret or "
				    "--dhchap-secret-file");
	if (opts->tls_key)
		return nvmefs_error(-EINVAL, "secure concatenation (--concat) generates its own TLS "
				    "key: leave --tls-key out, or --concat");
	if (opts->dhchap_ctrl_secret)
		return nvmefs_error(-EINVAL, "with secure concatenation (--concat) the controller is "
				    "not asked to prove it holds a secret, as with the Linux host: "
				    "leave --dhchap-ctrl-secret out");
	return 0;
}

/* What a connect would refuse anyway, found before it looks for a device. */
static int check_taken(const struct nvmefs_connect_opts *opts)
{
	int ret = 0;

	if (opts->traddr && opts->traddr[0])
		ret = check_addr(opts->traddr, "target address", "-a");
	if (ret == 0 && opts->host_traddr)
		ret = check_addr(opts->host_traddr, "host address", "-w");
	if (ret == 0 && opts->subnqn)
		ret = nvmefs_nqn_check(opts->subnqn, "subsystem", "-n");
	if (ret == 0 && opts->hostnqn)
		ret = nvmefs_nqn_check(opts->hostnqn, "host", "-q");
	if (ret == 0)
		ret = nvmefs_auth_check(opts->dhchap_secret, opts->dhchap_ctrl_secret);
	if (ret == 0 && opts->tos > 255)
		ret = nvmefs_error(-EINVAL, "a type of service of %d: give 0 to 255 (-T)", opts->tos);
	if (ret == 0 && opts->host_iface)
		ret = check_iface(opts->host_iface);
	if (ret == 0 && opts->tls_key)
		ret = check_tls(opts);
	if (ret == 0 && opts->tls_concat)
		ret = check_concat(opts);
	return ret;
}

void nvmefs_connect_opts_init_0_2(struct nvmefs_connect_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
	opts->timeout_ms = NVMEFS_DEFAULT_TIMEOUT_MS;
	opts->kato_ms = -1;
	opts->reconnect_delay_s = NVMEFS_DEFAULT_RECONNECT_DELAY_S;
	opts->ctrl_loss_tmo_s = NVMEFS_DEFAULT_CTRL_LOSS_TMO_S;
	opts->fast_io_fail_tmo_s = -1;
	opts->rkey_per_io = -1;
	opts->tos = -1;
	opts->tls_identity = 1;
}

int nvmefs_connect_opts_take(const struct nvmefs_connect_opts *in,
			     struct nvmefs_connect_opts *out,
			     const struct nvmefs_transport_ops **ops)
{
	const struct nvmefs_transport_ops *described;
	size_t size = in->size;
	int ret;

	ret = size_check(size);
	if (ret < 0)
		return ret;
	/* A caller built against a newer header may have set options this
	 * library cannot honour: only zeros (their defaults) are taken. */
	for (size_t i = sizeof(*out); i < size; i++)
		if (((const unsigned char *)in)[i])
			return nvmefs_error(-E2BIG, "the connect options set fields this library "
					    "(version %s) does not know: run with the library "
					    "the program was built against", NVMEFS_VERSION);
	nvmefs_connect_opts_init_0_2(out);
	memcpy(out, in, size < sizeof(*out) ? size : sizeof(*out));
	out->size = sizeof(*out);
	ret = nvmefs_transport_find(out->trtype, ops);
	if (ret < 0)
		return ret;
	/* Ours, not the caller's string, which need not outlive the call. */
	out->trtype = nvmefs_transport_name((unsigned int)ret);
	described = nvmefs_transport_named(out->trtype);
	/* libnvme's nvmf_get_default_trsvcid(): a transport may have a
	 * discovery port of its own (NVMe/TCP's 8009). */
	if (!out->trsvcid)
		out->trsvcid = !out->subnqn || !strcmp(out->subnqn, NVME_DISC_SUBSYS_NAME)
			       ? described->discovery_trsvcid : described->trsvcid;
	ret = check_allowed(out, described);
	return ret ? ret : check_taken(out);
}

int nvmefs_connect_opts_check(const struct nvmefs_connect_opts *opts)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts taken;

	return nvmefs_connect_opts_take(opts, &taken, &ops);
}

NVMEFS_SYMVER(nvmefs_connect_opts_init_0_2, "nvmefs_connect_opts_init@@NVMEFS_0.2");
