/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The namespace files of `nvmefs mount`, and how they follow the target:
 * when the controller reports (by an asynchronous event, or after a
 * reconnect) that namespaces changed, a resized one's file takes the new
 * size, a new one appears as a new file, and one removed or replaced stops
 * being listed while its open files fail their I/O.  The kernel's cached
 * attributes and names are invalidated so that stat and lookup see it.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <fuse_lowlevel.h>

#include "fs_priv.h"

int fs_scan_namespaces(struct fs *fs)
{
	const uint32_t *nsids;
	unsigned int n = nvmefs_ctrl_ns_list(fs->ctrl, &nsids);
	unsigned int nr = 0;
	int ret = 0;

	fs->ns = calloc(NVMEFS_MAX_NAMESPACES, sizeof(*fs->ns));
	if (!fs->ns)
		return exp_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < n && ret == 0; i++) {
		ret = exp_ns_init(fs->ctrl, &fs->ns[nr], nsids[i], "nvmefs mount");
		if (ret == 0) {
			nr++;
		} else if (ret == -EPROTO || ret == -EOPNOTSUPP || ret == -ENODEV) {
			/* That namespace alone: the others are served. */
			exp_logp(LOG_WARNING, "namespace %u is not served: %s", nsids[i],
			         exp_errmsg());
			memset(&fs->ns[nr], 0, sizeof(fs->ns[nr]));
			ret = 0;
		}
	}
	if (ret == 0)
		atomic_store(&fs->nr_ns, nr);
	return ret;
}

/* A file we have: gone, back, resized, or as it was. */
static void ns_file_update(struct fs *fs, unsigned int idx)
{
	struct exp_ns *ns = &fs->ns[idx];
	uint64_t old, size;

	switch (exp_ns_follow(fs->ctrl, ns, &old)) {
	case EXP_NS_SAME:
		return;
	case EXP_NS_GONE:
		exp_logp(LOG_WARNING, "%s: namespace %u was removed or replaced on the target: the file "
		         "is no longer listed, and I/O through open ones fails", ns->name, ns->nsid);
		fuse_lowlevel_notify_inval_entry(fs->se, FUSE_ROOT_ID, ns->name, strlen(ns->name));
		return;
	case EXP_NS_BACK:
		/* Back as it was (enabled again on the target): listed again. */
		exp_logp(LOG_NOTICE, "%s: namespace %u is back on the target", ns->name, ns->nsid);
		break;
	case EXP_NS_RESIZED:
		break;
	}
	size = atomic_load(&ns->size);
	if (size == old)
		return;
	exp_logp(LOG_NOTICE, "%s: namespace %u resized on the target from %" PRIu64 " to %" PRIu64
	         " bytes", ns->name, ns->nsid, old, size);
	fuse_lowlevel_notify_inval_inode(fs->se, INO_NS_BASE + idx, 0, 0);
}

void fs_namespaces_changed(void *arg, enum nvmefs_ctrl_change what)
{
	struct fs *fs = arg;
	const uint32_t *nsids;
	unsigned int n, nr = atomic_load(&fs->nr_ns), i, k;

	if (what != NVMEFS_CHANGE_NAMESPACES)
		return;
	for (k = 0; k < nr; k++)
		ns_file_update(fs, k);
	n = nvmefs_ctrl_ns_list(fs->ctrl, &nsids);
	for (i = 0; i < n && nr < NVMEFS_MAX_NAMESPACES; i++) {
		for (k = 0; k < nr && fs->ns[k].nsid != nsids[i]; k++)
			;
		if (k < nr || exp_ns_init(fs->ctrl, &fs->ns[nr], nsids[i], "nvmefs mount") < 0)
			continue;
		exp_logp(LOG_NOTICE, "%s: namespace %u added on the target (%" PRIu64 " bytes)",
		         fs->ns[nr].name, nsids[i], (uint64_t)atomic_load(&fs->ns[nr].size));
		/* Whole before it is counted: the workers look it up by index. */
		atomic_store(&fs->nr_ns, ++nr);
	}
}
