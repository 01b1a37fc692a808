/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "histogram.h"

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

static unsigned int bucket(uint64_t v)
{
	unsigned int msb;

	if (v < HIST_SUB)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	return (msb - HIST_SUB_BITS + 1) * HIST_SUB +
	       (unsigned int)((v >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* The middle of bucket @i. */
static double bucket_value(unsigned int i)
{
	unsigned int range = i / HIST_SUB, sub = i % HIST_SUB;
	double width, low;

	if (range == 0)
		return i;
	width = ldexp(1.0, (int)range - 1);
	low = ldexp(1.0, (int)(range + HIST_SUB_BITS - 1)) + sub * width;
	return low + width / 2;
}

void hist_add(struct histogram *h, uint64_t v)
{
	uint64_t min = LOAD(h->min);

	atomic_fetch_add_explicit(&h->count[bucket(v)], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->n, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum, v, memory_order_relaxed);
	/* Only the owner writes min and max. */
	if (!min || v < min)
		atomic_store_explicit(&h->min, v, memory_order_relaxed);
	if (v > LOAD(h->max))
		atomic_store_explicit(&h->max, v, memory_order_relaxed);
}

void hist_merge(struct histogram *into, const struct histogram *h)
{
	uint64_t n = LOAD(h->n);

	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		into->count[i] += LOAD(h->count[i]);
	into->n += n;
	into->sum += LOAD(h->sum);
	if (n && (!into->min || LOAD(h->min) < into->min))
		into->min = LOAD(h->min);
	if (LOAD(h->max) > into->max)
		into->max = LOAD(h->max);
}

double hist_percentile(const struct histogram *h, double pct)
{
	uint64_t n = 0, want, seen = 0, min = LOAD(h->min), max = LOAD(h->max);
	unsigned int i;

	/* Count the buckets themselves: n may run ahead of them mid-update. */
	for (i = 0; i < HIST_BUCKETS; i++)
		n += LOAD(h->count[i]);
	if (!n)
		return 0;
	want = (uint64_t)ceil(n * pct / 100.0);
	if (!want)
		want = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		uint64_t c = LOAD(h->count[i]);

		seen += c;
		if (c && seen >= want) {
			double v = bucket_value(i);

			/* A bucket's middle can lie outside what was seen. */
			return v < min ? min : v > max ? max : v;
		}
	}
	return max;
}

double hist_mean(const struct histogram *h)
{
	uint64_t n = LOAD(h->n);

	return n ? (double)LOAD(h->sum) / n : 0;
}

uint64_t hist_min(const struct histogram *h) { return LOAD(h->min); }
uint64_t hist_max(const struct histogram *h) { return LOAD(h->max); }
