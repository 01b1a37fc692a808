/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs discover's entry: the target the command line names, or with none
 * those /etc/nvme/discovery.conf lists, as 'nvme discover' reads them.  Apart
 * from both, so that the file's reader can run discover's parser and
 * discovery without discover calling back into it.
 */
#include "config.h"

#include "discover.h"

static const char *const cmd = "discover";

int cmd_discover(int argc, char **argv)
{
	struct discover_args d;
	int ret;

	discover_args_init(&d);
	ret = discover_parse(&d, argc, argv);
	if (ret)
		return ret;
	if (d.help) {
		discover_help();
		return finish_output(cmd, EXIT_OK);
	}
	/* No target named: the ones /etc/nvme/discovery.conf lists, as 'nvme
	 * discover' reads them; -t alone names no target and is refused. */
	if (!d.args.opts.traddr)
		return d.args.opts.trtype ? usage_error(cmd, "the target's address is missing: give "
							"it with -a/--traddr")
					  : discover_from_conf(&d);
	return discover_run(&d);
}
