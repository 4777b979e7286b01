// SPDX-License-Identifier: MIT
/*
 * cli_getopt.c: getopt_long with the subcommands' shared ending (see cli_getopt.h).
 */
#include "cli_getopt.h"

#include <stddef.h>

#include "cli_usage.h"

/* The loop ended: the operands left, as the subcommand wants them. */
static int check_operands(struct cli_getopt *g, int argc, char **argv)
{
	if (g->operands == CLI_COMMAND && optind >= argc)
		return usage_error(g->name, "no command given");
	if (g->operands == CLI_NO_OPERANDS && optind < argc)
		return usage_error(g->name, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cli_getopt_next(struct cli_getopt *g, int argc, char **argv)
{
	int opt;

	if (!g->started) {
		/* Reset: getopt's state is global, and every subcommand parses its own argv. */
		optind = 0;
		opterr = 0;
		g->started = true;
	}
	opt = getopt_long(argc, argv, g->optstring, g->longopts, NULL);
	switch (opt) {
	case -1:
		g->status = check_operands(g, argc, argv);
		return -1;
	case ':':
		g->status = usage_error(g->name, "option '%s' needs a value", argv[optind - 1]);
		return -1;
	case '?':
		g->status = usage_error(g->name, "unknown option '%s'", argv[optind - 1]);
		return -1;
	default:
		return opt;
	}
}
