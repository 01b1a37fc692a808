/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The `nvmefs` command: a table of subcommands, each a function taking its
 * own argv (argv[0] is the subcommand's name), and what they share: exit
 * statuses, usage errors, and the connect options nvme-cli users know.
 */
#ifndef NVMEFS_CLI_CLI_H
#define NVMEFS_CLI_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <nvmefs/nvmefs.h>

#include "output.h"
#include "util_parse.h"

/* Exit statuses, the same for every command (and in the man pages). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,	/* the operation failed: target, network, I/O */
	EXIT_USAGE = 2,	/* the command line was wrong */
};

struct command {
	const char *name;
	const char *summary;
	/* Returns an EXIT_* status; a -errno passed up from a failure is
	 * taken as EXIT_FAIL by main. */
	int (*fn)(int argc, char **argv);
};

/* Every command; adding one is a file with its function and a line in main.c. */
extern const struct command commands[];

int cmd_discover(int argc, char **argv);
int cmd_identify(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ublk(int argc, char **argv);
int cmd_gen_tls_key(int argc, char **argv);
int cmd_check_tls_key(int argc, char **argv);

/*
 * Print "nvmefs CMD: <message>; see 'nvmefs CMD --help'" on stderr and
 * return EXIT_USAGE, for `return usage_error(...)`.
 */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* While options are parsed from a file, where ("FILE:LINE"): usage_error()
 * puts it before the message.  NULL otherwise. */
extern const char *usage_where;

/*
 * getopt_long() with our error reporting: returns the option, -1 at the end,
 * or '?' after printing a one-line usage error (unknown option, missing
 * value).  Positional arguments are refused the same way.  @optstring must
 * start with ':'.
 */
int next_option(int argc, char **argv, const char *optstring,
		const struct option *longopts);

/* ------------------------------------------------------------------------ */
/* Connect options shared by every command that talks to a target          */
/* ------------------------------------------------------------------------ */

/* Long-only options get values past the byte range of short ones. */
enum {
	OPT_TIMEOUT = 0x100,
	OPT_DHCHAP_SECRET_FILE,
	OPT_DHCHAP_CTRL_SECRET_FILE,
	OPT_RKEY_PER_IO,
	OPT_HOST_IFACE,
	OPT_DISABLE_SQFLOW,
	OPT_TLS,
	OPT_TLS_KEY,
	OPT_TLS_IDENTITY,
	OPT_TLS_COMPAT,
	OPT_TLS_CONCAT,
	OPT_FIRST_COMMAND_OPTION = 0x200,
};

/*
 * The reconnect options, as nvme-cli spells them, also in mount's own
 * option table (mount has no -o/--output-format).
 */

#define RECONNECT_SHORTOPTS "c:l:F:"

#define RECONNECT_LONGOPTS						\
	{ "reconnect-delay", required_argument, NULL, 'c' },		\
	{ "ctrl-loss-tmo", required_argument, NULL, 'l' },		\
	{ "fast_io_fail_tmo", required_argument, NULL, 'F' },		\
	{ "fast-io-fail-tmo", required_argument, NULL, 'F' }

/* Their bounds, for the command line and mount -o alike; seconds * 1000
 * must fit in an int of milliseconds. */
#define RECONNECT_DELAY_MAX_S 3600
#define CTRL_TMO_MAX_S (INT_MAX / 1000)

#define RECONNECT_HELP							\
	"  -c, --reconnect-delay=SEC at most SEC seconds between reconnect attempts, 1 to\n" \
	"                            3600 (default 10)\n"			\
	"  -l, --ctrl-loss-tmo=SEC   give the controller up SEC seconds after it failed\n" \
	"                            (default 600; -1: never; 0: do not reconnect)\n" \
	"  -F, --fast_io_fail_tmo=SEC, --fast-io-fail-tmo=SEC\n"		\
	"                            fail I/O held while reconnecting SEC seconds after\n" \
	"                            the controller failed (default -1: off, I/O waits)\n"

/*
 * DH-HMAC-CHAP secrets, as nvme-cli spells them, and from files, so that a
 * secret need not stand on a command line (which ps shows to everyone).
 */
#define DHCHAP_SHORTOPTS "S:C:"

#define DHCHAP_LONGOPTS							\
	{ "dhchap-secret", required_argument, NULL, 'S' },		\
	{ "dhchap-ctrl-secret", required_argument, NULL, 'C' },		\
	{ "dhchap-secret-file", required_argument, NULL, OPT_DHCHAP_SECRET_FILE }, \
	{ "dhchap-ctrl-secret-file", required_argument, NULL, OPT_DHCHAP_CTRL_SECRET_FILE }, \
	{ "tls", no_argument, NULL, OPT_TLS },				\
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },		\
	{ "identity", required_argument, NULL, OPT_TLS_IDENTITY },	\
	{ "compat", no_argument, NULL, OPT_TLS_COMPAT },		\
	{ "concat", no_argument, NULL, OPT_TLS_CONCAT }

