/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs discover: read a discovery controller's log, and optionally the
 * logs it refers to, and print them as `nvme discover` does.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

static const char *const cmd = "discover";

/* Referrals form a graph the library walks once per controller; this only
 * bounds how far a misconfigured fabric can send us. */
#define MAX_REFERRAL_DEPTH 16

enum {
	OPT_REFERRAL_DEPTH = OPT_FIRST_COMMAND_OPTION,
};

static void help(void)
{
	printf("Usage: nvmefs discover -a TRADDR [-s TRSVCID] [-q HOSTNQN] [-I HOSTID]\n"
	       "                       [-o normal|json] [-v] [--referral-depth=N]\n"
	       "\n"
	       "Connect to the discovery controller at TRADDR:TRSVCID over RDMA, read its\n"
	       "discovery log and print it as 'nvme discover' does.\n"
	       "\n"
	       "Options:\n"
	       CONNECT_HELP
	       "      --referral-depth=N    also read the logs of referred discovery\n"
	       "                            controllers, up to N referrals deep\n"
	       "                            (default 0: do not follow referrals; at most %d)\n"
	       HELP_HELP, MAX_REFERRAL_DEPTH);
}

struct discover_state {
	const struct connect_args *args;
	/* Our own stop (a write error), not the library's. */
	bool write_failed;
	/* Referred controllers whose logs could not be read: the walk goes on
	 * without them, and the exit status says the output is incomplete. */
	int referrals_unread;
};

static int print_log(const struct nvmefs_connect_opts *where,
		     const struct nvmf_discovery_log *log, int depth, void *arg)
{
	struct discover_state *st = arg;
	uint64_t nrec;
	char addr[300];

	if (!log) {
		fflush(stdout);
		fprintf(stderr, "nvmefs %s: skipped the referral to %s (depth %d), printing the "
			"other logs: %s\n", cmd, connect_args_where(where, addr, sizeof(addr)), depth,
			nvmefs_errmsg());
		st->referrals_unread++;
		return 0;
	}
	nrec = le64toh(log->numrec);
	verbose(st->args, cmd, "discovery log of %s%s%s (referral depth %d): %" PRIu64
		" records, generation %" PRIu64 "; host NQN %s, host ID %s",
		connect_args_where(where, addr, sizeof(addr)),
		where->subnqn ? " " : "", where->subnqn ? where->subnqn : "", depth, nrec,
		le64toh(log->genctr), where->hostnqn ? where->hostnqn : "(default)",
		where->hostid ? where->hostid : "(default)");
	print_discovery_log(stdout, log, nrec, st->args->fmt);
	if (ferror(stdout)) {
		st->write_failed = true;
		return -EIO;
	}
	return 0;
}

int cmd_discover(int argc, char **argv)
{
	static const struct option longopts[] = {
		CONNECT_LONGOPTS,
		{ "referral-depth", required_argument, NULL, OPT_REFERRAL_DEPTH },
		{ NULL, 0, NULL, 0 },
	};
	struct discover_state st = { 0 };
	struct connect_args args;
	uint64_t depth = 0;
	char addr[300];
	bool handled;
	int opt, ret;

	connect_args_init(&args);
	while ((opt = next_option(argc, argv, ":" CONNECT_SHORTOPTS "h", longopts)) != -1) {
		ret = connect_args_option(&args, cmd, opt, optarg, &handled);
		if (ret)
			return ret;
		if (handled)
			continue;
		switch (opt) {
		case OPT_REFERRAL_DEPTH:
			if (parse_uint(optarg, 0, MAX_REFERRAL_DEPTH, &depth))
				return usage_error(cmd, "--referral-depth '%s' is not a depth: give a "
						   "number from 0 to %d", optarg, MAX_REFERRAL_DEPTH);
			break;
		case 'h':
			help();
			return finish_output(cmd, EXIT_OK);
		default:
			return EXIT_USAGE;
		}
	}
	ret = connect_args_check(&args, cmd);
	if (ret)
		return ret;

	st.args = &args;
	verbose(&args, cmd, "connecting to the discovery controller at %s, timeout %u ms",
		connect_args_where(&args.opts, addr, sizeof(addr)), args.opts.timeout_ms);
	ret = nvmefs_discover(&args.opts, (int)depth, print_log, &st);
	if (st.write_failed)
		return finish_output(cmd, EXIT_FAIL);
	if (ret) {
		fflush(stdout);
		fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
		return EXIT_FAIL;
	}
	return finish_output(cmd, st.referrals_unread ? EXIT_FAIL : EXIT_OK);
}
