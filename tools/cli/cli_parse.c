// SPDX-License-Identifier: MIT
/*
 * cli_parse.c: the small argument parsers the subcommands share (see cli_parse.h).
 */
#include "cli_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli_pick(const char *value, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(value, names[i]))
			return i;
	return -1;
}
