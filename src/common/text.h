/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Target strings made safe for a terminal, for the CLI and the mount alike. */
#ifndef NVMEFS_COMMON_TEXT_H
#define NVMEFS_COMMON_TEXT_H

#include <stddef.h>

/*
 * The length of the well-formed UTF-8 sequence of a printable character
 * at @s (at most @n bytes), or 0: no overlongs, no surrogates, nothing past
 * U+10FFFF (RFC 3629), and no C1 control (U+0080 to U+009F), which many
 * terminals obey as they do ESC.
 */
size_t text_utf8_char(const char *s, size_t n);

/* The longest text_escape() makes of @len bytes, with its NUL. */
#define TEXT_ESCAPED_SIZE(len) (4 * (len) + 1)

/*
 * Copies the bytes of @src up to @len or its first NUL into @dst (@size
 * bytes, NUL-terminated), with printable ASCII and well-formed UTF-8 as they
 * are and every other byte (control characters, C1 controls, a stray byte
 * of a broken sequence) as \xHH, and a backslash as \\, so that nothing a target sends
 * can move the cursor, clear the screen or pass for another string.
 * Truncates at a whole character when @dst is too small.
 */
void text_escape(char *dst, size_t size, const char *src, size_t len);

/*
 * A fixed-width field of a discovery log entry (TRADDR, TRSVCID, SUBNQN:
 * @len bytes at @src, padded with spaces or NULs, without a NUL when full)
 * as a string in @dst (@size bytes): up to @len bytes or the first NUL,
 * cut to @size - 1, without the trailing spaces left after the cut.
 * Reads nothing past @len; writes nothing when @size is 0.
 */
void text_field(char *dst, size_t size, const char *src, size_t len);

/* Big enough for text_where() of any TRADDR (256) and TRSVCID (32). */
#define TEXT_WHERE_SIZE (TEXT_ESCAPED_SIZE(256) + TEXT_ESCAPED_SIZE(32) + 3)

/*
 * "@traddr:@trsvcid" ("[@traddr]:@trsvcid" for IPv6) into @buf, both
 * escaped as text_escape() does: an address may come from a discovery log.
 * Returns @buf.
 */
const char *text_where(char *buf, size_t size, const char *traddr, const char *trsvcid);

#endif /* NVMEFS_COMMON_TEXT_H */
