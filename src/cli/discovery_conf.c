/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /etc/nvme/discovery.conf, read as 'nvme discover' reads it when given no
 * target: a line per discovery controller, each the options of discover
 * (-t tcp -a 192.0.2.1 -s 8009 ...), blank lines and '#' comments skipped.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover.h"

static const char *const cmd = "discover";

/* Words on one line: nvme-cli takes 32 arguments a line. */
#define CONF_WORDS_MAX 32

const char *discovery_conf_path(void)
{
	const char *path = getenv("NVMEFS_DISCOVERY_CONF");

	return path && *path ? path : "/etc/nvme/discovery.conf";
}

/*
 * Line @lineno's options over the command line's (@cmdline), parsed into
 * @d: EXIT_OK, EXIT_OK with no traddr for a line that names no controller
 * (nvme-cli skips those), or EXIT_USAGE after a line naming the file and line.
 */
static int conf_line(struct discover_args *d, const struct discover_args *cmdline, char *line,
		     const char *path, unsigned int lineno)
{
	char *av[CONF_WORDS_MAX + 1] = { (char *)cmd };
	char where[4200];
	int n, ret;

	*d = *cmdline;
	d->keep_secrets = true;
	snprintf(where, sizeof(where), "%s:%u", path, lineno);
	usage_where = where;
	n = parse_option_line(line, av + 1, CONF_WORDS_MAX);
	if (n < 0)
		ret = usage_error(cmd, "more than %d words on a line", CONF_WORDS_MAX);
	else
		ret = n ? discover_parse(d, n + 1, av) : EXIT_OK;
	if (ret == EXIT_OK && d->help)
		ret = usage_error(cmd, "-h/--help has no place in %s", path);
	if (ret == EXIT_OK && d->persist)
		ret = usage_error(cmd, "-p/--persistent watches one discovery controller: give "
				  "it with -a on the command line");
	/* The command line named no transport, or it would not be read. */
	if (ret == EXIT_OK && !d->args.opts.traddr && d->args.opts.trtype)
		ret = usage_error(cmd, "the target's address is missing: give it with "
				  "-a/--traddr");
	usage_where = NULL;
	return ret;
}

int discover_from_conf(const struct discover_args *cmdline)
{
	const char *path = discovery_conf_path();
	struct discover_args d;
	unsigned int lineno, targets = 0;
	int status = EXIT_OK, ret;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return usage_error(cmd, "the target's address is missing: give it with "
					   "-a/--traddr, or list discovery controllers in %s", path);
		fprintf(stderr, "nvmefs %s: reading %s failed: %s: give the target with -a/--traddr\n",
			cmd, path, strerror(errno));
		return EXIT_FAIL;
	}
	/* Every line checked first: a mistake on the last connects nothing. */
	for (int pass = 0; pass < 2 && status == EXIT_OK; pass++) {
		rewind(f);
		for (lineno = 1; getline(&line, &cap, f) >= 0; lineno++) {
			ret = conf_line(&d, cmdline, line, path, lineno);
			if (ret == EXIT_OK && !d.args.opts.traddr)
				continue;
			targets += pass == 0;
			if (ret) {
				status = ret;
				break;
			}
			if (pass == 1) {
				ret = discover_run(&d);
				if (ret > status)
					status = ret;
			}
		}
		if (ferror(f)) {
			fprintf(stderr, "nvmefs %s: reading %s failed: %s\n", cmd, path, strerror(errno));
			status = EXIT_FAIL;
		} else if (pass == 0 && status == EXIT_OK && !targets) {
			status = usage_error(cmd, "%s names no discovery controller: give the target "
					     "with -a/--traddr, or add a line such as '-t tcp -a "
					     "192.0.2.1 -s 8009' to it", path);
		}
	}
	connect_args_forget_secrets(&d.args);
	free(line);
	fclose(f);
	return status;
}
