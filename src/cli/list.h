/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `nvmefs list`: the nvmefs mounts of this host, found in a mountinfo file,
 * each described by its own info and stats files (doc/json/mount-info and
 * mount-stats).  A mount that does not answer is listed with its error.
 */
#ifndef NVMEFS_CLI_LIST_H
#define NVMEFS_CLI_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a mount has to hand over both files: a hung daemon holds open(2)
 * of its files forever, and one such mount must not hang the listing. */
#define LIST_TIMEOUT_MS 5000
/* No info or stats file comes near this; a bigger one is not nvmefs's. */
#define LIST_FILE_MAX (4u << 20)

struct list_path {
	char *trtype;
	char *traddr;
	char *trsvcid;
	char *state;	/* NULL in a mount over one path: the mount's state */
};

struct list_ns {
	char *file;
	uint32_t nsid;
	uint64_t size;
};

struct list_mount {
	char *mountpoint;
	/* From info; from the mount's source (nvmefs:NQN) while it does not answer. */
	char *subnqn;
	/* 0, or the -errno of what kept its files from being read and understood. */
	int error;
	/* The rest only when error is 0. */
	char *state;		/* the controller's, as in stats */
	char *iopolicy;		/* NULL over one path */
	struct list_path *paths;
	size_t nr_paths;
	struct list_ns *ns;
	size_t nr_ns;
	uint64_t reads, writes, read_bytes, write_bytes, errors;
};

/*
 * The fuse.nvmefs mounts in @mountinfo (/proc/self/mountinfo's format) that
 * user @uid can read (its own, any with allow_other; every one for root),
 * in its order, each read within @timeout_ms.  Returns 0 with the array in
 * *@out (free with list_mounts_free()), or -errno when @mountinfo cannot be
 * read or memory runs out.
 */
int list_mounts(const char *mountinfo, uid_t uid, int timeout_ms,
		struct list_mount **out, size_t *nr);
void list_mounts_free(struct list_mount *m, size_t nr);

/* What went wrong with a mount, for a user: one phrase, with what to do. */
const char *list_error_text(int error);

#endif /* NVMEFS_CLI_LIST_H */
