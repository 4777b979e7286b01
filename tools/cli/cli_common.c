// SPDX-License-Identifier: MIT
/*
 * cli_common.c: what the subcommands share (see cli_common.h).
 */
#include "cli_common.h"

#include <errno.h>
#include <time.h>
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

volatile sig_atomic_t cli_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_stop_on_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
