/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's record of each device it serves, one file a device under
 * NVMEFS_UBLK_RUN_DIR, which `nvmefs ublk list`, `del` and `recover`
 * read (record_fmt.c): its subsystem, namespace, daemon and state, and the
 * options ublk recover starts a daemon with; and the daemon's statistics,
 * which `nvmefs ublk stats` prints.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "ublk_priv.h"

void ublk_record(struct ublk_server *s, const struct ublk_dev *d)
{
	struct nvmefs_ublk_record r = { .nsid = d->ns.nsid, .pid = (long)getpid(),
					.gone = atomic_load(&d->ns.gone),
					.nr_args = s->opts->nr_args, .args = (char **)s->opts->args };
	char path[64], tmp[72];
	FILE *f = NULL;
	int fd, ret = -EIO;

	snprintf(r.nqn, sizeof(r.nqn), "%s", s->opts->subnqn);
	mkdir("/run/nvmefs", 0755);
	mkdir(NVMEFS_UBLK_RUN_DIR, 0755);
	nvmefs_ublk_record_path(path, sizeof(path), d->id);
	/* Renamed into place: list and del, reading it meanwhile, see it whole.
	 * Root's alone: the options ublk recover takes may hold a secret. */
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		f = fdopen(fd, "w");
	if (f) {
		ret = nvmefs_ublk_record_write(f, &r);
		if (fclose(f) && !ret)
			ret = -EIO;
	} else if (fd >= 0) {
		close(fd);
	}
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0) {
		exp_logp(LOG_WARNING, "recording ublkb%d in %s failed: %s: nvmefs ublk list will "
			 "not show it", d->id, path, strerror(-ret));
		unlink(tmp);
	}
}

void ublk_unrecord(const struct ublk_dev *d)
{
	char path[64];

	nvmefs_ublk_record_path(path, sizeof(path), d->id);
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
	nvmefs_ublk_stats_path(path, sizeof(path), (long)getpid());
	write_whole(path, text, len);
	free(text);
}

void ublk_unrecord_stats(pid_t pid)
{
	char path[64];

	nvmefs_ublk_stats_path(path, sizeof(path), (long)pid);
	unlink(path);
}
