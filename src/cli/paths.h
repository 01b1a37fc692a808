/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Several paths to one subsystem, for perf and mount: --path (repeatable),
 * --all-paths (every record of the subsystem in the discovery log, as
 * 'nvme connect-all' connects them) and --iopolicy.
 */
#ifndef NVMEFS_CLI_PATHS_H
#define NVMEFS_CLI_PATHS_H

#include <stdbool.h>

#include "cli.h"
#include "paths_log.h"

enum {
	OPT_PATH = 0x180,
	OPT_ALL_PATHS,
	OPT_IOPOLICY,
};

#define PATHS_LONGOPTS							\
	{ "path", required_argument, NULL, OPT_PATH },			\
	{ "all-paths", no_argument, NULL, OPT_ALL_PATHS },		\
	{ "iopolicy", required_argument, NULL, OPT_IOPOLICY }

#define PATHS_HELP							\
	"      --path=[TRTYPE:]TRADDR[:TRSVCID]\n"				\
	"                            another path to the subsystem (repeatable; IPv6 as\n" \
	"                            [ADDR]:PORT; over -t's transport unless TRTYPE,\n" \
	"                            like tcp:10.0.0.2:4420); -a/-s is the first\n" \
	"      --all-paths           every path the discovery log at -a/-s (and those it\n" \
	"                            refers to) lists for the subsystem, each over its\n" \
	"                            own transport\n"				\
	"      --iopolicy=POLICY     how I/O picks among optimized paths: numa (the first;\n" \
	"                            the default), round-robin or queue-depth\n"

struct path_args {
	/* The paths after the first (-a/-s), as given, each over the transport
	 * its --path names (NULL: -t's); with --all-paths, every path, each over
	 * its record's transport. One more than --path takes: paths_connect
	 * puts -a/-s's in front. */
	char traddr[NVMEFS_MAX_PATHS][PATH_TRADDR_SIZE];
	char trsvcid[NVMEFS_MAX_PATHS][PATH_TRSVCID_SIZE];
	const char *trtype[NVMEFS_MAX_PATHS];
	/* With --all-paths: the record says its port runs no TLS, so the
	 * path goes without --tls-key's key (a plain port refuses TLS). */
	bool plain[NVMEFS_MAX_PATHS];
	unsigned int nr;
	bool all_paths;
	enum nvmefs_iopolicy policy;
};

void path_args_init(struct path_args *p);

/* Takes a paths option; *@handled tells whether @opt was one.  EXIT_OK or
 * EXIT_USAGE after a one-line message. */
int path_args_option(struct path_args *p, const char *cmd, int opt, const char *arg,
		     bool *handled);

/* After connect_args_check(): each --path with @conn's options, as the
 * library would check it when connecting, each path with those its
 * transport takes (connect_opts_fit_path()), and an option no path takes
 * refused.  EXIT_OK, EXIT_USAGE, or EXIT_FAIL when the check itself
 * failed, after a one-line message. */
int path_args_check(const struct path_args *p, const struct connect_args *conn,
		    const char *cmd);

/* Whether more than the one path of -a/-s is asked for. */
bool path_args_multipath(const struct path_args *p);

/*
 * Connect every path with @conn's options, create the I/O queues of @io on
 * each and group them into *@subsysp.  A path that cannot be connected or
 * is refused (another subsystem, other namespaces) is told on stderr and
 * left out; it fails only when no path is left.  @setup runs on each
 * controller once connected (the event callback).  Returns EXIT_OK, or
 * EXIT_FAIL after a one-line message.
 */
int paths_connect(struct connect_args *conn, const struct path_args *p,
		  const struct nvmefs_io_opts *io, const char *cmd,
		  void (*setup)(struct nvmefs_ctrl *ctrl, void *arg), void *arg,
		  struct nvmefs_subsys **subsysp);

#endif /* NVMEFS_CLI_PATHS_H */
