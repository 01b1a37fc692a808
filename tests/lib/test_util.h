/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers every Check unit test may want, defined once: what the library's
 * last error message says, and little-endian fields read from wire bytes
 * (captured commands, PDUs, log pages) without caring how the host orders
 * its integers.
 */
#ifndef NVMEFS_TESTS_TEST_UTIL_H
#define NVMEFS_TESTS_TEST_UTIL_H

#include <stdint.h>
#include <string.h>

#include <check.h>
#include <nvmefs/ctrl.h>

static inline void assert_msg_has(const char *needle)
{
	ck_assert_msg(strstr(nvmefs_errmsg(), needle) != NULL,
		      "message '%s' lacks '%s'", nvmefs_errmsg(), needle);
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
