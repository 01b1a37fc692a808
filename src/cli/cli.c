/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every subcommand shares: usage errors, option parsing, output flushing. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *usage_where;

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nvmefs%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	if (usage_where)
		fprintf(stderr, "%s: ", usage_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'nvmefs%s%s --help'\n", cmd ? " " : "", cmd ? cmd : "");
	return EXIT_USAGE;
}

int next_option(int argc, char **argv, const char *optstring,
		const struct option *longopts)
{
	int opt;

	opterr = 0;
	opt = getopt_long(argc, argv, optstring, longopts, NULL);
	switch (opt) {
	case -1:
		if (optind < argc) {
			usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
			return '?';
		}
		return -1;
	case ':':
		usage_error(argv[0], "option '%s' needs a value", argv[optind - 1]);
		return '?';
	case '?': {
		const char *text = argv[optind - 1];
		int len = (int)strcspn(text, "=");

		/* optopt is set for a short option, and for a long one given a
		 * value it does not take. */
		if (!strncmp(text, "--", 2) && optopt)
			usage_error(argv[0], "option '%.*s' takes no value", len, text);
		else if (optopt)
			usage_error(argv[0], "unknown option '-%c'", optopt);
		else
			usage_error(argv[0], "unknown option '%.*s'", len, text);
		return '?';
	}
	}
	return opt;
}

int finish_output(const char *cmd, int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "nvmefs %s: writing the output failed: %s\n", cmd, strerror(errno));
		return EXIT_FAIL;
	}
	return status;
}
