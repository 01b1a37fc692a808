/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * assert_bytes(): compare @n bytes and, on mismatch, show both in hex with
 * the first difference.  A macro so the report names the calling line.
 * For the Check unit tests that compare wire images and digests.
 */
#ifndef NVMEFS_TESTS_CHECK_BYTES_H
#define NVMEFS_TESTS_CHECK_BYTES_H

#include <stdint.h>
#include <stdio.h>

#include <check.h>

#define assert_bytes(got, want, n, what) \
	assert_bytes_at(__LINE__, (got), (want), (n), (what))

static inline void assert_bytes_at(int line, const void *got, const void *want,
				   size_t n, const char *what)
{
	const uint8_t *g = got, *w = want;
	char gs[3 * 64 + 1] = "", ws[3 * 64 + 1] = "";
	size_t i, first = n;

	for (i = 0; i < n; i++) {
		if (g[i] != w[i]) {
			first = i;
			break;
		}
	}
	if (first == n)
		return;
	for (i = 0; i < n && i < 64; i++) {
		snprintf(gs + 3 * i, 4, "%02x ", g[i]);
		snprintf(ws + 3 * i, 4, "%02x ", w[i]);
	}
	ck_abort_msg("line %d: %s: byte %zu differs\n  got:  %s\n  want: %s",
		     line, what, first, gs, ws);
}

#endif /* NVMEFS_TESTS_CHECK_BYTES_H */
