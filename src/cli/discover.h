/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs discover's options and one discovery, for the command line and for
 * each line of /etc/nvme/discovery.conf alike.
 */
#ifndef NVMEFS_CLI_DISCOVER_H
#define NVMEFS_CLI_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

struct discover_args {
	struct connect_args args;
	uint64_t depth;
	bool persist;
	bool help;
	/* The secrets serve more discoveries: not wiped after one. */
	bool keep_secrets;
};

void discover_args_init(struct discover_args *d);

/* Parse discover's options from @argv (argv[0] the command's name) into @d,
 * over what it holds, checked as far as they go without a target (EXIT_OK
 * with no traddr when none was named).  EXIT_OK or EXIT_USAGE after a
 * one-line message. */
int discover_parse(struct discover_args *d, int argc, char **argv);

/* discover's --help text, on stdout. */
void discover_help(void);

/* Read and print the logs @d names (or watch one, -p).  An EXIT_* status. */
int discover_run(struct discover_args *d);

/*
 * Where discover reads its targets when given none: NVMEFS_DISCOVERY_CONF
 * (for tests), else /etc/nvme/discovery.conf, as 'nvme discover' does.
 */
const char *discovery_conf_path(void);

/*
 * discover with no target on the command line (its options in @cmdline):
 * each line of discovery_conf_path() is a set of discover's options on top
 * of the command line's, one discovery each.  Every line is checked before
 * the first connects.  An EXIT_* status: the worst of the lines'.
 */
int discover_from_conf(const struct discover_args *cmdline);

#endif /* NVMEFS_CLI_DISCOVER_H */
