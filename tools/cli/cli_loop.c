// SPDX-License-Identifier: MIT
/*
 * cli_loop.c: the pieces of a tracing run loop (see cli_loop.h).
 */
#include "cli_loop.h"

#include <stddef.h>
#include <time.h>

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
