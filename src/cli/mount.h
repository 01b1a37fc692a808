/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs mount's command line between its two files: mount.c connects and
 * serves, mount_opts.c takes -o and checks the options before that.
 */
#ifndef NVMEFS_CLI_MOUNT_H
#define NVMEFS_CLI_MOUNT_H

#include <limits.h>
#include <stdbool.h>

#include "cli.h"
#include "daemon.h"
#include "paths.h"
#include "../fuse/fs.h"

struct mount_args {
	struct connect_args conn;
	struct path_args paths;
	struct nvmefs_fs_opts fs;
	struct daemon_args d;
	char mountpoint[PATH_MAX];
	/* -o cached or -o direct, whichever came first, or NULL. */
	const char *cache_opt;
	/* Options for FUSE, comma-separated, built from -o. */
	char fuse_options[1024];
	/* Strings taken from -o (traddr=... and the like) live here. */
	char *owned[16];
	unsigned int nr_owned;
};

/* -o LIST: ours, the connect options by their -o names, and FUSE's.
 * EXIT_OK, EXIT_USAGE, or EXIT_FAIL when a check could not run. */
int mount_options(struct mount_args *m, char *list);

/* -i, -Q, --iodepth or --io-timeout (@opt) with @value.  EXIT_OK or EXIT_USAGE. */
int mount_number_option(struct mount_args *m, int opt, const char *value);

/*
 * After parsing, before anything connects or registers memory: options
 * that contradict each other or that FUSE would refuse, and the mount
 * point, which must be a directory this user may write to.  Fills
 * m->mountpoint.  EXIT_OK or EXIT_USAGE, or EXIT_FAIL when @mountpoint
 * does not exist.
 */
int mount_args_check(struct mount_args *m, const char *mountpoint);

#endif /* NVMEFS_CLI_MOUNT_H */
