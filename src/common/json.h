/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small streaming JSON writer whose output is byte for byte what json-c
 * prints with JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE,
 * which is how nvme-cli prints everything: two-space indent, "key":value
 * without a space, an empty container as "{" newline indent "}", control
 * characters as \u00xx, '/' and bytes >= 0x7f left alone.
 *
 * Values are written as they come, in order; @key is NULL for a value that
 * is an array element or the top-level value.  The writer adds no newline
 * after the top-level value (nvme-cli prints one itself).
 *
 * json_init_compact() writes the same values on one line with no
 * whitespace at all, as `jq -c` prints them: for JSON Lines output, one
 * document per line.
 */
#ifndef NVMEFS_COMMON_JSON_H
#define NVMEFS_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deep enough for every document nvmefs prints (they nest three levels). */
#define JSON_MAX_DEPTH 16

struct json {
	FILE *out;
	int depth;
	/* Whether the container open at each depth has a member yet. */
	bool had_member[JSON_MAX_DEPTH];
	/* -EOVERFLOW once nesting went past JSON_MAX_DEPTH; output stops. */
	int error;
	/* No newlines, no indent (json_init_compact()). */
	bool compact;
};

void json_init(struct json *j, FILE *out);
void json_init_compact(struct json *j, FILE *out);
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *s);
void json_int(struct json *j, const char *key, int64_t v);
void json_uint(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, bool v);
/* A measurement, with three decimals (nvme-cli prints none: this is ours). */
void json_double(struct json *j, const char *key, double v);
/* A 128-bit little-endian integer, as a decimal string (JSON numbers lose
 * precision past 2^53 in most readers). */
void json_uint128(struct json *j, const char *key, const uint8_t le[16]);

/* Digits of a 128-bit integer are at most 39; room for a separator of up to
 * JSON_U128_MAX_SEP bytes after every digit is more than enough. */
#define JSON_U128_MAX_SEP 8
#define JSON_U128_STRLEN (39 * (1 + JSON_U128_MAX_SEP) + 1)

/*
 * The 128-bit little-endian integer @le in decimal, with @sep inserted
 * between groups of three digits as nvme-cli's uint128_t_to_l10n_string()
 * does (including its placement for multi-byte separators).  A @sep longer
 * than JSON_U128_MAX_SEP is ignored.  Returns a pointer into @buf.
 */
const char *json_u128_str(const uint8_t le[16], const char *sep,
			  char buf[JSON_U128_STRLEN]);

#endif /* NVMEFS_COMMON_JSON_H */
