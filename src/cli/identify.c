/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs identify: connect to an NVM subsystem and print its Identify
 * Controller data (as `nvme id-ctrl`), a namespace's Identify Namespace
 * data and identification descriptors (as `nvme id-ns` and
 * `nvme ns-descs`), or its active namespaces (as `nvme list-ns`).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "cli.h"

static const char *const cmd = "identify";

enum {
	OPT_NSID = OPT_FIRST_COMMAND_OPTION,
	OPT_LIST_NS,
};

static void help(void)
{
	printf("Usage: nvmefs identify [-t %s] -a TRADDR [-s TRSVCID] -n SUBNQN\n"
	       "                       [--nsid=NSID | --list-ns] [-q HOSTNQN] [-I HOSTID]\n"
	       "                       [-o normal|json] [-v]\n"
	       "\n"
	       "Connect to the NVM subsystem SUBNQN at TRADDR:TRSVCID over RDMA or TCP and\n"
	       "print its Identify Controller data as 'nvme id-ctrl' does; with --nsid, the\n"
	       "namespace's Identify Namespace data and identification descriptors as\n"
	       "'nvme id-ns' and 'nvme ns-descs' do; with --list-ns, the active namespace\n"
	       "IDs as 'nvme list-ns' does.\n"
	       "\n"
	       "Options:\n"
	       "  -n, --nqn=SUBNQN          subsystem NQN (as 'nvmefs discover' lists it); required\n"
	       "      --nsid=NSID           identify namespace NSID (1 to 4294967294)\n"
	       "      --list-ns             list the active namespace IDs\n"
	       CONNECT_HELP
	       HELP_HELP, transports_text(true), CONNECT_HELP_ARGS);
}

/* Identify data, kept off the stack and aligned for whatever the library
 * does with it. */
union identify_buf {
	struct nvme_id_ctrl ctrl;
	struct nvme_id_ns ns;
	uint32_t list[NVME_ID_NS_LIST_MAX];
	uint8_t raw[NVME_IDENTIFY_DATA_SIZE];
};

static int identify_ns(struct nvmefs_ctrl *ctrl, const struct connect_args *args,
		       uint32_t nsid, union identify_buf *data, union identify_buf *descs)
{
	bool have_descs = true;
	int ret;

	verbose(args, cmd, "Identify Namespace %u", nsid);
	ret = nvmefs_identify_ns(ctrl, nsid, &data->ns);
	if (ret)
		return ret;
	verbose(args, cmd, "Identify Namespace Identification Descriptor list of %u", nsid);
	ret = nvmefs_identify_ns_descs(ctrl, nsid, descs->raw);
	if (ret) {
		/* Controllers before NVMe 1.3 have no descriptor list: what
		 * the namespace data says is still worth printing. */
		fprintf(stderr, "nvmefs %s: no namespace identification descriptors: %s\n",
			cmd, nvmefs_errmsg());
		have_descs = false;
	}
	if (args->fmt == OUTPUT_JSON) {
		print_id_ns_with_descs_json(stdout, &data->ns, have_descs ? descs->raw : NULL);
	} else {
		print_id_ns(stdout, &data->ns, nsid, OUTPUT_NORMAL);
		if (have_descs)
			print_ns_descs(stdout, descs->raw, nsid, OUTPUT_NORMAL);
	}
	return 0;
}

static int run(struct connect_args *args, uint32_t nsid, bool list_ns)
{
	union identify_buf *data = NULL, *descs = NULL;
	struct nvmefs_ctrl *ctrl = NULL;
	char addr[300];
	int ret;

	data = calloc(1, sizeof(*data));
	descs = calloc(1, sizeof(*descs));
	if (!data || !descs) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		ret = EXIT_FAIL;
		goto out;
	}

	verbose(args, cmd, "connecting to %s at %s, timeout %u ms", args->opts.subnqn,
		connect_args_where(&args->opts, addr, sizeof(addr)), args->opts.timeout_ms);
	ret = nvmefs_ctrl_connect(&args->opts, &ctrl);
	connect_args_forget_secrets(args);
	if (ret)
		goto failed;
	verbose_connected(args, cmd, ctrl);

	if (nsid) {
		if (identify_ns(ctrl, args, nsid, data, descs))
			goto failed;
	} else if (list_ns) {
		verbose(args, cmd, "Identify Active Namespace ID list");
		if (nvmefs_identify_active_ns(ctrl, 0, data->list))
			goto failed;
		print_ns_list(stdout, data->list, args->fmt);
	} else {
		verbose(args, cmd, "Identify Controller");
		if (nvmefs_identify_ctrl(ctrl, &data->ctrl))
			goto failed;
		print_id_ctrl(stdout, &data->ctrl, args->fmt);
	}
	ret = finish_output(cmd, EXIT_OK);
	goto out;

failed:
	fflush(stdout);
	fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
	ret = EXIT_FAIL;
out:
	if (ctrl) {
		verbose(args, cmd, "disconnecting");
		nvmefs_ctrl_disconnect(ctrl);
	}
	free(descs);
	free(data);
	return ret;
}

int cmd_identify(int argc, char **argv)
{
	static const struct option longopts[] = {
		CONNECT_LONGOPTS,
		{ "nqn", required_argument, NULL, 'n' },
		{ "nsid", required_argument, NULL, OPT_NSID },
		{ "list-ns", no_argument, NULL, OPT_LIST_NS },
		{ NULL, 0, NULL, 0 },
	};
	struct connect_args args;
	bool handled, list_ns = false;
	uint64_t nsid = 0;
	int opt, ret;

	connect_args_init(&args);
	while ((opt = next_option(argc, argv, ":" CONNECT_SHORTOPTS "n:h", longopts)) != -1) {
		ret = connect_args_option(&args, cmd, opt, optarg, &handled);
		if (ret)
			return ret;
		if (handled)
			continue;
		switch (opt) {
		case 'n':
			if (!*optarg)
				return usage_error(cmd, "-n/--nqn needs a value, got an empty one");
			args.opts.subnqn = optarg;
			break;
		case OPT_NSID:
			/* 0 is no namespace and 0xffffffff all of them: neither
			 * has Identify Namespace data of its own. */
			if (parse_uint(optarg, 1, 0xfffffffe, &nsid))
				return usage_error(cmd, "--nsid '%s' is not a namespace ID: give a "
						   "number from 1 to 4294967294", optarg);
			break;
		case OPT_LIST_NS:
			list_ns = true;
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
	if (!args.opts.subnqn)
		return usage_error(cmd, "the subsystem NQN is missing: give it with -n/--nqn "
				   "('nvmefs discover' lists them)");
	if (nsid && list_ns)
		return usage_error(cmd, "--nsid and --list-ns do not go together: give one");
	return run(&args, (uint32_t)nsid, list_ns);
}
