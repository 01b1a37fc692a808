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
#include <string.h>

#include "connect_opts.h"
#include "error.h"
#include "fabrics.h"
#include "transport.h"
#include "transport_ops.h"
#include "auth.h"

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
 * The interface NVMe/TCP's sockets are bound to: one this machine has.  Over
 * RDMA the kernel's nvme-rdma takes no host_iface (the device follows the
 * source address), and neither does this library.
 */
static int check_iface(const char *iface, const char *trtype)
{
	size_t len = strlen(iface);

	if (strcmp(trtype, "tcp"))
		return nvmefs_error(-EINVAL, "a host interface binds NVMe/TCP connections only: over "
				    "RDMA the device follows the host address; give -w with an "
				    "address of that interface instead of -f");
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
		ret = check_iface(opts->host_iface, opts->trtype);
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
}

int nvmefs_connect_opts_take(const struct nvmefs_connect_opts *in,
			     struct nvmefs_connect_opts *out,
			     const struct nvmefs_transport_ops **ops)
{
	size_t size = in->size;
	int ret;

	if (size < NVMEFS_CONNECT_OPTS_SIZE_0_2)
		return nvmefs_error(-EINVAL, "connect options of %zu bytes, fewer than any version "
				    "has: fill them with nvmefs_connect_opts_init()", size);
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
	/* libnvme's nvmf_get_default_trsvcid(): NVMe/TCP has a discovery port
	 * of its own; RDMA's discovery controllers listen where its I/O
	 * controllers do. */
	if (!out->trsvcid)
		out->trsvcid = !strcmp(out->trtype, "tcp") &&
			       (!out->subnqn || !strcmp(out->subnqn, NVME_DISC_SUBSYS_NAME))
			       ? NVMEFS_TCP_DISCOVERY_TRSVCID : NVMEFS_DEFAULT_TRSVCID;
	return check_taken(out);
}

int nvmefs_connect_opts_check(const struct nvmefs_connect_opts *opts)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts taken;

	return nvmefs_connect_opts_take(opts, &taken, &ops);
}

NVMEFS_SYMVER(nvmefs_connect_opts_init_0_2, "nvmefs_connect_opts_init@@NVMEFS_0.2");
