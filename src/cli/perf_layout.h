/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The layout nvmefs perf runs with where its command line leaves it open. */
#ifndef NVMEFS_CLI_PERF_LAYOUT_H
#define NVMEFS_CLI_PERF_LAYOUT_H

#include <sched.h>

/* I/Os in flight one queue pair carries well: soft-RoCE (rxe) works through a
 * queue pair's packets one at a time, and in the testbed a thread's depth of
 * 32 over 4 queues of 8 did 1.57x and 1.93x the kernel where one queue of 32
 * did 1.38x and 1.40x (doc/PERFORMANCE-HISTORY.md). */
#define PERF_DEPTH_PER_QUEUE 8
/* A thread's queues share one poll() set, kept on its stack. */
#define MAX_QUEUES_PER_THREAD 16
/* nvmefs perf's --queues and --threads are at most this. */
#define PERF_MAX_QUEUES 256

/* Queues for @threads threads each keeping @qd I/Os in flight: one per
 * PERF_DEPTH_PER_QUEUE of depth, at least one per thread, at most
 * MAX_QUEUES_PER_THREAD per thread and PERF_MAX_QUEUES in all. */
unsigned int perf_auto_queues(unsigned int qd, unsigned int threads);

/* Threads for @queues queues when --threads is not given: one, or as many
 * as keep each at MAX_QUEUES_PER_THREAD queues or fewer. */
unsigned int perf_auto_threads(unsigned int queues);

/* The CPUs threads are pinned to when --cpus is not given: the first
 * @threads of @allowed (the process's affinity, which taskset or a
 * container may have narrowed), thread t on the t-th; with fewer CPUs than
 * threads, every allowed CPU, taken round robin.  Fills @cpus (room for
 * @room) and returns their number, 0 if @allowed is empty. */
unsigned int perf_auto_cpus(const cpu_set_t *allowed, unsigned int threads, unsigned int *cpus,
			    unsigned int room);

/* The I/Os in flight on the @k-th of a thread's @nr_queues queues when the
 * thread keeps @qd: spread evenly, the first ones taking the remainder. */
unsigned int perf_queue_depth(unsigned int qd, unsigned int nr_queues, unsigned int k);

#endif /* NVMEFS_CLI_PERF_LAYOUT_H */
