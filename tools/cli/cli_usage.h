/* SPDX-License-Identifier: MIT */
/*
 * cli_usage.h: how a subcommand says that it was called wrong, or that it failed: one line
 * "iotier NAME: message" on stderr, and the exit status of a usage error. Every room of the
 * CLI that refuses a value (the commands, launch/, exporter/) says it through here, so a bad
 * flag reads the same whoever catches it.
 */
#ifndef IOTIER_CLI_USAGE_H
#define IOTIER_CLI_USAGE_H

/* Exit statuses are shared: 0 success, 1 failure at run time, 2 bad usage (nothing started). */
#define EXIT_USAGE 2

/* Print "iotier NAME: message" on stderr; returns EXIT_USAGE for `return usage_error(...)`. */
int usage_error(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "iotier NAME: message" on stderr, for errors at run time. Both escape the message
 * (text_escape.h): it may quote a bad value, which must not break the line or reach the
 * terminal as an escape sequence. */
void error_line(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
