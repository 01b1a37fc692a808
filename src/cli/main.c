/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs COMMAND [OPTIONS]: dispatch to a subcommand.
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paths.h"

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

const struct command commands[] = {
	{ "discover", "read the discovery log of an NVMe/RDMA or NVMe/TCP target", cmd_discover },
	{ "identify", "print a subsystem's Identify Controller or Namespace data", cmd_identify },
	{ "perf", "measure a namespace's IOPS, bandwidth and latency", cmd_perf },
	{ "mount", "serve a subsystem's namespaces as files through FUSE", cmd_mount },
	{ "list", "list this host's nvmefs mounts, as nvme list does devices", cmd_list },
	{ "ublk", "serve a subsystem's namespaces as ublk block devices", cmd_ublk },
	{ "version", "print the version", cmd_version },
	{ "help", "show the help of nvmefs or of a command", cmd_help },
	{ NULL, NULL, NULL },
};

static const struct command *find_command(const char *name)
{
	for (const struct command *c = commands; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: nvmefs COMMAND [OPTIONS]\n"
		"       nvmefs --help | --version\n"
		"\n"
		"A userspace NVMe-over-Fabrics initiator over RDMA and TCP: no kernel NVMe\n"
		"modules needed.\n"
		"Output agrees with nvme-cli's, field for field.\n"
		"\n"
		"Commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out,
		"\n"
		"Options:\n"
		"  -h, --help                show this help\n"
		"  -V, --version             print the version\n"
		"\n"
		"Connect options of the commands that talk to a target:\n"
		CONNECT_HELP
		"  (mount takes -o for mount options instead: see 'nvmefs mount --help')\n"
		"\n"
		"Paths, for perf and mount (see MULTIPATH in man nvmefs):\n"
		PATHS_HELP
		"\n"
		"Exit status: 0 success, 1 failure, 2 wrong usage.\n"
		"'nvmefs COMMAND --help' shows a command's options; man nvmefs has more.\n",
		CONNECT_HELP_ARGS);
}

static int cmd_version(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = next_option(argc, argv, ":h", longopts)) != -1) {
		switch (opt) {
		case 'h':
			printf("Usage: nvmefs version\n\nPrint the version of nvmefs.\n\n"
			       "Options:\n" HELP_HELP);
			return finish_output(argv[0], EXIT_OK);
		default:
			return EXIT_USAGE;
		}
	}
	printf("nvmefs version %s\n", NVMEFS_VERSION);
	return finish_output(argv[0], EXIT_OK);
}

static int cmd_help(int argc, char **argv)
{
	static char help_opt[] = "--help";
	const struct command *c;
	char *args[3];

	if (argc > 2)
		return usage_error(argv[0], "give at most one command, got '%s' and '%s'",
				   argv[1], argv[2]);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return finish_output(argv[0], EXIT_OK);
	}
	c = find_command(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);
	args[0] = argv[1];
	args[1] = help_opt;
	args[2] = NULL;
	optind = 1;
	return c->fn(2, args);
}

/*
 * The exit status a command's return means: commands return EXIT_* or,
 * from a failure deep in their work, a -errno, which as a status would
 * come out as 256 - errno (243 for EACCES) instead of the documented 1.
 */
static int exit_status(int ret)
{
	return ret == EXIT_OK || ret == EXIT_USAGE ? ret : EXIT_FAIL;
}

int main(int argc, char **argv)
{
	const struct command *c;

	/* nvme-cli groups 128-bit counters by the user's locale; so do we. */
	setlocale(LC_ALL, "");

	if (argc < 2)
		return usage_error(NULL, "a command is missing");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return finish_output("--help", EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("nvmefs version %s\n", NVMEFS_VERSION);
		return finish_output("--version", EXIT_OK);
	}
	if (argv[1][0] == '-')
		return usage_error(NULL, "unknown option '%s' (options go after the command)",
				   argv[1]);
	/* mount.fuse3 runs an fstab line of type fuse.nvmefs as "nvmefs SOURCE DIR -o ...". */
	if (!strncmp(argv[1], "nqn.", 4)) {
		optind = 1;
		return exit_status(cmd_mount(argc, argv));
	}
	c = find_command(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);
	optind = 1;
	return exit_status(c->fn(argc - 1, argv + 1));
}
