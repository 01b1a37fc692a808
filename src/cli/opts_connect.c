/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect options of every command that talks to a target, with
 * nvme-cli's names and letters.  Values are checked here so that a typo
 * is a usage error (exit 2) naming the option, not a connection failure.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "secret_src.h"
#include "../common/text.h"

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

/*
 * The two DH-HMAC-CHAP secrets (host, controller) between the options and
 * the connect: in a page of their own, locked when the limit allows (never
 * swapped), left out of core dumps, wiped by connect_args_forget_secrets().
 */
#define SECRET_MAX 512
#define DHCHAP_WHAT "a DH-HMAC-CHAP secret"
/* The TLS PSK's slot, after the two DH-HMAC-CHAP secrets'. */
#define TLS_SLOT 2
#define NR_SLOTS 3
static char *secrets;

static char *secret_slot(int which)
{
	if (!secrets)
		secrets = secret_page(NR_SLOTS * SECRET_MAX);
	return secrets ? secrets + which * SECRET_MAX : NULL;
}

void connect_args_forget_secrets(struct connect_args *c)
{
	if (secrets)
		explicit_bzero(secrets, NR_SLOTS * SECRET_MAX);
	c->opts.dhchap_secret = NULL;
	c->opts.dhchap_ctrl_secret = NULL;
	c->opts.tls_key = NULL;
}

/* --tls-key: the key itself (copied, the argument overwritten) or a file
 * only its owner may read that holds it; checked before anything connects. */
static int tls_key_option(struct connect_args *c, const char *cmd, char *arg)
{
	static const char opt[] = "--tls-key", what[] = "a TLS PSK";
	struct nvmefs_tls_key_info info;
	char *slot = secret_slot(TLS_SLOT);
	bool inline_key = !strncmp(arg, "NVMeTLSkey-1:", 13);
	int ret;

	if (c->opts.tls_key)
		return usage_error(cmd, "%s: the TLS key is given twice: give it once", opt);
	if (!slot)
		return usage_error(cmd, "%s: no memory for the key", opt);
	ret = inline_key ? secret_from_arg(cmd, opt, what, arg, slot, SECRET_MAX)
			 : secret_from_file(cmd, opt, what, arg, slot, SECRET_MAX);
	if (ret)
		return ret;
	if (nvmefs_tls_key_check(slot, &info) < 0) {
		explicit_bzero(slot, SECRET_MAX);
		return usage_error(cmd, "%s: %s%s%s: make a valid one with 'nvmefs gen-tls-key'",
				   opt, inline_key ? "" : arg, inline_key ? "" : ": ",
				   nvmefs_errmsg());
	}
	c->opts.tls_key = slot;
	c->tls = true;
	return EXIT_OK;
}

/* Whether the secret in @slot can be right: EXIT_OK; EXIT_USAGE, with
 * nvmefs_errmsg() saying why, for the caller's line; or EXIT_FAIL, said here,
 * when there was no memory to check it in.  @slot is wiped unless EXIT_OK. */
static int secret_checked(const char *cmd, const char *opt, char *slot)
{
	int ret = nvmefs_dhchap_secret_check(slot);

	if (ret == 0)
		return EXIT_OK;
	explicit_bzero(slot, SECRET_MAX);
	if (ret == -EINVAL)
		return EXIT_USAGE;
	fprintf(stderr, "nvmefs %s: %s: %s\n", cmd, opt, nvmefs_errmsg());
	return EXIT_FAIL;
}

/* A second value for the secret @which: refused, as either one would be
 * dropped without a word (and -o dhchap_secret= is -S by another name). */
static int secret_once(struct connect_args *c, const char *cmd, const char *opt, int which)
{
	if (c->secret_opt[which])
		return usage_error(cmd, "%s: the %s secret is given twice (first by %s): give it once",
				   opt, which ? "controller" : "host", c->secret_opt[which]);
	c->secret_opt[which] = opt;
	return EXIT_OK;
}

/* A secret given on the command line: copied, and the argument overwritten
 * so that ps shows it no longer (it did while the command started). */