#define DHCHAP_HELP							\
	"  -S, --dhchap-secret=KEY   this host's DH-HMAC-CHAP secret (DHHC-1:NN:...:, as\n" \
	"                            'nvme gen-dhchap-key' prints it); ps shows it\n" \
	"      --dhchap-secret-file=FILE\n"				\
	"                            the same, read from FILE, which only its owner may\n" \
	"                            read\n"					\
	"  -C, --dhchap-ctrl-secret=KEY\n"					\
	"                            the controller's secret: check the controller too\n" \
	"      --dhchap-ctrl-secret-file=FILE\n"				\
	"                            the same, read from FILE\n"		\
	"      --tls                 NVMe/TCP: TLS 1.3 on every queue (needs --tls-key)\n" \
	"      --tls-key=KEY|FILE    the TLS pre-shared key (NVMeTLSkey-1:HH:...:, as 'nvme\n" \
	"                            gen-tls-key' prints it), or a file only its owner\n" \
	"                            may read holding it; implies --tls\n"	\
	"      --identity=VERSION    TLS PSK identity version: 1 (with the PSK digest; the\n" \
	"                            default, as the kernel's initiator) or 0\n"	\
	"      --compat              derive the TLS PSK as libnvme before 1.16 did\n" \
	"      --concat              NVMe/TCP: secure channel concatenation: TLS 1.3 keyed\n" \
	"                            by DH-HMAC-CHAP (needs --dhchap-secret, no --tls-key)\n"

/* Remote keys: one per transfer, or standing keys per registration. */
#define RKEY_LONGOPTS							\
	{ "rkey-per-io", required_argument, NULL, OPT_RKEY_PER_IO }

#define RKEY_HELP							\
	"      --rkey-per-io=WHEN    give each transfer a remote key of its own, which the\n" \
	"                            target invalidates with its response: 'auto' (the\n" \
	"                            default: where the RDMA device can), 'on' or 'off'\n"

/* NVMe/TCP digests, as nvme-cli spells them. */
#define DIGEST_SHORTOPTS "gG"

#define DIGEST_LONGOPTS							\
	{ "hdr-digest", no_argument, NULL, 'g' },			\
	{ "data-digest", no_argument, NULL, 'G' }

#define DIGEST_HELP							\
	"  -g, --hdr-digest          NVMe/TCP: ask for header digests (CRC32C)\n" \
	"  -G, --data-digest         NVMe/TCP: ask for data digests (CRC32C)\n"

/*
 * nvme-cli's options that shape the connection itself, also in mount's
 * table.  nvme-cli's -f for --host-iface is in CONNECT_SHORTOPTS but not
 * mount's, where -f is --foreground, as in every FUSE filesystem.
 */
#define LINK_SHORTOPTS "T:DJ:"

