/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "text.h"

size_t text_utf8_char(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;
	unsigned int cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0xa0) ||
	    (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void text_escape(char *dst, size_t size, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, n = strnlen(src, len);

	if (!size)
		return;
	for (size_t i = 0; i < n;) {
		char piece[5];
		size_t step = text_utf8_char(src + i, n - i), plen = step;

		if (step) {
			memcpy(piece, s + i, plen);
		} else {
			step = 1;
			if (s[i] == '\\') {
				memcpy(piece, "\\\\", 2);
				plen = 2;
			} else if (s[i] >= 0x20 && s[i] < 0x7f) {
				piece[0] = (char)s[i];
				plen = 1;
			} else {
				snprintf(piece, sizeof(piece), "\\x%02x", s[i]);
				plen = 4;
			}
		}
		if (o + plen >= size)
			break;
		memcpy(dst + o, piece, plen);
		o += plen;
		i += step;
	}
	dst[o] = '\0';
}

const char *text_where(char *buf, size_t size, const char *traddr, const char *trsvcid)
{
	char addr[TEXT_ESCAPED_SIZE(256)], port[TEXT_ESCAPED_SIZE(32)];

	text_escape(addr, sizeof(addr), traddr, strlen(traddr));
	text_escape(port, sizeof(port), trsvcid, strlen(trsvcid));
	snprintf(buf, size, strchr(traddr, ':') ? "[%s]:%s" : "%s:%s", addr, port);
	return buf;
}

void text_field(char *dst, size_t size, const char *src, size_t len)
{
	size_t n = strnlen(src, len);

	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	while (n && src[n - 1] == ' ')
		n--;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
