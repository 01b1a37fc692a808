/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether the locked-memory limit lets a mount register what it registers:
 * checked before connecting, whose own registrations would fail first,
 * with a smaller sum than the mount needs and no word of the buffers.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "fs.h"
#include "../export/engine.h"

/* CAP_IPC_LOCK, which lets mlock() and the RDMA device pin past the limit,
 * counts only in the initial user namespace: root of a container's own
 * namespace is held to RLIMIT_MEMLOCK like anyone. */
static bool memlock_unbounded(void)
{
	unsigned long inner, outer, count;
	bool initial = false;
	FILE *f;

	if (geteuid() != 0)
		return false;
	f = fopen("/proc/self/uid_map", "r");
	if (f) {
		initial = fscanf(f, "%lu %lu %lu", &inner, &outer, &count) == 3 && inner == 0 &&
			  outer == 0 && count == 4294967295ul;
		fclose(f);
	}
	return initial;
}

/* @a x @b, or SIZE_MAX past it: a sum no limit covers. */
static size_t mul_sat(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

size_t nvmefs_fs_pinned_need(const struct nvmefs_fs_opts *opts, unsigned int rdma_paths,
			     unsigned int ring_cpus)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t payload = (opts->max_io + page - 1) / page * page;
	size_t per_req = exp_req_bytes(opts->max_io);
	size_t reqs = mul_sat(opts->workers, opts->depth);

	/* Each CPU's ring has an entry for every request the mount keeps in
	 * flight, and each entry's payload is registered where it was allocated. */
	if (ring_cpus)
		per_req = mul_sat(ring_cpus, payload) > SIZE_MAX - per_req ?
			  SIZE_MAX : per_req + mul_sat(ring_cpus, payload);
	return mul_sat(mul_sat(reqs, per_req), rdma_paths);
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

bool nvmefs_fs_memlock_covers(uint64_t limit, size_t need)
{
	return need <= SIZE_MAX - ((size_t)1 << 20) && limit >= (uint64_t)need + (1u << 20);
}

int nvmefs_fs_check_memlock(const struct nvmefs_fs_opts *opts, unsigned int rdma_paths)
{
	unsigned int cpus = ring_cpus(opts);
	size_t need = nvmefs_fs_pinned_need(opts, rdma_paths, cpus);
	char ring[96] = "", paths[64] = "";
	struct rlimit rl;

	if (!need || memlock_unbounded() || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY || nvmefs_fs_memlock_covers(rl.rlim_cur, need))
		return 0;
	if (cpus)
		snprintf(ring, sizeof(ring), ", and FUSE over io_uring's payloads (%u CPUs' rings x "
			 "max_io for each request)", cpus);
	if (rdma_paths > 1)
		snprintf(paths, sizeof(paths), " on each of %u RDMA paths", rdma_paths);
	return exp_error(-ENOMEM, "the request buffers need %zu KiB of locked memory (%u queues x "
			 "--iodepth %u x (max_io %zu KiB + 16 KiB)%s%s), more than RLIMIT_MEMLOCK allows "
			 "(%llu KiB): RDMA registers them, which pins them; raise it ('ulimit -l %zu'; in "
			 "a container, --ulimit memlock=%zu), use fewer or smaller buffers (-i, --iodepth, "
			 "-o max_io%s), or NVMe/TCP (-t tcp), which pins nothing", need >> 10,
			 opts->workers, opts->depth, opts->max_io >> 10, ring, paths,
			 (unsigned long long)rl.rlim_cur >> 10, (need >> 10) + 1024, need + (1u << 20),
			 cpus ? ", -o io_uring=off" : "");
}
