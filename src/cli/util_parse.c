/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numbers, sizes and CPU lists from the command line, strictly: no sign
 * (but parse_int's minus), no blanks, nothing after a number but a size
 * suffix or a list separator.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util_parse.h"

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *value)
{
	int base = 10;
	char *end;
	unsigned long long v;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull() would take a sign or leading blanks. */
	if (base == 16 ? !isxdigit((unsigned char)*s) : !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*value = v;
	return 0;
}

/* What parse_uint() takes, with an optional '-' before it: "-1" means
 * "forever" or "off" to nvme-cli's timeouts. */
int parse_int(const char *s, int64_t min, int64_t max, int64_t *value)
{
	bool neg = *s == '-';
	uint64_t mag;
	int64_t v;

	if (parse_uint(s + neg, 0, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &mag))
		return -EINVAL;
	/* 2^63 has no positive int64_t to negate: it can only be INT64_MIN. */
	v = neg ? (mag > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	if (v < min || v > max)
		return -EINVAL;
	*value = v;
	return 0;
}

/* Sizes as fio and dd users write them: 4096, 4k, 128K, 1m, 1G. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *value)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	v <<= shift;
	if (v < min || v > max)
		return -ERANGE;
	*value = v;
	return 0;
}

/* One CPU number: decimal digits only, as taskset takes them. */
static int parse_cpu(const char **s, unsigned long *cpu)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	*cpu = strtoul(*s, &end, 10);
	if (errno)
		return -ERANGE;
	*s = end;
	return 0;
}

int parse_cpu_list(const char *s, unsigned int max_cpu, unsigned int *cpus, unsigned int room,
		   unsigned int *count)
{
	unsigned int n = 0;

	for (;;) {
		unsigned long first, last;
		int ret = parse_cpu(&s, &first);

		if (ret)
			return ret;
		last = first;
		if (*s == '-') {
			s++;
			ret = parse_cpu(&s, &last);
			if (ret)
				return ret;
			if (last < first)
				return -EINVAL;
		}
		if (*s && *s != ',')
			return -EINVAL;
		if (last > max_cpu)
			return -ERANGE;
		for (unsigned long c = first; c <= last; c++) {
			if (n == room)
				return -ERANGE;
			cpus[n++] = (unsigned int)c;
		}
		if (!*s)
			break;
		s++;
	}
	*count = n;
	return 0;
}

int parse_option_line(char *line, char **words, int max)
{
	char *word;
	int n = 0;

	if (line[0] == '#')
		return 0;
	while ((word = strsep(&line, " \t=\r\n"))) {
		if (!*word)
			continue;
		if (n == max)
			return -E2BIG;
		words[n++] = word;
	}
	return n;
}