static int secret_arg(struct connect_args *c, const char *cmd, const char *opt, char *arg,
		      int which, const char **dst)
{
	size_t len = strlen(arg);
	char *slot;
	int ret;

	if (!len)
		return usage_error(cmd, "%s needs a value, got an empty one", opt);
	ret = secret_once(c, cmd, opt, which);
	if (ret)
		return ret;
	slot = secret_slot(which);
	if (!slot)
		return usage_error(cmd, "%s: no memory for the secret", opt);
	ret = secret_from_arg(cmd, opt, DHCHAP_WHAT, arg, slot, SECRET_MAX);
	if (ret)
		return ret;
	ret = secret_checked(cmd, opt, slot);
	if (ret)
		return ret == EXIT_USAGE ? usage_error(cmd, "%s: %s: make a valid one with 'nvme "
						       "gen-dhchap-key'", opt, nvmefs_errmsg())
					 : ret;
	*dst = slot;
	return EXIT_OK;
}

/* A DH-HMAC-CHAP secret (@which: 0 the host's, 1 the controller's) from
 * @value, given by @opt: copied into locked memory, checked, and @value
 * overwritten.  EXIT_OK or EXIT_USAGE/EXIT_FAIL after a one-line message. */
static int connect_args_secret(struct connect_args *c, const char *cmd, const char *opt,
			       char *value, int which)
{
	return secret_arg(c, cmd, opt, value, which,
			  which ? &c->opts.dhchap_ctrl_secret : &c->opts.dhchap_secret);
}

/* A secret read from @path, which no one but its owner may read: the
 * secret is then as safe as the account that owns the file. */
static int secret_file(struct connect_args *c, const char *cmd, const char *opt,
		       const char *path, int which, const char **dst)
{
	char *slot = secret_slot(which);
	int ret;

	if (secret_once(c, cmd, opt, which))
		return EXIT_USAGE;
	if (!slot)
		return usage_error(cmd, "%s: no memory for the secret", opt);
	ret = secret_from_file(cmd, opt, DHCHAP_WHAT, path, slot, SECRET_MAX);
	if (ret)
		return ret;
	ret = secret_checked(cmd, opt, slot);
	if (ret)
		return ret == EXIT_USAGE ? usage_error(cmd, "%s: %s: %s: write a valid one with 'nvme "
						       "gen-dhchap-key >%s'", opt, path,
						       nvmefs_errmsg(), path)
					 : ret;
	*dst = slot;
	return EXIT_OK;
}

/* -t: one of the library's transports, named in the refusal. */
static int transport_option(const char *cmd, const char *arg, const char **dst)
{
	char names[64] = "";
	const char *name;

	for (unsigned int i = 0; (name = nvmefs_transport_name(i)); i++) {
		if (!strcmp(arg, name)) {
			*dst = name;
			return EXIT_OK;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'%s'",
			 i ? ", " : "", name);
	}
	return usage_error(cmd, "-t/--transport '%s' is not supported: the transports are %s",
			   arg, names);
}

static int nonempty(const char *cmd, const char *opt, const char *arg, const char **dst)
{
	if (!*arg)
		return usage_error(cmd, "%s needs a value, got an empty one", opt);
	*dst = arg;
	return EXIT_OK;
}

