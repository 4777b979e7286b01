/* SPDX-License-Identifier: MIT */
/*
 * commands.h: the subcommands of the `iotier` CLI. Each lives in its own cmd_<name>.c and
 * exports one `struct command`; iotier.c only dispatches and prints help. Exit statuses and
 * the usage and error lines are the CLI's own (cli/cli_usage.h).
 */
#ifndef IOTIER_COMMANDS_H
#define IOTIER_COMMANDS_H

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

#endif
