/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Latency histograms: 16 linear buckets per power of two, so any percentile
 * is within 1/16 of the truth at every scale, in fixed memory.  One thread
 * adds to a histogram; others may read it at any time (relaxed atomics: a
 * snapshot may be a few samples behind, never torn).
 */
#ifndef NVMEFS_COMMON_HISTOGRAM_H
#define NVMEFS_COMMON_HISTOGRAM_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define HIST_SUB_BITS 4
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (64 * HIST_SUB)

struct histogram {
	atomic_uint_fast64_t count[HIST_BUCKETS];
	atomic_uint_fast64_t n, sum, min, max;
};

/* The monotonic clock in nanoseconds, what latencies are measured with. */
static inline uint64_t hist_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hist_add(struct histogram *h, uint64_t v);
/* Adds @h's samples to @into (a private copy nobody else writes). */
void hist_merge(struct histogram *into, const struct histogram *h);
/* The value at percentile @pct (0 to 100), in the unit of the samples. */
double hist_percentile(const struct histogram *h, double pct);
double hist_mean(const struct histogram *h);
uint64_t hist_min(const struct histogram *h);
uint64_t hist_max(const struct histogram *h);

#endif /* NVMEFS_COMMON_HISTOGRAM_H */
