/* SPDX-License-Identifier: MIT */
/*
 * commands.h: the subcommands of the `iotier` CLI. Each lives in its own cmd_<name>.c and
 * exports one `struct command`; iotier.c only dispatches and prints help.
 * Exit statuses are shared: 0 success, 1 failure at run time, 2 bad usage (nothing started).
 */
#ifndef IOTIER_COMMANDS_H
#define IOTIER_COMMANDS_H

#define EXIT_USAGE 2

struct command {
	const char *name;
	const char *summary;   /* one line for `iotier --help` */
	const char *help;      /* full text for `iotier help NAME`: usage, options, examples */
	int (*main)(int argc, char **argv); /* argv[0] is the subcommand name */
};

extern const struct command command_run;
extern const struct command command_threads;
/* The iolat tracer (a stub saying why it cannot run in a build without BPF), and
 * iotier check's iotrack tracer (built only with BPF support). */
extern const struct command command_lat;
extern const struct command command_check;
/* `iotier stalls`: write-path stalls per thread (bpf/stalls, built only with BPF support). */
extern const struct command command_stalls;

/* Print "iotier NAME: message" on stderr; returns EXIT_USAGE for `return usage_error(...)`. */
int usage_error(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "iotier NAME: message" on stderr, for errors at run time. Both escape the message
 * (text_escape.h): it may quote a bad value, which must not break the line or reach the
 * terminal as an escape sequence. */
void error_line(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
