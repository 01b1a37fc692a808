/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's record of each device it serves, one file a device under
 * NVMEFS_UBLK_RUN_DIR, which `nvmefs ublk list` and `del` read: its
 * subsystem, namespace, daemon and state.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "ublk_priv.h"

void ublk_record(struct ublk_server *s, const struct ublk_dev *d)
{
	char path[64], tmp[72];
	FILE *f;
	bool ok;

	mkdir("/run/nvmefs", 0755);
	mkdir(NVMEFS_UBLK_RUN_DIR, 0755);
	snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%d", d->id);
	/* Renamed into place: list and del, reading it meanwhile, see it whole. */
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	ok = f != NULL;
	if (f) {
		ok = fprintf(f, "%s\n%u\n%ld\n%s\n", s->opts->subnqn, d->ns.nsid, (long)getpid(),
			     atomic_load(&d->ns.gone) ? "gone" : "live") > 0;
		ok = !fclose(f) && ok;
	}
	ok = ok && rename(tmp, path) == 0;
	if (!ok) {
		exp_logp(LOG_WARNING, "recording ublkb%d in %s failed: %m: nvmefs ublk list will "
			 "not show it", d->id, path);
		unlink(tmp);
	}
}

void ublk_unrecord(const struct ublk_dev *d)
{
	char path[64];

	snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%d", d->id);
	unlink(path);
}
