/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's record of each device it serves, one file a device under
 * NVMEFS_UBLK_RUN_DIR, which `nvmefs ublk list` and `del` read: its
 * subsystem, namespace, daemon and state; and the daemon's statistics,
 * which `nvmefs ublk stats` prints.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Written to a file of its own, then renamed into place: a reader sees a
 * whole one.  A failure is kept quiet: the stats are written again in a
 * second, and list and del do not need them. */
static void write_whole(const char *path, const char *text, size_t len)
{
	char tmp[80];
	FILE *f;
	bool ok;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	ok = fwrite(text, 1, len, f) == len;
	ok = !fclose(f) && ok;
	if (!ok || rename(tmp, path) < 0)
		unlink(tmp);
}

void ublk_write_stats(struct ublk_server *s)
{
	struct exp_ns *ns = calloc(s->nr_dev ? s->nr_dev : 1, sizeof(*ns));
	unsigned int n = 0;
	char path[64], *text;
	size_t len;

	if (!ns)
		return;
	/* The devices still served: their namespaces' reach on each path. */
	for (unsigned int i = 0; i < s->nr_dev; i++)
		if (!s->dev[i].removed)
			ns[n++].nsid = s->dev[i].ns.nsid;
	text = exp_stats_json(s->e, ns, n, &len);
	free(ns);
	if (!text)
		return;
	snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%ld.stats", (long)getpid());
	write_whole(path, text, len);
	free(text);
}

void ublk_unrecord_stats(void)
{
	char path[64];

	snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%ld.stats", (long)getpid());
	unlink(path);
}
