/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers every Check unit test may want, defined once: its main(), what
 * the library's last error message says, what a transport says of itself,
 * bytes compared with a hex report of the first difference (wire images,
 * digests), and little-endian fields read from wire bytes (captured
 * commands, PDUs, log pages) without caring how the host orders its
 * integers.
 */
#ifndef NVMEFS_TESTS_TEST_UTIL_H
#define NVMEFS_TESTS_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvmefs/ctrl.h>
#include <nvmefs/transport.h>

/* A test program's main(): every case of @s, printed as @mode says (CK_ENV:
 * as CK_VERBOSITY does); the program's exit status. */
static inline int run_suite(Suite *s, enum print_output mode)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, mode);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static inline void assert_msg_has(const char *needle)
{
	ck_assert_msg(strstr(nvmefs_errmsg(), needle) != NULL,
		      "message '%s' lacks '%s'", nvmefs_errmsg(), needle);
}

/* A row of the transport table as nvmefs_transport_info(trtype) must
 * describe it. */
struct transport_want {
	const char *trtype, *name, *trsvcid, *disc;
	unsigned int opts;
	int pins;
};

static inline void assert_transport_info(const struct transport_want *w)
{
	struct nvmefs_transport_info info = { .size = sizeof(info) };

	ck_assert_int_eq(nvmefs_transport_info(w->trtype, &info), 0);
	ck_assert_uint_eq(info.size, sizeof(info));
	ck_assert_str_eq(info.name, w->name);
	ck_assert_str_eq(info.trsvcid, w->trsvcid);
	ck_assert_str_eq(info.discovery_trsvcid, w->disc);
	ck_assert_uint_eq(info.allowed_opts, w->opts);
	ck_assert_int_eq(info.pins_memory, w->pins);
}

/* Compare @n bytes; on a mismatch show both in hex with the first
 * difference.  A macro so that the report names the calling line. */
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

static inline uint16_t le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64_at(const uint8_t *p)
{
	return le32_at(p) | (uint64_t)le32_at(p + 4) << 32;
}

#endif /* NVMEFS_TESTS_TEST_UTIL_H */
