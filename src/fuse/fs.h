/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE file system of `nvmefs mount`: each active namespace of a
 * connected controller is a regular file, next to read-only "info" and
 * "stats" files.  The command (src/cli/mount.c) connects, then hands the
 * controller over to nvmefs_fs_run().
 */
#ifndef NVMEFS_FUSE_FS_H
#define NVMEFS_FUSE_FS_H

#include <stdbool.h>
#include <stddef.h>

#include <nvmefs/nvmefs.h>

/* Whether FUSE requests come from an io_uring (FUSE over io_uring).  The
 * default is /dev/fuse, faster than the ring wherever it was measured
 * (doc/PERFORMANCE.md). */
enum nvmefs_fs_ring {
	NVMEFS_FS_RING_OFF,	/* /dev/fuse only */
	NVMEFS_FS_RING_AUTO,	/* when the kernel and libfuse offer it */
	NVMEFS_FS_RING_ON,	/* or the mount fails */
};

struct nvmefs_fs_opts {
	const char *mountpoint;
	/* Workers, each with its own I/O queue. */
	unsigned int workers;
	/* FUSE requests each worker keeps in flight. */
	unsigned int depth;
	/* Largest read or write in one FUSE request (max_read, max_write). */
	size_t max_io;
	/* Entries per I/O queue; 0: enough for depth. */
	unsigned int queue_size;
	unsigned int io_timeout_ms;
	/* Page cache instead of direct I/O. */
	bool cached;
	enum nvmefs_fs_ring io_uring;
	/* The files' owner; -1: whoever mounts. */
	int64_t uid, gid;
	/* Further mount options for the kernel and fusermount3 (allow_other, ...), or NULL. */
	const char *fuse_options;
	/* Called once the mount is live (for --pidfile and the daemon's parent). */
	void (*ready)(void *arg);
	void *ready_arg;
};

/* What a mount with @opts pins: its request buffers and, with FUSE over
 * io_uring on @ring_cpus CPUs (0: /dev/fuse), the rings' payloads, which
 * it registers on first use, each on every one of its @rdma_paths paths
 * over RDMA; NVMe/TCP registers nothing.  SIZE_MAX past what size_t holds. */
size_t nvmefs_fs_pinned_need(const struct nvmefs_fs_opts *opts, unsigned int rdma_paths,
			     unsigned int ring_cpus);
/* 0 when the locked-memory limit covers what a mount with @opts, @rdma_paths
 * of its paths over RDMA, pins; else -ENOMEM with the sum and what to do
 * (nvmefs_fs_errmsg()).  Call it before connecting, whose own
 * registrations would fail first. */
int nvmefs_fs_check_memlock(const struct nvmefs_fs_opts *opts, unsigned int rdma_paths);

/* Whether libfuse takes @opt (one -o option, "allow_other"), parsed as the
 * mount will parse it, without mounting: false also when out of memory. */
bool nvmefs_fs_fuse_option_ok(const char *opt);

/* The I/O queues a mount with @opts needs, which the caller creates on each
 * path before it makes the subsystem head. */
void nvmefs_fs_io_opts(const struct nvmefs_fs_opts *opts, struct nvmefs_io_opts *io);

/*
 * Serve @ctrl's namespaces at opts->mountpoint until unmounted or a
 * SIGINT/SIGTERM: mount, run the workers, and on the way out finish the
 * I/O in flight, flush every namespace and unmount.  All I/O goes through
 * @subsys, the head over @ctrl alone (nvmefs_subsys_create_single()) or
 * over several paths, @ctrl the first, their I/O queues created
 * (nvmefs_fs_io_opts()).  The caller destroys @subsys afterwards.  Returns 0, or -errno with
 * nvmefs_fs_errmsg() set, also when the controller (every path) failed
 * while mounted.
 */
int nvmefs_fs_run(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys,
		  const struct nvmefs_fs_opts *opts);

/* One line: why nvmefs_fs_run() failed, and what to do. */
const char *nvmefs_fs_errmsg(void);

#endif /* NVMEFS_FUSE_FS_H */
