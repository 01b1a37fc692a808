/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "perf_layout.h"

unsigned int perf_auto_queues(unsigned int qd, unsigned int threads)
{
	unsigned int per_thread = (qd + PERF_DEPTH_PER_QUEUE - 1) / PERF_DEPTH_PER_QUEUE;

	if (per_thread < 1)
		per_thread = 1;
	if (per_thread > MAX_QUEUES_PER_THREAD)
		per_thread = MAX_QUEUES_PER_THREAD;
	/* --threads is at most PERF_MAX_QUEUES, so each keeps one at least. */
	if (per_thread > PERF_MAX_QUEUES / threads)
		per_thread = PERF_MAX_QUEUES / threads;
	return per_thread * threads;
}

unsigned int perf_auto_threads(unsigned int queues)
{
	return (queues + MAX_QUEUES_PER_THREAD - 1) / MAX_QUEUES_PER_THREAD;
}

unsigned int perf_auto_cpus(const cpu_set_t *allowed, unsigned int threads, unsigned int *cpus,
			    unsigned int room)
{
	unsigned int n = 0;

	for (unsigned int c = 0; c < CPU_SETSIZE && n < threads && n < room; c++)
		if (CPU_ISSET(c, allowed))
			cpus[n++] = c;
	return n;
}

unsigned int perf_queue_depth(unsigned int qd, unsigned int nr_queues, unsigned int k)
{
	return qd / nr_queues + (k < qd % nr_queues);
}