#define LINK_LONGOPTS							\
	{ "host-iface", required_argument, NULL, OPT_HOST_IFACE },	\
	{ "tos", required_argument, NULL, 'T' },			\
	{ "disable-sqflow", no_argument, NULL, OPT_DISABLE_SQFLOW },	\
	{ "duplicate-connect", no_argument, NULL, 'D' },		\
	{ "config", required_argument, NULL, 'J' }

/* Their --help lines, --host-iface's aside: its letter depends on the command. */
#define LINK_HELP							\
	"  -T, --tos=TOS             type of service of the connections, 0 to 255\n" \
	"                            (default: the system's)\n"		\
	"      --disable-sqflow      ask the controller to disable SQ flow control\n" \
	"  -D, --duplicate-connect   accepted: nvmefs always connects a controller of its\n" \
	"                            own, even to a subsystem already connected\n" \
	"  -J, --config=FILE         nvme-cli's JSON configuration: this host's NQN, ID and\n" \
	"                            DH-HMAC-CHAP keys from it where not given\n"

#define CONNECT_SHORTOPTS "t:a:s:w:q:I:k:o:vf:" RECONNECT_SHORTOPTS DHCHAP_SHORTOPTS \
	DIGEST_SHORTOPTS LINK_SHORTOPTS

/* Where to connect, as whom, and how long to wait: every command's. */
#define TARGET_LONGOPTS							\
	{ "transport", required_argument, NULL, 't' },			\
	{ "traddr", required_argument, NULL, 'a' },			\
	{ "trsvcid", required_argument, NULL, 's' },			\
	{ "host-traddr", required_argument, NULL, 'w' },		\
	{ "hostnqn", required_argument, NULL, 'q' },			\
	{ "hostid", required_argument, NULL, 'I' },			\
	{ "keep-alive-tmo", required_argument, NULL, 'k' },		\
	{ "timeout", required_argument, NULL, OPT_TIMEOUT }

#define CONNECT_LONGOPTS						\
	TARGET_LONGOPTS,						\
	{ "output-format", required_argument, NULL, 'o' },		\
	{ "verbose", no_argument, NULL, 'v' },				\
	RECONNECT_LONGOPTS,						\
	DHCHAP_LONGOPTS,						\
	RKEY_LONGOPTS,							\
	DIGEST_LONGOPTS,						\
	LINK_LONGOPTS,							\
	{ "help", no_argument, NULL, 'h' }

/* The --help lines for CONNECT_LONGOPTS (--help aside), in one layout; its
 * two %s are CONNECT_HELP_ARGS. */
#define CONNECT_HELP							\
	"  -t, --transport=TRTYPE    transport type: %s\n"		\
	"  -a, --traddr=TRADDR       target address (IPv4, IPv6 or host name); required\n" \
	"  -s, --trsvcid=TRSVCID     target port (default %s)\n"		\
	"  -w, --host-traddr=ADDR    local address to connect from\n" \
	"  -f, --host-iface=IFACE    NVMe/TCP: connect through the network interface IFACE\n" \
	"  -q, --hostnqn=HOSTNQN     host NQN (default: /etc/nvme/hostnqn, else generated)\n" \
	"  -I, --hostid=HOSTID       host ID, a UUID (default: /etc/nvme/hostid, else derived)\n" \
	"  -k, --keep-alive-tmo=SEC  keep-alive timeout in seconds\n" \
	"      --timeout=MS          connect and per-command timeout in milliseconds, 1 to\n" \
	"                            3600000 (default 5000)\n" \
	RECONNECT_HELP							\
	DHCHAP_HELP							\
	RKEY_HELP							\
	DIGEST_HELP							\
	LINK_HELP							\
	"  -o, --output-format=FMT   output format: normal (as nvme-cli) or json\n" \
	"  -v, --verbose             tell on stderr what is done, as whom\n"

#define CONNECT_HELP_ARGS transports_text(false), ports_text("a discovery controller")

#define HELP_HELP "  -h, --help                show this help\n"

