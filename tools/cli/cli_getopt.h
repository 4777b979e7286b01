/* SPDX-License-Identifier: MIT */
/*
 * cli_getopt.h: the one getopt_long loop of the subcommands that take flags (run, check,
 * lat, stalls). Each handles its own options; how a bad one is refused is shared, so an
 * unknown flag, a flag without its value and a stray or missing operand read the same under
 * every subcommand (tests/cli/test-cli.sh holds the messages).
 */
#ifndef IOTIER_CLI_GETOPT_H
#define IOTIER_CLI_GETOPT_H

#include <getopt.h>
#include <stdbool.h>

/* What a subcommand takes after its options. */
enum cli_operands {
	CLI_NO_OPERANDS, /* nothing: a word left over is an "unexpected argument" */
	CLI_COMMAND,     /* a command to run: "no command given" without one */
};

struct cli_getopt {
	const char *name;               /* the subcommand, for its messages */
	const char *optstring;          /* getopt's, starting with ':' ("+:" before a command) */
	const struct option *longopts;
	enum cli_operands operands;
	int status;                     /* once the loop ended: 0, or EXIT_USAGE after a line */
	bool started;
};

/*
 * The next option of @argv, as getopt_long returns it (optarg set), for subcommand g->name.
 * -1 at the end of the options, after checking the operands as g->operands says. An unknown
 * option, one missing its value, or operands that do not fit also end the loop (-1), with
 * one usage line and g->status set to EXIT_USAGE. The first call starts from argv[1].
 */
int cli_getopt_next(struct cli_getopt *g, int argc, char **argv);

#endif
