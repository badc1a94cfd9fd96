/* SPDX-License-Identifier: MIT */
/*
 * JSON strings and text made safe to print (json.h says why).
 */
#include "json.h"

#include <stdint.h>
#include <string.h>

size_t hx_utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0; /* continuation byte, 0xc0/0xc1 (overlong) or > 0xf4 */
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* The code point of a valid sequence of length len. */
static uint32_t code_point(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

void hx_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	n = strlen(str);
	fputc('"', f);
	while (n) {
		size_t len = hx_utf8_len(s, n);
		uint32_t cp;

		if (len == 0) {
			fprintf(f, "\\\\x%02x", s[0]);
			s++, n--;
			continue;
		}
		cp = code_point(s, len);
		if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (int)cp);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(s, 1, len, f);
		s += len, n -= len;
	}
	fputc('"', f);
}

void hx_text_write_safe(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	while (n) {
		size_t len = hx_utf8_len(s, n);
		uint32_t cp;

		if (len == 0) {
			fprintf(f, "\\x%02x", s[0]);
			s++, n--;
			continue;
		}
		cp = code_point(s, len);
		if (cp == '\n' || (cp >= 0x20 && cp < 0x7f) || cp > 0x9f)
			fwrite(s, 1, len, f);
		else if (cp < 0x80)
			fprintf(f, "\\x%02x", (unsigned)cp);
		else
			fprintf(f, "\\u%04x", (unsigned)cp);
		s += len, n -= len;
	}
}
