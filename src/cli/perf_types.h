/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to nvmefs perf: its arguments and workers, which perf_args.c fills, perf.c runs and
 * perf_report.c reports. */
#ifndef NVMEFS_CLI_PERF_TYPES_H
#define NVMEFS_CLI_PERF_TYPES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "paths.h"
#include "../common/histogram.h"
#include "perf_layout.h"

/* --threads is at most 256, so more CPUs than that would go unused. */
#define MAX_CPUS 256

enum workload { WL_READ, WL_WRITE, WL_RANDREAD, WL_RANDWRITE, WL_RANDRW };

struct perf_args {
	struct connect_args conn;
	struct path_args paths;
	uint32_t nsid;
	enum workload rw;
	unsigned int mix;	/* % reads of randrw */
	uint32_t bs;
	unsigned int qd;	/* per thread, spread over its queues */
	unsigned int queues;	/* 0 until chosen (perf_layout.h) */
	bool queues_chosen;	/* not -i: fewer granted is fine */
	unsigned int threads;	/* each drives queues t, t + threads, ...; 0 until chosen */
	bool unpinned;		/* --cpus none */
	char cpus_text[64];	/* the CPUs as a list, for the report */
	unsigned int cpus[MAX_CPUS];	/* thread t runs on cpus[t % nr_cpus] */
	unsigned int nr_cpus;	/* 0: wherever the scheduler puts it */
	unsigned int queue_size;
	unsigned int seconds;
	uint64_t size;		/* 0: to the end of the namespace */
	uint64_t offset;
	bool verify;
	bool quiet;		/* no progress lines */
	bool event_mode;
	bool mode_given;	/* --mode; else poll at --qd 1, events above */
	unsigned int io_timeout_ms;
};

struct worker;

struct slot {
	struct worker *w;
	/* The queue of the subsystem head it uses. */
	struct nvmefs_mpq *mpq;
	uint8_t *buf;
	uint64_t offset;
	uint64_t start_ns;
	bool is_read;
	bool busy;
};

struct worker {
	const struct perf_args *a;
	/* What an outage is given up on after a ^C: the one controller, or
	 * with several paths (a multipath head) the paths that are down. */
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_subsys *subsys;
	/* The thread's I/Os go round-robin over its queues: rxe serializes the
	 * work of one queue pair, so one thread gains from spreading its depth. */
	struct nvmefs_mpq **mpqs;
	unsigned int nr_queues;
	pthread_t thread;
	struct slot *slots;
	unsigned int nr_slots;
	uint64_t rng;
	uint64_t seq_next, seq_begin, seq_end;
	uint64_t seed;
	uint32_t lba_shift;
	uint8_t *scratch;
	atomic_uint_fast64_t ios;	/* read by the progress line */
	uint64_t bytes;
	uint64_t errors;
	int first_status;
	uint64_t verified, mismatches, first_mismatch;
	/* By direction, [0] writes and [1] reads: randrw reports them apart. */
	struct histogram hist[2];
	uint64_t done[2];	/* I/Os that succeeded */
	char error[512];
	bool prefill;		/* writes the whole slice once, then stops */
};

/* The CPU --cpus gives thread @t (only with --cpus). */
static inline unsigned int thread_cpu(const struct perf_args *a, unsigned int t)
{
	return a->cpus[t % a->nr_cpus];
}

/* The most I/Os any one queue carries: a thread's --qd over the fewest
 * queues a thread has. */
static inline unsigned int perf_queue_depth_most(const struct perf_args *a)
{
	return perf_queue_depth(a->qd, a->queues / a->threads, 0);
}

#endif /* NVMEFS_CLI_PERF_TYPES_H */
