/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the commands that serve a subsystem until stopped (mount, ublk add)
 * share: connecting its paths into one subsystem head, logging the
 * controllers' transitions, and going to the background with a pidfile,
 * the parent waiting until the child says it is live or why it failed.
 */
#ifndef NVMEFS_CLI_DAEMON_H
#define NVMEFS_CLI_DAEMON_H

#include <stdbool.h>

#include "cli.h"
#include "paths.h"

/* The options of the commands that serve (mount, ublk add) past the connect ones. */
enum {
	OPT_PIDFILE = OPT_FIRST_COMMAND_OPTION,
	OPT_IODEPTH,
	OPT_IO_TIMEOUT,
	OPT_MAX_IO,
};

/* Their option table but for the command's own: the connect options (-f
 * being --foreground, not --host-iface), the queues, the daemon. */
#define DAEMON_LONGOPTS							\
	TARGET_LONGOPTS,						\
	{ "verbose", no_argument, NULL, 'v' },				\
	{ "help", no_argument, NULL, 'h' },				\
	{ "nqn", required_argument, NULL, 'n' },			\
	{ "nr-io-queues", required_argument, NULL, 'i' },		\
	{ "queue-size", required_argument, NULL, 'Q' },			\
	{ "iodepth", required_argument, NULL, OPT_IODEPTH },		\
	{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },	\
	{ "foreground", no_argument, NULL, 'f' },			\
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },		\
	RECONNECT_LONGOPTS,						\
	DHCHAP_LONGOPTS,						\
	RKEY_LONGOPTS,							\
	DIGEST_LONGOPTS,						\
	LINK_LONGOPTS,							\
	PATHS_LONGOPTS

#define DAEMON_SHORTOPTS ":t:a:s:w:q:I:k:vhn:i:Q:f" RECONNECT_SHORTOPTS DHCHAP_SHORTOPTS \
	DIGEST_SHORTOPTS LINK_SHORTOPTS

/* Their --help lines for the connect options, at the end of a help text
 * whose usage line has one %s (-t's transports): DAEMON_CONNECT_HELP_ARGS
 * are that and these lines' two. */
#define DAEMON_CONNECT_HELP						\
	"  -t, --transport=TRTYPE    transport type: %s\n"		\
	"  -a, --traddr=TRADDR       target address (IPv4, IPv6 or host name); required\n" \
	"  -s, --trsvcid=TRSVCID     target port (default %s)\n"		\
	"  -w, --host-traddr=ADDR    local address to connect from\n"	\
	"      --host-iface=IFACE    NVMe/TCP: connect through the network interface IFACE\n" \
	"  -q, --hostnqn=HOSTNQN     host NQN (default: /etc/nvme/hostnqn, else generated)\n" \
	"  -I, --hostid=HOSTID       host ID, a UUID (default: /etc/nvme/hostid, else derived)\n" \
	"  -k, --keep-alive-tmo=SEC  keep-alive timeout in seconds (default 5)\n" \
	"      --timeout=MS          connect and admin command timeout in milliseconds\n" \
	"                            (default 5000)\n"			\
	RECONNECT_HELP							\
	DHCHAP_HELP							\
	RKEY_HELP							\
	DIGEST_HELP							\
	LINK_HELP							\
	PATHS_HELP							\
	"  -v, --verbose             tell on stderr what is done, as whom\n" \
	HELP_HELP

#define DAEMON_CONNECT_HELP_ARGS transports_text(true), transports_text(false), \
	ports_text("with --all-paths, the discovery log")

struct daemon_args {
	const char *cmd;	/* "mount", "ublk add": in messages */
	bool foreground;
	const char *pidfile;
	/* --pidfile, opened before connecting (-1: none), and whether this
	 * run made it: removed on the way out, whatever the outcome. */
	int pidfile_fd;
	bool pidfile_written;
	char *pidfile_abs;	/* pidfile made absolute before chdir("/") */
	/* The daemon's channel to its waiting parent, or -1. */
	int ready_fd;
};

void daemon_args_init(struct daemon_args *d, const char *cmd);

/*
 * After the command line is checked: --pidfile made absolute and opened
 * (a file that cannot be written fails with a line now, not a log entry
 * once live), and the log opened (on stderr too in the foreground, with
 * @prefix).  EXIT_OK or EXIT_FAIL.
 */
int daemon_prepare(struct daemon_args *d, const char *prefix);

/* Runs @serve(@arg) in the foreground, or in a child that the parent
 * waits for (forked before anything connects: registered memory does not
 * survive fork()).  The exit status of the command. */
int daemon_run(struct daemon_args *d, int (*serve)(void *arg), void *arg);

/* Live: the pidfile written, and @out (NULL: nothing) printed on stdout,
 * by the parent that waits (which then exits 0), or here in the
 * foreground; the daemon's standard streams then go to /dev/null. */
void daemon_ready(struct daemon_args *d, const char *out);

/* @msg, one line ending in a newline, for whoever is told of a failure:
 * the waiting parent, stderr in the foreground, and the system log. */
void daemon_fail(struct daemon_args *d, const char *msg);

/* The end of a run (a failure or not): the pidfile this run made goes. */
void daemon_done(struct daemon_args *d);

/*
 * Connects -a/-s (or every path of @paths), creates the I/O queues of @io
 * on each and makes the subsystem head over them, each controller's
 * transitions logged.  0, or -errno with *@why the message's source.
 */
int daemon_connect(struct connect_args *conn, const struct path_args *paths,
		   const struct nvmefs_io_opts *io, const char *cmd, struct nvmefs_ctrl **ctrlp,
		   struct nvmefs_subsys **subsysp, const char *(**why)(void));

/* The head, or the one controller daemon_connect() left without one, torn
 * down with no outage logged. */
void daemon_disconnect(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys);

/* How many of the paths pin the engine's buffers, each its own registration. */
unsigned int daemon_pinning_paths(const struct connect_args *conn, const struct path_args *paths);

#endif /* NVMEFS_CLI_DAEMON_H */
