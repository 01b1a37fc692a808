/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON output in json-c's pretty layout, so that `nvmefs ... -o json` is
 * byte-identical to nvme-cli's (which prints through json-c) without
 * depending on json-c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "text.h"

void json_init(struct json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

void json_init_compact(struct json *j, FILE *out)
{
	json_init(j, out);
	j->compact = true;
}

static void indent(struct json *j, int level)
{
	if (j->compact)
		return;
	for (int i = 0; i < level; i++)
		fputs("  ", j->out);
}

static const char hex[] = "0123456789abcdef";

/* An ASCII character, as json-c escapes it. */
static void escaped_ascii(FILE *out, unsigned char c)
{
	switch (c) {
	case '\b': fputs("\\b", out); break;
	case '\n': fputs("\\n", out); break;
	case '\r': fputs("\\r", out); break;
	case '\t': fputs("\\t", out); break;
	case '\f': fputs("\\f", out); break;
	case '"': fputs("\\\"", out); break;
	case '\\': fputs("\\\\", out); break;
	default:
		if (c < 0x20)
			fprintf(out, "\\u00%c%c", hex[c >> 4], hex[c & 0xf]);
		else
			fputc(c, out);
	}
}

/*
 * Escaped as json-c does, and more: JSON is UTF-8 (RFC 8259), so each byte
 * that is not part of a well-formed sequence (a target's strings are
 * whatever bytes it sent) becomes U+FFFD, as a UTF-8 decoder replaces it,
 * and a C1 control, which terminals obey, is a \u escape.
 */
static void escaped(struct json *j, const char *s)
{
	size_t left = strlen(s), n;

	fputc('"', j->out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p += n, left -= n) {
		n = 1;
		if (*p < 0x80) {
			escaped_ascii(j->out, *p);
		} else if ((n = text_utf8_char((const char *)p, left))) {
			fwrite(p, 1, n, j->out);
		} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(j->out, "\\u00%c%c", hex[p[1] >> 4], hex[p[1] & 0xf]);
			n = 2;
		} else {
			fputs("\\ufffd", j->out);
			n = 1;
		}
	}
	fputc('"', j->out);
}

/* Separator and indent before a value, then its key if it has one. */
static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->had_member[j->depth - 1])
			fputs(j->compact ? "," : ",\n", j->out);
		j->had_member[j->depth - 1] = true;
		indent(j, j->depth);
	}
	if (key) {
		escaped(j, key);
		fputc(':', j->out);
	}
}

static void begin(struct json *j, const char *key, char open)
{
	if (j->error)
		return;
	if (j->depth == JSON_MAX_DEPTH) {
		j->error = -EOVERFLOW;
		return;
	}
	member(j, key);
	fputc(open, j->out);
	if (!j->compact)
		fputc('\n', j->out);
	j->had_member[j->depth++] = false;
}

static void end(struct json *j, char close)
{
	if (j->error || j->depth == 0)
		return;
	if (j->had_member[--j->depth] && !j->compact)
		fputc('\n', j->out);
	indent(j, j->depth);
	fputc(close, j->out);
}

void json_object_begin(struct json *j, const char *key)
{
	begin(j, key, '{');
}

void json_object_end(struct json *j)
{
	end(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	begin(j, key, '[');
}

void json_array_end(struct json *j)
{
	end(j, ']');
}

void json_string(struct json *j, const char *key, const char *s)
{
	if (j->error)
		return;
	member(j, key);
	escaped(j, s);
}

void json_int(struct json *j, const char *key, int64_t v)
{
	if (j->error)
		return;
	member(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
	if (j->error)
		return;
	member(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	if (j->error)
		return;
	member(j, key);
	fputs(v ? "true" : "false", j->out);
}

/* "%.3f" with a point, whatever the locale's decimal point (a comma in
 * de_DE, which main()'s setlocale() takes from the user). */
static const char *json_number_text(double v, char *buf, size_t size)
{
	const char *point = localeconv()->decimal_point;
	size_t len = point ? strlen(point) : 0;
	char *at;

	snprintf(buf, size, "%.3f", v);
	if (len && strcmp(point, ".") && (at = strstr(buf, point))) {
		*at = '.';
		memmove(at + 1, at + len, strlen(at + len) + 1);
	}
	return buf;
}

void json_double(struct json *j, const char *key, double v)
{
	char buf[352];

	if (j->error)
		return;
	member(j, key);
	/* JSON has no NaN or infinity; a measurement that has none is 0. */
	if (v != v || v - v != 0)
		v = 0;
	fputs(json_number_text(v, buf, sizeof(buf)), j->out);
}

void json_uint128(struct json *j, const char *key, const uint8_t le[16])
{
	char buf[JSON_U128_STRLEN];

	json_string(j, key, json_u128_str(le, "", buf));
}

const char *json_u128_str(const uint8_t le[16], const char *sep,
			  char buf[JSON_U128_STRLEN])
{
	uint32_t w[4];
	size_t seplen = strlen(sep);
	int idx = JSON_U128_STRLEN;

	if (seplen > JSON_U128_MAX_SEP)
		seplen = 0;
	/* w[3] most significant, each word little endian on the wire. */
	for (int i = 0; i < 4; i++)
		w[i] = (uint32_t)le[4 * i] | (uint32_t)le[4 * i + 1] << 8 |
		       (uint32_t)le[4 * i + 2] << 16 | (uint32_t)le[4 * i + 3] << 24;

	buf[--idx] = '\0';
	do {
		uint64_t rem = 0;

		/* nvme-cli counts from the end of its buffer, separators
		 * included, which places multi-byte separators oddly; keep
		 * the same arithmetic so the output stays identical. */
		if (seplen && (JSON_U128_STRLEN - idx) % (int)(3 + seplen) == 0) {
			for (size_t i = seplen; i > 0; i--)
				buf[--idx] = sep[i - 1];
		}
		for (int i = 3; i >= 0; i--) {
			uint64_t cur = rem << 32 | w[i];

			w[i] = (uint32_t)(cur / 10);
			rem = cur % 10;
		}
		buf[--idx] = (char)('0' + rem);
	} while (w[0] || w[1] || w[2] || w[3]);

	return buf + idx;
}
