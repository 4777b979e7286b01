/* SPDX-License-Identifier: MIT */
/*
 * cli_common.h: what the subcommands share: the small argument parsers, so "--interval 0.5"
 * or "--format prom" is accepted or refused the same way by each of them, and the pieces of
 * a tracing run loop (the stop flag that SIGINT and SIGTERM set, the monotonic clock).
 */
#ifndef IOTIER_CLI_COMMON_H
#define IOTIER_CLI_COMMON_H

#include <signal.h>

/* A positive number of seconds (decimals allowed), at most 1e7. 0, or -1 when bad. */
int cli_parse_seconds(const char *s, double *out);

/* A decimal integer in 1..@max. 0, or -1 when bad. */
int cli_parse_ulong(const char *s, unsigned long max, unsigned long *out);

/* The index of @value in the NULL-terminated @names, or -1. */
int cli_pick(const char *value, const char *const *names);

/* Set by SIGINT and SIGTERM once cli_stop_on_signals() ran: the run loop ends, reports. */
extern volatile sig_atomic_t cli_stop;
void cli_stop_on_signals(void);

/* CLOCK_MONOTONIC in seconds. */
double cli_now(void);

#endif