int connect_args_option(struct connect_args *c, const char *cmd, int opt,
			char *arg, bool *handled)
{
	uint64_t v;
	int64_t sv;

	*handled = true;
	switch (opt) {
	case 't':
		return transport_option(cmd, arg, &c->opts.trtype);
	case 'a':
		return nonempty(cmd, "-a/--traddr", arg, &c->opts.traddr);
	case 's':
		if (parse_uint(arg, 1, 65535, &v))
			return usage_error(cmd, "-s/--trsvcid '%s' is not a port: give a number "
					   "from 1 to 65535 (NVMe-oF uses %s, and %s for discovery "
					   "over TCP)", arg, NVMEFS_DEFAULT_TRSVCID,
					   NVMEFS_TCP_DISCOVERY_TRSVCID);
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
	case 'F':
		if (parse_int(arg, INT64_MIN, CTRL_TMO_MAX_S, &sv))
			return usage_error(cmd, "-F/--fast_io_fail_tmo '%s' is not a number of seconds "
					   "from 0 to %d, or -1 for off", arg, CTRL_TMO_MAX_S);
		c->opts.fast_io_fail_tmo_s = sv < 0 ? -1 : (int)sv;
		return EXIT_OK;
	case 'S':
		return secret_arg(c, cmd, "-S/--dhchap-secret", arg, 0, &c->opts.dhchap_secret);
	case 'C':
		return secret_arg(c, cmd, "-C/--dhchap-ctrl-secret", arg, 1,
				  &c->opts.dhchap_ctrl_secret);
	case OPT_DHCHAP_SECRET_FILE:
		return secret_file(c, cmd, "--dhchap-secret-file", arg, 0, &c->opts.dhchap_secret);
	case OPT_DHCHAP_CTRL_SECRET_FILE:
		return secret_file(c, cmd, "--dhchap-ctrl-secret-file", arg, 1,
				   &c->opts.dhchap_ctrl_secret);
	case OPT_RKEY_PER_IO:
		if (!strcmp(arg, "auto"))
			c->opts.rkey_per_io = -1;
		else if (!strcmp(arg, "on"))
			c->opts.rkey_per_io = 1;
		else if (!strcmp(arg, "off"))
			c->opts.rkey_per_io = 0;
		else
			return usage_error(cmd, "--rkey-per-io '%s' is not 'auto', 'on' or 'off'", arg);
		return EXIT_OK;
	case 'f':
		/* mount's -f is --foreground, which takes no value; its
		 * --host-iface comes as OPT_HOST_IFACE. */
		if (!arg)
			break;
		/* fall through */
	case OPT_HOST_IFACE:
		return nonempty(cmd, "-f/--host-iface", arg, &c->opts.host_iface);
	case 'T':
		if (parse_uint(arg, 0, 255, &v))
			return usage_error(cmd, "-T/--tos '%s' is not a type of service: give a number "
					   "from 0 to 255", arg);
		c->opts.tos = (int)v;
		return EXIT_OK;
	case OPT_DISABLE_SQFLOW:
		c->opts.disable_sqflow = 1;
		return EXIT_OK;
	case OPT_TLS:
		c->tls = true;
		return EXIT_OK;
	case OPT_TLS_KEY:
		return tls_key_option(c, cmd, arg);
	case OPT_TLS_IDENTITY:
		if (parse_uint(arg, 0, 1, &v))
			return usage_error(cmd, "--identity '%s' is not a PSK identity version: give 0 "
					   "or 1", arg);
		c->opts.tls_identity = (int)v;
		return EXIT_OK;
	case OPT_TLS_COMPAT:
		c->opts.tls_compat = 1;
		return EXIT_OK;
	case OPT_TLS_CONCAT:
		c->opts.tls_concat = 1;
		return EXIT_OK;
	case 'J':
		return nonempty(cmd, "-J/--config", arg, &c->config);
	case 'D':
		/* nvme-cli's leave to connect a controller again to where one is
		 * connected: what every nvmefs command and mount does anyway. */
		return EXIT_OK;
	case 'g':
		c->opts.hdr_digest = 1;
		return EXIT_OK;
	case 'G':
		c->opts.data_digest = 1;
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

/* libnvme's nvmf_get_default_trsvcid(), as each transport tells it: NVMe/TCP
 * has a discovery port of its own; RDMA's discovery controllers listen
 * where its I/O controllers do. */
const char *default_trsvcid(const char *trtype, bool discovery)
{
	struct nvmefs_transport_info t = { .size = sizeof(t) };

	/* -t named one of the library's: anything else was refused. */
	if (nvmefs_transport_info(trtype, &t))
		return NVMEFS_DEFAULT_TRSVCID;
	return discovery ? t.discovery_trsvcid : t.trsvcid;
}

const char *ports_text(const char *discovery)
{
	static char text[256];
	struct nvmefs_transport_info first = { .size = sizeof(first) }, t = first;
	static const char *const indent = ";\n                            ";
	const char *name;
	size_t used;

	if (nvmefs_transport_info(NULL, &first))
		return NVMEFS_DEFAULT_TRSVCID;
	snprintf(text, sizeof(text), "%s", first.trsvcid);
	for (unsigned int i = 0; (name = nvmefs_transport_name(i)); i++) {
		if (nvmefs_transport_info(name, &t))
			continue;
		used = strlen(text);
		if (strcmp(t.trsvcid, first.trsvcid))
			snprintf(text + used, sizeof(text) - used, "%sover %s: %s", indent, name,
				 t.trsvcid);
		used = strlen(text);
		if (strcmp(t.discovery_trsvcid, t.trsvcid))
			snprintf(text + used, sizeof(text) - used, "%s%s over %s: %s", indent,
				 discovery, name, t.discovery_trsvcid);
	}
	return text;
}

unsigned int connect_opts_fit_path(struct nvmefs_connect_opts *opts)
{
	const char *iface = opts->host_iface;
	int dropped = nvmefs_connect_opts_fit(opts);

	/* A transport the library lacks is connect_opts_checked()'s to name. */
	if (dropped < 0)
		return 0;
	opts->host_iface = iface;
	return (unsigned int)dropped & ~(unsigned int)NVMEFS_OPT_HOST_IFACE;
}

const char *transports_text(bool usage)
{
	static char text[2][128];
	char *buf = text[usage];
	const char *name, *next;
	size_t used;

	if (buf[0])
		return buf;
	for (unsigned int i = 0; (name = nvmefs_transport_name(i)); i++) {
		next = nvmefs_transport_name(i + 1);
		used = strlen(buf);
		if (usage)
			snprintf(buf + used, sizeof(text[0]) - used, "%s%s", i ? "|" : "", name);
		else
			snprintf(buf + used, sizeof(text[0]) - used, "%s'%s'%s",
				 !i ? "" : next ? ", " : " or ", name, i ? "" : " (the default)");
	}
	return buf;
}

int connect_opts_checked(const struct nvmefs_connect_opts *opts, const char *cmd,
			 const char *prefix)
{
	/* What the library would refuse when connecting is wrong usage too. */
	int ret = nvmefs_connect_opts_check(opts);

	if (ret == -EINVAL)
		return usage_error(cmd, "%s%s", prefix, nvmefs_errmsg());
	if (ret) {
		fprintf(stderr, "nvmefs %s: %s%s\n", cmd, prefix, nvmefs_errmsg());
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int connect_args_check(struct connect_args *c, const char *cmd)
{
	struct nvmefs_connect_opts opts;
	int ret;

	if (!c->opts.traddr)
		return usage_error(cmd, "the target's address is missing: give it with -a/--traddr");
	static const char *const key_opts[2] = { "-J/--config's dhchap_key",
						  "-J/--config's dhchap_ctrl_key" };
	char *keys[2] = { NULL, NULL };

	ret = connect_args_config(c, cmd, keys);
	for (int which = 0; which < 2; which++) {
		if (keys[which] && ret == EXIT_OK)
			ret = connect_args_secret(c, cmd, key_opts[which], keys[which], which);
		else if (keys[which])
			explicit_bzero(keys[which], strlen(keys[which]));
		free(keys[which]);
	}
	if (ret)
		return ret;
	if (c->tls && !c->opts.tls_key && !c->opts.tls_concat)
		return usage_error(cmd, "--tls needs the pre-shared key: give it with --tls-key "
				   "(nvmefs reads no kernel keyring)");
	if (!c->multipath)
		return connect_opts_checked(&c->opts, cmd, "");
	opts = c->opts;
	connect_opts_fit_path(&opts);
	return connect_opts_checked(&opts, cmd, "");
}

const char *connect_args_where(const struct nvmefs_connect_opts *opts,
			       char *buf, size_t size)
{
	return text_where(buf, size, opts->traddr,
			  opts->trsvcid ? opts->trsvcid : NVMEFS_DEFAULT_TRSVCID);
}

void verbose_connected(const struct connect_args *c, const char *cmd, struct nvmefs_ctrl *ctrl)
{
	verbose(c, cmd, "connected as host NQN %s, host ID %s: controller ID %u; remote keys %s; "
		"TLS %s", nvmefs_ctrl_hostnqn(ctrl), nvmefs_ctrl_hostid(ctrl),
		nvmefs_ctrl_cntlid(ctrl),
		nvmefs_ctrl_rkey_per_io(ctrl) ? "per I/O" : "standing, one per registration",
		nvmefs_ctrl_tls_suite(ctrl) ? nvmefs_ctrl_tls_suite(ctrl) : "none");
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
