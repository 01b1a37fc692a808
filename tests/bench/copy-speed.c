/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * copy-speed: what copying 128 KiB costs on this CPU with `rep movsb` and
 * with `rep movsq`, for benchmarks only (tests/bench/mount-cost.sh).  The
 * testbed's emulated CPU offers ERMS without FSRM, so the kernel copies to
 * and from user space with `rep movsb` (and glibc's memcpy uses it for large
 * copies), while the kernel's own memcpy moves 8 bytes at a time; the
 * emulator runs `rep movsb` about 7x slower than `rep movsq`.  So in the
 * testbed a large copy through a user address is dear, and a kernel that
 * moves ublk's data that way (7.x's user copy) pays for it (issue #37).
 *
 *   copy-speed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COPY_LEN (128u << 10)
#define ROUNDS 2000

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

#if defined(__x86_64__)
static void copy_movsb(void *dst, const void *src, size_t len)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

static void copy_movsq(void *dst, const void *src, size_t len)
{
	size_t words = len / 8;

	__asm__ volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(words) : : "memory");
}

/* The mean time of one copy of COPY_LEN bytes, in microseconds. */
static double time_copy(void (*copy)(void *, const void *, size_t), char *dst, const char *src)
{
	double t0 = now_us();

	for (int i = 0; i < ROUNDS; i++)
		copy(dst, src, COPY_LEN);
	return (now_us() - t0) / ROUNDS;
}

int main(void)
{
	char *src = aligned_alloc(4096, COPY_LEN), *dst = aligned_alloc(4096, COPY_LEN);

	if (!src || !dst) {
		fprintf(stderr, "copy-speed: out of memory\n");
		return 1;
	}
	memset(src, 1, COPY_LEN);
	memset(dst, 2, COPY_LEN);
	printf("copying 128 KiB on this CPU: rep movsb %.1f us, rep movsq %.1f us\n",
	       time_copy(copy_movsb, dst, src), time_copy(copy_movsq, dst, src));
	free(src);
	free(dst);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "copy-speed: measures x86-64's string copies only\n");
	return 2;
}
#endif
