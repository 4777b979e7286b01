// SPDX-License-Identifier: MIT
/*
 * title.c: process titles as bytes and as the command line rules match (see title.h).
 */
#include "title.h"

size_t title_length(const char *area, size_t arg_len, size_t limit)
{
	size_t len = arg_len;

	if (!len)
		return 0;
	if (len >= TITLE_MAX)
		return TITLE_MAX; /* a longer command line: rules match its first TITLE_MAX bytes */
	if (area[len - 1] != '\0') {
		while (len < limit && len < TITLE_MAX && area[len] != '\0')
			len++;
	}
	return len;
}

void title_to_cmdline(const char *bytes, size_t len, char *out, size_t outlen)
{
	size_t n = len < outlen - 1 ? len : outlen - 1;

	while (n && bytes[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		out[i] = bytes[i] ? bytes[i] : ' ';
	out[n] = '\0';
}
