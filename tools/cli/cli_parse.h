/* SPDX-License-Identifier: MIT */
/*
 * cli_parse.h: the small argument parsers the subcommands share, so "--interval 0.5" or
 * "--format prom" is accepted or refused the same way by each of them.
 */
#ifndef IOTIER_CLI_PARSE_H
#define IOTIER_CLI_PARSE_H

/* A positive number of seconds (decimals allowed), at most 1e7. 0, or -1 when bad. */
int cli_parse_seconds(const char *s, double *out);

/* A decimal integer in 1..@max. 0, or -1 when bad. */
int cli_parse_ulong(const char *s, unsigned long max, unsigned long *out);

/* The index of @value in the NULL-terminated @names, or -1. */
int cli_pick(const char *value, const char *const *names);

#endif
