/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Several paths to one subsystem: the options, and connecting them all. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>
#include <nvmefs/wire.h>

#include "paths.h"
#include "paths_log.h"
#include "../common/text.h"

void path_args_init(struct path_args *p)
{
	memset(p, 0, sizeof(*p));
	p->policy = NVMEFS_IOPOLICY_NUMA;
}

/* "ADDR", "ADDR:PORT", "[V6ADDR]:PORT", "[V6ADDR]" or a bare IPv6 address. */
static int split_path(const char *arg, char *addr, size_t addr_size, char *port, size_t port_size)
{
	const char *colon = strrchr(arg, ':'), *end;
	uint64_t v;
	size_t len;

	port[0] = '\0';
	if (arg[0] == '[') {
		end = strchr(arg, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		len = (size_t)(end - arg - 1);
		colon = end[1] ? end + 1 : NULL;
		arg++;
	} else if (colon && strchr(arg, ':') != colon) {
		/* More than one colon: an IPv6 address without a port. */
		len = strlen(arg);
		colon = NULL;
	} else {
		len = colon ? (size_t)(colon - arg) : strlen(arg);
	}
	if (!len || len >= addr_size)
		return -EINVAL;
	memcpy(addr, arg, len);
	addr[len] = '\0';
	if (colon) {
		if (parse_uint(colon + 1, 1, 65535, &v) || strlen(colon + 1) >= port_size)
			return -EINVAL;
		snprintf(port, port_size, "%s", colon + 1);
	}
	return 0;
}

/* A transport's name and a colon before the address: "tcp:10.0.0.2:4420".
 * No transport's name is a hexadecimal number, so an IPv6 address is never
 * taken for one. Returns the name (NULL: none given, -t's) and moves *@arg
 * past it. */
static const char *path_transport(const char **arg)
{
	const char *name;
	size_t len;

	for (unsigned int i = 0; (name = nvmefs_transport_name(i)); i++) {
		len = strlen(name);
		if (!strncmp(*arg, name, len) && (*arg)[len] == ':') {
			*arg += len + 1;
			return name;
		}
	}
	return NULL;
}

int path_args_option(struct path_args *p, const char *cmd, int opt, const char *arg,
		     bool *handled)
{
	const char *addr = arg;

	*handled = true;
	switch (opt) {
	case OPT_PATH:
		if (p->nr == NVMEFS_MAX_PATHS - 1)
			return usage_error(cmd, "--path: at most %d paths besides -a/-s",
					   NVMEFS_MAX_PATHS - 1);
		p->trtype[p->nr] = path_transport(&addr);
		if (split_path(addr, p->traddr[p->nr], sizeof(p->traddr[0]), p->trsvcid[p->nr],
			       sizeof(p->trsvcid[0])))
			return usage_error(cmd, "--path '%s' is not [TRTYPE:]TRADDR[:TRSVCID]: give an "
					   "address and maybe a port from 1 to 65535, like "
					   "10.0.0.2:4421, [fe80::1]:4421 or tcp:10.0.0.2:4420", arg);
		p->nr++;
		return EXIT_OK;
	case OPT_ALL_PATHS:
		p->all_paths = true;
		return EXIT_OK;
	case OPT_IOPOLICY:
		if (nvmefs_iopolicy_parse(arg, &p->policy))
			return usage_error(cmd, "--iopolicy: %s", nvmefs_errmsg());
		return EXIT_OK;
	}
	*handled = false;
	return EXIT_OK;
}

/* The options that not every transport takes, by their flags (-f aside:
 * connect_opts_fit_path() leaves it for the library to refuse). */
static const struct {
	unsigned int opt;
	const char *name;
} transport_flags[] = {
	{ NVMEFS_OPT_RKEY_PER_IO, "--rkey-per-io" },
	{ NVMEFS_OPT_HDR_DIGEST, "-g/--hdr-digest" },
	{ NVMEFS_OPT_DATA_DIGEST, "-G/--data-digest" },
	{ NVMEFS_OPT_TOS, "-T/--tos" },
	{ NVMEFS_OPT_TLS, "--tls/--tls-key" },
};

/* An option of @unused (NVMEFS_OPT_*), which no path's transport takes:
 * refused, naming the transports that do.  EXIT_OK if there is none. */
static int refuse_unused(const char *cmd, unsigned int unused)
{
	struct nvmefs_transport_info t = { .size = sizeof(t) };
	char takers[64] = "";
	const char *name;

	for (size_t i = 0; i < sizeof(transport_flags) / sizeof(transport_flags[0]); i++) {
		if (!(transport_flags[i].opt & unused))
			continue;
		for (unsigned int n = 0; (name = nvmefs_transport_name(n)); n++)
			if (nvmefs_transport_info(name, &t) == 0 &&
			    (t.allowed_opts & transport_flags[i].opt))
				snprintf(takers + strlen(takers), sizeof(takers) - strlen(takers),
					 "%s'%s'", takers[0] ? " or " : "", name);
		return usage_error(cmd, "%s: no path is over a transport that takes it (%s): leave "
				   "it out", transport_flags[i].name, takers);
	}
	return EXIT_OK;
}

int path_args_check(const struct path_args *p, const struct connect_args *conn,
		    const char *cmd)
{
	struct nvmefs_connect_opts addr, opts = conn->opts;
	/* With --all-paths, -a/-s's transport stands for the paths the log
	 * has, as they are not known yet. */
	unsigned int unused = connect_opts_fit_path(&opts);
	int ret;

	for (unsigned int i = 0; i < p->nr; i++) {
		/* The address alone first, so that the line names --path, not -a. */
		nvmefs_connect_opts_init(&addr);
		addr.traddr = p->traddr[i];
		if (nvmefs_connect_opts_check(&addr) == -EINVAL)
			return usage_error(cmd, "--path: the target address '%s' is not an IP "
					   "address or a host name: fix --path", p->traddr[i]);
		opts = conn->opts;
		opts.traddr = p->traddr[i];
		opts.trsvcid = p->trsvcid[i][0] ? p->trsvcid[i] : NULL;
		if (p->trtype[i])
			opts.trtype = p->trtype[i];
		unused &= connect_opts_fit_path(&opts);
		ret = connect_opts_checked(&opts, cmd, "--path: ");
		if (ret)
			return ret;
	}
	return refuse_unused(cmd, unused);
}

bool path_args_multipath(const struct path_args *p)
{
	return p->nr || p->all_paths;
}

/* Referrals are followed this deep, as 'nvme connect-all' follows them. */
#define ALL_PATHS_REFERRAL_DEPTH 4

struct found_paths {
	const char *subnqn;
	struct path_args *p;
	/* Records of the subsystem left out: a secure channel required (the
	 * first one's address kept for the message), with no key or over a
	 * transport without TLS; another transport. */
	unsigned int needs_tls, no_secure, no_transport;
	bool have_key;
	char tls_where[300];
};

/* Takes the subsystem's records from one discovery log (paths_log.h), each
 * path (transport, address, port) once, up to the most paths. */
static int take_records(const struct nvmefs_connect_opts *where,
			const struct nvmf_discovery_log *log, int depth, void *arg)
{
	struct found_paths *f = arg;
	struct path_args *p = f->p;
	char traddr[PATH_TRADDR_SIZE], trsvcid[PATH_TRSVCID_SIZE];
	const char *trtype = NULL;
	uint64_t n;

	(void)where;
	(void)depth;
	if (!log)
		return 0;
	n = le64toh(log->numrec);
	for (uint64_t i = 0; i < n && p->nr < NVMEFS_MAX_PATHS - 1; i++) {
		const struct nvmf_disc_log_entry *e = &log->entries[i];
		enum path_record kind = path_record_kind(e, f->subnqn, f->have_key, &trtype);
		unsigned int k;

		if (kind == PATH_RECORD_OTHER)
			continue;
		path_record_where(e, traddr, trsvcid);
		if (kind == PATH_RECORD_NEEDS_TLS || kind == PATH_RECORD_NO_SECURE_CHANNEL) {
			if (!f->needs_tls && !f->no_secure)
				text_where(f->tls_where, sizeof(f->tls_where), traddr, trsvcid);
			if (kind == PATH_RECORD_NEEDS_TLS)
				f->needs_tls++;
			else
				f->no_secure++;
			continue;
		}
		if (kind == PATH_RECORD_NO_TRANSPORT) {
			f->no_transport++;
			continue;
		}
		for (k = 0; k < p->nr && (strcmp(p->traddr[k], traddr) || strcmp(p->trsvcid[k], trsvcid) ||
					  strcmp(p->trtype[k], trtype));
		     k++)
			;
		if (k < p->nr)
			continue;
		snprintf(p->traddr[p->nr], sizeof(p->traddr[0]), "%s", traddr);
		snprintf(p->trsvcid[p->nr], sizeof(p->trsvcid[0]), "%s", trsvcid);
		p->trtype[p->nr] = trtype;
		p->plain[p->nr] = !nvmefs_disc_entry_tls(e);
		p->nr++;
	}
	return 0;
}

/* Every record of the subsystem that nvmefs can connect in the discovery
 * log at -a/-s (over TCP, 8009 without -s, as 'nvme connect-all') and the
 * logs it refers to. */
static int discover_paths(const struct connect_args *conn, const char *cmd, struct path_args *p)
{
	struct nvmefs_connect_opts disc = conn->opts;
	struct found_paths f = { .subnqn = conn->opts.subnqn, .p = p,
				 .have_key = conn->opts.tls_key != NULL };

	disc.subnqn = NULL;
	disc.kato_ms = -1;
	disc.dhchap_secret = disc.dhchap_ctrl_secret = NULL;
	if (!disc.trsvcid)
		disc.trsvcid = default_trsvcid(disc.trtype, true);
	p->nr = 0;
	if (nvmefs_discover(&disc, ALL_PATHS_REFERRAL_DEPTH, take_records, &f) < 0) {
		fprintf(stderr, "nvmefs %s: --all-paths: reading the discovery log failed: %s\n", cmd,
			nvmefs_errmsg());
		return EXIT_FAIL;
	}
	if (!p->nr && f.needs_tls) {
		fprintf(stderr, "nvmefs %s: --all-paths: every path to %s requires a secure channel "
			"(TLS; the first at %s): give its pre-shared key with --tls-key\n", cmd,
			conn->opts.subnqn, f.tls_where);
		return EXIT_FAIL;
	}
	if (!p->nr && f.no_secure) {
		fprintf(stderr, "nvmefs %s: --all-paths: every path to %s requires a secure channel "
			"(the first at %s), which nvmefs has only over NVMe/TCP (TLS): give a port "
			"that runs it, with -t tcp and --tls-key\n", cmd, conn->opts.subnqn,
			f.tls_where);
		return EXIT_FAIL;
	}
	if (!p->nr) {
		fprintf(stderr, "nvmefs %s: --all-paths: the discovery log at -a/-s lists no path to "
			"%s%s: check the NQN with 'nvmefs discover'\n", cmd, conn->opts.subnqn,
			f.no_transport ? " over a transport nvmefs has" : "");
		return EXIT_FAIL;
	}
	if (f.no_secure)
		fprintf(stderr, "nvmefs %s: --all-paths: %u path%s left out: %s a secure channel "
			"over a transport on which nvmefs has none (TLS is NVMe/TCP's)\n", cmd,
			f.no_secure, f.no_secure == 1 ? "" : "s",
			f.no_secure == 1 ? "it requires" : "they require");
	if (f.needs_tls)
		fprintf(stderr, "nvmefs %s: --all-paths: %u path%s left out (the first at %s): %s a "
			"secure channel (TLS); give its pre-shared key with --tls-key\n", cmd,
			f.needs_tls, f.needs_tls == 1 ? "" : "s", f.tls_where,
			f.needs_tls == 1 ? "it requires" : "they require");
	return EXIT_OK;
}

static int connect_one(const struct nvmefs_connect_opts *opts, const struct nvmefs_io_opts *io,
		       void (*setup)(struct nvmefs_ctrl *ctrl, void *arg), void *arg,
		       struct nvmefs_ctrl **ctrlp)
{
	struct nvmefs_ctrl *ctrl;
	int ret = nvmefs_ctrl_connect(opts, &ctrl);

	if (ret < 0)
		return ret;
	if (setup)
		setup(ctrl, arg);
	ret = nvmefs_ctrl_create_io_queues(ctrl, io);
	if (ret < 0) {
		nvmefs_ctrl_disconnect(ctrl);
		return ret;
	}
	*ctrlp = ctrl;
	return 0;
}

int paths_connect(struct connect_args *conn, const struct path_args *given,
		  const struct nvmefs_io_opts *io, const char *cmd,
		  void (*setup)(struct nvmefs_ctrl *ctrl, void *arg), void *arg,
		  struct nvmefs_subsys **subsysp)
{
	struct nvmefs_subsys *subsys = NULL;
	struct path_args all = *given;
	unsigned int i;
	char where[300];
	int ret;

	/* With --all-paths, -a/-s is where the discovery log is, not a path. */
	if (given->all_paths) {
		ret = discover_paths(conn, cmd, &all);
		if (ret) {
			connect_args_forget_secrets(conn);
			return ret;
		}
	} else {
		memmove(all.traddr[1], all.traddr[0], sizeof(all.traddr[0]) * all.nr);
		memmove(all.trsvcid[1], all.trsvcid[0], sizeof(all.trsvcid[0]) * all.nr);
		memmove(&all.trtype[1], &all.trtype[0], sizeof(all.trtype[0]) * all.nr);
		all.trtype[0] = NULL;
		memset(all.plain, 0, sizeof(all.plain));
		snprintf(all.traddr[0], sizeof(all.traddr[0]), "%s", conn->opts.traddr);
		snprintf(all.trsvcid[0], sizeof(all.trsvcid[0]), "%s",
			 conn->opts.trsvcid ? conn->opts.trsvcid : "");
		all.nr++;
	}
	for (i = 0; i < all.nr; i++) {
		struct nvmefs_connect_opts opts = conn->opts;
		struct nvmefs_ctrl *ctrl;

		opts.traddr = all.traddr[i];
		opts.trsvcid = all.trsvcid[i][0] ? all.trsvcid[i] : NULL;
		if (all.trtype[i])
			opts.trtype = all.trtype[i];
		if (all.plain[i])
			opts.tls_key = NULL;
		connect_opts_fit_path(&opts);
		connect_args_where(&opts, where, sizeof(where));
		verbose(conn, cmd, "connecting path %u to %s at %s over %s", i + 1, opts.subnqn, where,
			opts.trtype ? opts.trtype : nvmefs_transport_name(0));
		ret = connect_one(&opts, io, setup, arg, &ctrl);
		if (ret == 0 && !subsys) {
			ret = nvmefs_subsys_create(ctrl, all.policy, &subsys);
			if (ret < 0)
				nvmefs_ctrl_disconnect(ctrl);
		} else if (ret == 0) {
			ret = nvmefs_subsys_add_path(subsys, ctrl);
			if (ret < 0)
				nvmefs_ctrl_disconnect(ctrl);
		}
		if (ret < 0) {
			fprintf(stderr, "nvmefs %s: path %s left out: %s\n", cmd, where, nvmefs_errmsg());
			continue;
		}
		verbose_connected(conn, cmd, ctrl);
	}
	connect_args_forget_secrets(conn);
	if (!subsys) {
		fprintf(stderr, "nvmefs %s: no path to %s could be connected (%u tried)\n", cmd,
			conn->opts.subnqn, all.nr);
		return EXIT_FAIL;
	}
	verbose(conn, cmd, "%u of %u paths joined, I/O policy %s", nvmefs_subsys_path_count(subsys),
		all.nr, nvmefs_iopolicy_name(nvmefs_subsys_iopolicy(subsys)));
	*subsysp = subsys;
	return EXIT_OK;
}
