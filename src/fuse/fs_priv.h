/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to the FUSE side of `nvmefs mount`: what its files share.
 * fs_ops.c has the FUSE operations; adapter.c what the export engine
 * (src/export) calls back, and the reading of /dev/fuse for loop.c's
 * threads, which serve it; serve.c the
 * mount's life; namespaces.c the namespace files and how they follow the
 * target.  Errors and the log are the engine's (exp_error(), exp_log()).
 */
#ifndef NVMEFS_FUSE_FS_PRIV_H
#define NVMEFS_FUSE_FS_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 34
#endif
#include <fuse_lowlevel.h>

#include "fs.h"
#include "loop.h"
#include "../export/engine.h"

#define INO_INFO 2
#define INO_STATS 3
#define INO_NS_BASE 16

struct fs {
	/* The controller (with several paths, the first), and the head over
	 * its paths, which all I/O goes through. */
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_subsys *subsys;
	struct nvmefs_fs_opts opts;
	struct fuse_session *se;
	/* The engine that serves the namespace files' I/O, and the threads
	 * that drive it from /dev/fuse. */
	struct exp *exp;
	struct fs_loop *loop;
	int stop_fd;
	/* Asked to stop (signal, unmount, INIT refused): read by serve.c. */
	atomic_bool stopping;
	/* The kernel's INIT reached fs_init(); its outcome was looked at (the
	 * caller told the mount is live, or init_error set). */
	atomic_bool init_called;
	atomic_bool ready_told;
	int init_error;
	/* FUSE over io_uring: asked for in INIT's reply; ring.c's threads. */
	atomic_bool ring_asked;
	struct fs_ring *ring;
	/* Room for NVMEFS_MAX_NAMESPACES: a namespace added on the target gets
	 * its file at the end while the workers read the array. */
	struct exp_ns *ns;
	atomic_uint nr_ns;
	uid_t uid;
	gid_t gid;
	time_t mounted;		/* every file's times: the namespaces do not keep any */
	char *info;
	size_t info_len;
};

/* fs_ops.c: the FUSE operations and the info file (the stats file's text is
 * the engine's exp_stats_json()). */
extern const struct fuse_lowlevel_ops fs_lowlevel_ops;
int fs_build_info(struct fs *fs);

/* adapter.c: what the engine calls, turning its cookies back into FUSE
 * requests, and what loop.c calls, reading /dev/fuse and handing requests
 * to libfuse. */
extern const struct exp_ops fs_exp_ops;
extern const struct fs_loop_ops fs_loop_ops;
/* The I/O of @req, from fs_ops.c: exp_submit() of the request being handed
 * to libfuse on this thread (/dev/fuse), or of the ring (fs_ring_io()). */
void fs_io(fuse_req_t req, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
	   const void *data);

/* memlock.c: what each request the mount keeps in flight takes of a CPU's
 * FUSE ring: an entry's payload and the room for its headers in front. */
size_t fs_ring_slot_bytes(const struct nvmefs_fs_opts *opts);

/* ring.c: FUSE over io_uring served by the workers, with libfuse >= 3.18. */
/* Before mounting: the workers' rings and their payloads, registered with
 * the controller, unless -o io_uring=off or the kernel does not offer it
 * (-o io_uring=on then fails: -errno with exp_error()). */
int fs_ring_setup(struct fs *fs);
/* Once mounted, before the workers start: libfuse's replies go through
 * ring.c (fuse_session_custom_io()), which puts those of the ring's
 * requests into their entries; without custom io in libfuse, -o
 * io_uring=on fails (-errno with exp_error()) and the default is /dev/fuse. */
int fs_ring_attach(struct fs *fs);
/* From fs_init(): whether the kernel offers it at INIT; INIT's reply then
 * asks for it (libfuse's own ring threads stay off). */
void fs_ring_init(struct fs *fs, struct fuse_conn_info *conn);
/* Once INIT is answered: tells the engine whether requests come from the ring. */
int fs_ring_started(struct fs *fs);
/* The I/O of @req when it came in a ring entry and libfuse is handling it
 * on this thread: started on the thread's worker from the entry's payload,
 * or parked (true); else false. */
bool fs_ring_io(fuse_req_t req, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
		const void *data);
/* The request of an engine's @cookie, about to be replied to on this thread
 * (a ring entry's reply then goes into the entry). */
fuse_req_t fs_ring_replying(void *cookie);
/* loop.c's hooks for thread @i: its ring in @epfd, its requests served,
 * and the commands its pass queued handed to the kernel. */
int fs_ring_watch(struct fs *fs, unsigned int i, int epfd);
bool fs_ring_run(struct fs *fs, unsigned int i);
void fs_ring_flush(struct fs *fs, unsigned int i);
/* After the session was unmounted: the rings closed, the payloads'
 * registrations released. */
void fs_ring_close(struct fs *fs);
/* Then the rest freed. */
void fs_ring_destroy(struct fs *fs);

/* serve.c: a libfuse log function that says nothing, while nvmefs says it
 * in its own words. */
void fs_quiet_log(enum fuse_log_level level, const char *fmt, va_list ap);

/* memlock.c: the engine's options for a mount with @opts (its workers,
 * their depth, the largest request), for the engine and its rules alike. */
struct exp_opts fs_engine_opts(const struct nvmefs_fs_opts *opts);

/* namespaces.c */
/* A file for every active namespace, with its identity for xattrs and info. */
int fs_scan_namespaces(struct fs *fs);
/* The library's change callback: files follow resized, added and removed
 * namespaces (set once the mount is live). */
void fs_namespaces_changed(void *arg, enum nvmefs_ctrl_change what);

#endif /* NVMEFS_FUSE_FS_PRIV_H */
