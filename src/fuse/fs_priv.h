/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to the FUSE side of `nvmefs mount`: what its files share.
 * fs.c has the FUSE operations, the workers and the mount's life;
 * namespaces.c the namespace files and how they follow the target.
 */
#ifndef NVMEFS_FUSE_FS_PRIV_H
#define NVMEFS_FUSE_FS_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fs.h"

#define INO_INFO 2
#define INO_STATS 3
#define INO_NS_BASE 16
#define MAX_LBA_SIZE 4096

struct ns_file {
	uint32_t nsid;
	uint32_t lba_size;
	uint8_t lba_shift;
	/* Bytes; follows a resize on the target (namespaces.c), read by every
	 * worker. */
	_Atomic uint64_t size;
	/* Removed or replaced on the target: no longer listed, its I/O fails. */
	atomic_bool gone;
	char name[16];
	char nguid[33];
	char eui64[17];
	char uuid[37];
};

struct worker;
struct resv;

struct fs {
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_fs_opts opts;
	struct fuse_session *se;
	int stop_fd;
	atomic_bool stopping;
	/* Workers still with I/O of their own at the end: until none is, every
	 * worker keeps polling its queue, which may carry another's I/O while
	 * the target grants fewer queues. */
	atomic_uint workers_left;
	/* The kernel's INIT reached fs_init(); its outcome was looked at (the
	 * caller told the mount is live, or init_error set). */
	atomic_bool init_called;
	atomic_bool ready_told;
	int init_error;
	size_t bufsize;
	/* Room for NVMEFS_MAX_NAMESPACES: a namespace added on the target gets
	 * its file at the end while the workers read the array. */
	struct ns_file *ns;
	atomic_uint nr_ns;
	struct worker *workers;
	uid_t uid;
	gid_t gid;
	time_t mounted;		/* every file's times: the namespaces do not keep any */
	char *info;
	size_t info_len;
	pthread_mutex_t resv_lock;
	struct resv *resv;
	unsigned int nr_resv;
	/* Statuses already logged: each is logged once. */
	pthread_mutex_t log_lock;
	int logged[32];
	unsigned int nr_logged;
};

/* fs.c: why nvmefs_fs_run() failed (returns @err), a library failure as
 * ours, and the daemon's log. */
__attribute__((format(printf, 2, 3)))
int fs_error(int err, const char *fmt, ...);
int lib_error(int err);
__attribute__((format(printf, 1, 2)))
void fs_log(const char *fmt, ...);

/* namespaces.c */
/* A file for every active namespace, with its identity for xattrs and info. */
int fs_scan_namespaces(struct fs *fs);
/* The library's change callback: files follow resized, added and removed
 * namespaces (set once the mount is live). */
void fs_namespaces_changed(void *arg, enum nvmefs_ctrl_change what);

#endif /* NVMEFS_FUSE_FS_PRIV_H */
