/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect options of every command that talks to a target, with
 * nvme-cli's names and letters.  Values are checked here so that a typo
 * is a usage error (exit 2) naming the option, not a connection failure.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void connect_args_init(struct connect_args *c)
{
	memset(c, 0, sizeof(*c));
	nvmefs_connect_opts_init(&c->opts);
	c->opts.timeout_ms = NVMEFS_DEFAULT_TIMEOUT_MS;
	c->fmt = OUTPUT_NORMAL;
}

/* 8-4-4-4-12 hexadecimal digits, as nvme-cli and /etc/nvme/hostid have it. */
static bool is_uuid(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == '-' ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

static int nonempty(const char *cmd, const char *opt, const char *arg, const char **dst)
{
	if (!*arg)
		return usage_error(cmd, "%s needs a value, got an empty one", opt);
	*dst = arg;
	return EXIT_OK;
}

int connect_args_option(struct connect_args *c, const char *cmd, int opt,
			const char *arg, bool *handled)
{
	uint64_t v;
	int64_t sv;

	*handled = true;
	switch (opt) {
	case 't':
		if (strcmp(arg, "rdma"))
			return usage_error(cmd, "-t/--transport '%s' is not supported: nvmefs is an "
					   "NVMe/RDMA initiator, the only transport is 'rdma'", arg);
		return EXIT_OK;
	case 'a':
		return nonempty(cmd, "-a/--traddr", arg, &c->opts.traddr);
	case 's':
		if (parse_uint(arg, 1, 65535, &v))
			return usage_error(cmd, "-s/--trsvcid '%s' is not a port: give a number "
					   "from 1 to 65535 (NVMe/RDMA uses %s)", arg,
					   NVMEFS_DEFAULT_TRSVCID);
		c->opts.trsvcid = arg;
		return EXIT_OK;
	case 'w':
		return nonempty(cmd, "-w/--host-traddr", arg, &c->opts.host_traddr);
	case 'q':
		return nonempty(cmd, "-q/--hostnqn", arg, &c->opts.hostnqn);
	case 'I':
		if (!is_uuid(arg))
			return usage_error(cmd, "-I/--hostid '%s' is not a UUID: give one like "
					   "'f81d4fae-7dec-11d0-a765-00a0c91e6bf6'", arg);
		c->opts.hostid = arg;
		return EXIT_OK;
	case 'k':
		if (parse_uint(arg, 0, INT_MAX / 1000, &v))
			return usage_error(cmd, "-k/--keep-alive-tmo '%s' is not a number of seconds "
					   "from 0 to %d", arg, INT_MAX / 1000);
		c->opts.kato_ms = (int)v * 1000;
		return EXIT_OK;
	case OPT_TIMEOUT:
		if (parse_uint(arg, 1, NVMEFS_MAX_TIMEOUT_MS, &v))
			return usage_error(cmd, "--timeout '%s' is not a number of milliseconds "
					   "from 1 to %d", arg, NVMEFS_MAX_TIMEOUT_MS);
		c->opts.timeout_ms = (unsigned int)v;
		return EXIT_OK;
	case 'c':
		if (parse_uint(arg, 1, RECONNECT_DELAY_MAX_S, &v))
			return usage_error(cmd, "-c/--reconnect-delay '%s' is not a number of seconds "
					   "from 1 to %d", arg, RECONNECT_DELAY_MAX_S);
		c->opts.reconnect_delay_s = (int)v;
		return EXIT_OK;
	case 'l':
		/* Any negative is "forever", as in nvme-cli; keep it as -1. */
		if (parse_int(arg, INT64_MIN, CTRL_TMO_MAX_S, &sv))
			return usage_error(cmd, "-l/--ctrl-loss-tmo '%s' is not a number of seconds "
					   "from 0 to %d, or -1 to reconnect forever", arg,
					   CTRL_TMO_MAX_S);
		c->opts.ctrl_loss_tmo_s = sv < 0 ? -1 : (int)sv;
		return EXIT_OK;
	case OPT_FAST_IO_FAIL_TMO:
		if (parse_int(arg, INT64_MIN, CTRL_TMO_MAX_S, &sv))
			return usage_error(cmd, "--fast_io_fail_tmo '%s' is not a number of seconds "
					   "from 0 to %d, or -1 for off", arg, CTRL_TMO_MAX_S);
		c->opts.fast_io_fail_tmo_s = sv < 0 ? -1 : (int)sv;
		return EXIT_OK;
	case 'o':
		if (output_format_parse(arg, &c->fmt))
			return usage_error(cmd, "-o/--output-format '%s' is not a format: use "
					   "'normal' or 'json'", arg);
		return EXIT_OK;
	case 'v':
		c->verbose++;
		return EXIT_OK;
	}
	*handled = false;
	return EXIT_OK;
}

int connect_args_check(const struct connect_args *c, const char *cmd)
{
	if (!c->opts.traddr)
		return usage_error(cmd, "the target's address is missing: give it with -a/--traddr");
	return EXIT_OK;
}

const char *connect_args_where(const struct nvmefs_connect_opts *opts,
			       char *buf, size_t size)
{
	const char *port = opts->trsvcid ? opts->trsvcid : NVMEFS_DEFAULT_TRSVCID;

	if (strchr(opts->traddr, ':'))
		snprintf(buf, size, "[%s]:%s", opts->traddr, port);
	else
		snprintf(buf, size, "%s:%s", opts->traddr, port);
	return buf;
}

void verbose(const struct connect_args *c, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	if (!c->verbose)
		return;
	fprintf(stderr, "nvmefs %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
