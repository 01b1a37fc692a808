/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing command-line numbers, shared by the nvmefs command and the test
 * programs.  Both return 0, or -EINVAL (not a number) / -ERANGE (parse_size
 * only: outside [@min, @max]; parse_uint returns -EINVAL for that too).
 */
#ifndef NVMEFS_CLI_UTIL_PARSE_H
#define NVMEFS_CLI_UTIL_PARSE_H

#include <stdint.h>

/* Unsigned decimal (or 0x hexadecimal) in [@min, @max], nothing else. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *value);

/* A size as fio and dd users write it (4096, 4k, 128K, 1m, 1G, 1GiB) in [@min, @max]. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *value);

#endif /* NVMEFS_CLI_UTIL_PARSE_H */
