/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine's options for a mount, and what the mount pins, in the
 * mount's words: the engine's request buffers and, with FUSE over
 * io_uring, the rings' payloads.  The rule and the check are the engine's
 * (src/export/limits.c).
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <stdio.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "fs_priv.h"
#include "ring_msg.h"

struct exp_opts fs_engine_opts(const struct nvmefs_fs_opts *opts)
{
	return (struct exp_opts){ .workers = opts->workers, .depth = opts->depth,
				  .max_io = opts->max_io };
}

size_t fs_ring_slot_bytes(const struct nvmefs_fs_opts *opts)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t payload = (opts->max_io + page - 1) / page * page;

	/* The kernel refuses a payload shorter than FUSE_MIN_READ_BUFFER
	 * (8 KiB), max_write, or max_pages (max_write in pages, from INIT). */
	if (payload < 8192)
		payload = 8192;
	return RING_HEAD + payload;
}

size_t nvmefs_fs_pinned_need(const struct nvmefs_fs_opts *opts, unsigned int rdma_paths,
			     unsigned int ring_cpus)
{
	struct exp_opts eo = fs_engine_opts(opts);

	/* Each CPU's ring has an entry for every request the mount keeps in
	 * flight, and each entry's payload, with the room for its headers, is
	 * registered when the mount starts. */
	return exp_pinned_need(&eo, rdma_paths, ring_cpus, fs_ring_slot_bytes(opts));
}

/* How many CPUs' rings a mount with @opts registers payloads of: none
 * without libfuse 3.18 or with /dev/fuse (-o io_uring=off, the default). */
static unsigned int ring_cpus(const struct nvmefs_fs_opts *opts)
{
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)
	if (opts->io_uring != NVMEFS_FS_RING_OFF)
		return (unsigned int)get_nprocs_conf();
#else
	(void)opts;
#endif
	return 0;
}

int nvmefs_fs_check_memlock(const struct nvmefs_fs_opts *opts, unsigned int rdma_paths)
{
	unsigned int cpus = ring_cpus(opts);
	char sum[320], ring[128] = "", paths[64] = "";

	if (cpus)
		snprintf(ring, sizeof(ring), ", and FUSE over io_uring's payloads (%u CPUs' rings x "
			 "(max_io + 4 KiB) for each request)", cpus);
	if (rdma_paths > 1)
		snprintf(paths, sizeof(paths), " on each of %u RDMA paths", rdma_paths);
	snprintf(sum, sizeof(sum), "%u queues x --iodepth %u x (max_io %zu KiB + 16 KiB)%s%s",
		 opts->workers, opts->depth, opts->max_io >> 10, ring, paths);
	return exp_check_memlock(nvmefs_fs_pinned_need(opts, rdma_paths, cpus), sum,
				 cpus ? "-i, --iodepth, -o max_io, -o io_uring=off" :
				 "-i, --iodepth, -o max_io");
}
