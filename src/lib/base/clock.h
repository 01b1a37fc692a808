/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NVMEFS_CLOCK_H
#define NVMEFS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The monotonic clock in milliseconds: deadlines and keep-alive. */
static inline int64_t nvmefs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* NVMEFS_CLOCK_H */
