/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an engine needs of the library and of the system, for every front
 * end alike: the I/O queues its requests take, and the locked memory its
 * registered buffers pin, checked before connecting (whose own
 * registrations would fail first, with a smaller sum and no word of the
 * buffers).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine.h"

void exp_io_opts(const struct exp_opts *opts, unsigned int queue_size, unsigned int timeout_ms,
		 struct nvmefs_io_opts *io)
{
	nvmefs_io_opts_init(io);
	io->nr_queues = opts->workers;
	/* Each request needs up to three commands at once (two edges, the middle). */
	io->queue_size = queue_size ? queue_size : opts->depth * 3 + 1;
	io->bufs_per_queue = 1;
	io->buf_size = 4096;
	io->timeout_ms = timeout_ms;
}

/* @a x @b, or SIZE_MAX past it: a sum no limit covers. */
static size_t mul_sat(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static size_t add_sat(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

size_t exp_pinned_need(const struct exp_opts *opts, unsigned int rdma_paths, unsigned int copies,
		       size_t len)
{
	size_t per_req = add_sat(exp_req_bytes(opts->max_io), mul_sat(copies, len));

	return mul_sat(mul_sat(mul_sat(opts->workers, opts->depth), per_req), rdma_paths);
}

bool exp_memlock_covers(uint64_t limit, size_t need)
{
	return need <= SIZE_MAX - ((size_t)1 << 20) && limit >= (uint64_t)need + (1u << 20);
}

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

int exp_check_memlock(size_t need, const char *sum, const char *smaller)
{
	struct rlimit rl;

	if (!need || memlock_unbounded() || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY || exp_memlock_covers(rl.rlim_cur, need))
		return 0;
	return exp_error(-ENOMEM, "the request buffers need %zu KiB of locked memory (%s), more than "
			 "RLIMIT_MEMLOCK allows (%llu KiB): RDMA registers them, which pins them; "
			 "raise it ('ulimit -l %zu'; in a container, --ulimit memlock=%zu), use fewer "
			 "or smaller buffers (%s), or NVMe/TCP (-t tcp), which pins nothing",
			 need >> 10, sum, (unsigned long long)rl.rlim_cur >> 10, (need >> 10) + 1024,
			 need + (1u << 20), smaller);
}
