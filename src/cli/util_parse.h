/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing command-line numbers, shared by the nvmefs command and the test
 * programs.  Each returns 0 or -errno: -EINVAL for what is not a number of
 * its kind, -ERANGE for one out of bounds (parse_uint and parse_int:
 * -EINVAL for that too).
 */
#ifndef NVMEFS_CLI_UTIL_PARSE_H
#define NVMEFS_CLI_UTIL_PARSE_H

#include <stdint.h>

/* Unsigned decimal (or 0x hexadecimal) in [@min, @max], nothing else. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *value);

/* Signed: what parse_uint() takes, optionally after a '-' ("-1", "-0x10"),
 * in [@min, @max]; -EINVAL for anything else, out of range included. */
int parse_int(const char *s, int64_t min, int64_t max, int64_t *value);

/* A size as fio and dd users write it (4096, 4k, 128K, 1m, 1G, 1GiB) in [@min, @max]. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *value);

/* A CPU list as taskset -c takes it ("0", "0,2", "1-3,6"), in the order
 * given, into @cpus (room for @room); *@count is how many.  A descending
 * range is -EINVAL; a CPU above @max_cpu or more CPUs than @room, -ERANGE. */
int parse_cpu_list(const char *s, unsigned int max_cpu, unsigned int *cpus, unsigned int room,
		   unsigned int *count);

/*
 * One line of an option file such as /etc/nvme/discovery.conf, split as
 * nvme-cli splits it into arguments: at spaces, tabs and '='.  At most @max
 * words, pointing into @line (which is changed): their number, 0 for a blank
 * line or a comment ('#' first), or -E2BIG past @max.
 */
int parse_option_line(char *line, char **words, int max);

#endif /* NVMEFS_CLI_UTIL_PARSE_H */