struct connect_args {
	struct nvmefs_connect_opts opts;
	enum output_format fmt;
	int verbose;
	/* The option that gave the host's [0] and the controller's [1] secret. */
	const char *secret_opt[2];
	/* --tls was given; the key comes with --tls-key. */
	bool tls;
	/* Set before connect_args_check() by a command given several paths:
	 * the options are then checked as each path takes them
	 * (connect_opts_fit_path()), and path_args_check() refuses those no
	 * path takes. */
	bool multipath;
	/* -J: nvme-cli's JSON configuration, and what was taken from it. */
	const char *config;
	char config_hostnqn[256];
	char config_hostid[64];
};

void connect_args_init(struct connect_args *c);

/*
 * Handle option @opt if it is a connect option: *@handled tells whether it
 * was.  Returns EXIT_OK, or EXIT_USAGE after a one-line message.
 */
int connect_args_option(struct connect_args *c, const char *cmd, int opt,
			char *arg, bool *handled);

/* -J: what the JSON configuration gives that the command line did not: the
 * host NQN and ID into @c, and copies of the host's and the controller's keys
 * into @keys (NULL where none; the caller takes them as secrets, which
 * overwrites them, and frees them).  opts_config.c.  EXIT_OK, or
 * EXIT_USAGE/EXIT_FAIL after a one-line message. */
int connect_args_config(struct connect_args *c, const char *cmd, char *keys[2]);

/* Wipe the secrets once the library holds them (it parses them at
 * connect); the options then no longer point at them. */
void connect_args_forget_secrets(struct connect_args *c);

/* After parsing: what every command needs (-a), and what the library would
 * refuse when connecting (nvmefs_connect_opts_check()).  EXIT_OK, EXIT_USAGE,
 * or EXIT_FAIL when the check itself failed. */
int connect_args_check(struct connect_args *c, const char *cmd);
/* nvmefs_connect_opts_check() as a status: EXIT_OK; EXIT_USAGE or EXIT_FAIL
 * after a line with @prefix before the library's message. */
int connect_opts_checked(const struct nvmefs_connect_opts *opts, const char *cmd,
			 const char *prefix);

/* The service id nvme-cli gives when -s is not: the transport's (NULL: the
 * default one's) I/O or discovery port, from the library's table. */
const char *default_trsvcid(const char *trtype, bool discovery);
/* @opts for a path over opts->trtype, of options given for several paths
 * over different transports: those its transport does not take are reset,
 * but -f stays for the library to refuse over RDMA (a path that went
 * without would not be bound to the interface asked for).  Returns the
 * NVMEFS_OPT_* given that the path goes without. */
unsigned int connect_opts_fit_path(struct nvmefs_connect_opts *opts);
/* The library's transports, for --help: "rdma|tcp" for a usage line
 * (@usage), else "'rdma' (the default) or 'tcp'" (CONNECT_HELP's %s). */
const char *transports_text(bool usage);
/* The default ports of -s, as the transports give them, for --help: "4420;
 * <indent>a discovery controller over tcp: 8009", each port that is not
 * the first transport's I/O port on a line of its own, @discovery naming
 * where a discovery port is used. */
const char *ports_text(const char *discovery);

/* "ADDR:PORT" (IPv6 in brackets) for messages, into @buf, escaped: a
 * referral's address comes from a discovery log. */
const char *connect_args_where(const struct nvmefs_connect_opts *opts,
			       char *buf, size_t size);

/* The -v line after connecting: as whom, and how data is exposed. */
void verbose_connected(const struct connect_args *c, const char *cmd, struct nvmefs_ctrl *ctrl);
/* Print on stderr "nvmefs CMD: ..." when -v was given. */
void verbose(const struct connect_args *c, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Flush stdout; on a write error (a full disk, a closed pipe) report it on
 * one line and return EXIT_FAIL, else @status.
 */
int finish_output(const char *cmd, int status);

#endif /* NVMEFS_CLI_CLI_H */
