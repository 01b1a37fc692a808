/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers every Check unit test may want, defined once: what the library's
 * last error message says, what a transport says of itself, and
 * little-endian fields read from wire bytes (captured commands, PDUs, log
 * pages) without caring how the host orders its integers.
 */
#ifndef NVMEFS_TESTS_TEST_UTIL_H
#define NVMEFS_TESTS_TEST_UTIL_H

#include <stdint.h>
#include <string.h>

#include <check.h>
#include <nvmefs/ctrl.h>
#include <nvmefs/transport.h>

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
