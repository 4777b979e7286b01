// SPDX-License-Identifier: MIT
/*
 * text_escape.c: outside text made safe for a terminal (see text_escape.h).
 */
#include "text_escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t left)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	/* The second byte's range is what rules out overlong forms, surrogates and > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static uint32_t code_point(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & lead_mask[n];

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Unicode controls a terminal or an editor acts on: C1, bidi embeddings and isolates,
 * directional marks, line and paragraph separators. */
static int unicode_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape for the ASCII byte @c, or NULL when it stands for itself. */
static const char *ascii_escape(unsigned char c, char buf[5])
{
	static const char letters[] = "abtnvfr"; /* \a is 7 ... \r is 13 */

	if (c == '\\')
		return "\\\\";
	if (c == 0x1b)
		return "\\e";
	if (c >= 7 && c <= 13) {
		buf[0] = '\\';
		buf[1] = letters[c - 7];
		buf[2] = '\0';
		return buf;
	}
	if (c < 0x20 || c == 0x7f) {
		snprintf(buf, 5, "\\x%02x", c);
		return buf;
	}
	return NULL;
}

/* Append @piece of @n bytes if it fits whole; the total grows either way. */
static void put(char *out, size_t len, size_t *total, int *cut, const char *piece, size_t n)
{
	if (!*cut && *total + n < len)
		memcpy(out + *total, piece, n);
	else
		*cut = 1;
	*total += n;
}

size_t text_escape(char *out, size_t len, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t total = 0, slen = strlen(s), kept = 0;
	int cut = 0;

	for (size_t i = 0, n; i < slen; i += n) {
		char buf[12];
		const char *esc = NULL;

		n = utf8_seq_len(u + i, slen - i);
		if (!n) {
			snprintf(buf, sizeof(buf), "\\x%02x", u[i]);
			esc = buf;
			n = 1;
		} else if (n == 1) {
			esc = ascii_escape(u[i], buf);
		} else if (unicode_control(code_point(u + i, n))) {
			snprintf(buf, sizeof(buf), "\\u%04x", (unsigned)code_point(u + i, n));
			esc = buf;
		}
		put(out, len, &total, &cut, esc ? esc : s + i, esc ? strlen(esc) : n);
		if (!cut)
			kept = total;
	}
	if (len)
		out[kept] = '\0';
	return total;
}

char *text_escape_dup(const char *s)
{
	size_t need = text_escape(NULL, 0, s) + 1;
	char *out = malloc(need);

	if (out)
		text_escape(out, need, s);
	return out;
}

void text_escape_fputs(const char *s, FILE *out)
{
	char *esc = text_escape_dup(s);

	fputs(esc ? esc : "(out of memory)", out);
	free(esc);
}

void text_escape_vfprintf(FILE *out, const char *fmt, va_list ap)
{
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("(out of memory)", out);
		return;
	}
	text_escape_fputs(msg, out);
	free(msg);
}
