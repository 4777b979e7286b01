/* SPDX-License-Identifier: MIT */
/*
 * cli_loop.h: the pieces of a tracing run loop (lat, stalls, check, the exporter): the stop
 * flag that SIGINT and SIGTERM set, and the monotonic clock its intervals are measured on.
 */
#ifndef IOTIER_CLI_LOOP_H
#define IOTIER_CLI_LOOP_H

#include <signal.h>

/* Set by SIGINT and SIGTERM once cli_stop_on_signals() ran: the run loop ends, reports. */
extern volatile sig_atomic_t cli_stop;
void cli_stop_on_signals(void);

/* CLOCK_MONOTONIC in seconds. */
double cli_now(void);

#endif
