// SPDX-License-Identifier: MIT
/*
 * iotier.c: entry point of the `iotier` CLI. It finds the subcommand and hands over argv;
 * every subcommand checks its own flags completely before it starts anything.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "commands.h"
#include "iotier-config.h"
#include "trace/common/text_escape.h"

static const struct command *const commands[] = {
	&command_run,
	&command_threads,
	&command_lat, /* cmd_lat.c, or cmd_lat_stub.c in a build without BPF */
#ifdef IOTIER_HAVE_BPF
	&command_check,
	&command_stalls,
#endif
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_overview(FILE *out)
{
	fprintf(out,
		"usage: iotier COMMAND [ARGS...]\n"
		"\n"
		"Give a program's background threads a low I/O priority by name, without changing\n"
		"its code, and measure block latency per I/O priority.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(out,
		"\n"
		"examples:\n"
		"  iotier run --low 'rocksdb:low*' -- db_bench --benchmarks=readwhilewriting\n"
		"  iotier threads $(pidof db_bench)\n"
		"\n"
		"'iotier help COMMAND' shows a command's options and more examples.\n");
}

static void unknown_command(const char *name)
{
	fputs("iotier: unknown command '", stderr);
	text_escape_fputs(name, stderr);
	fputs("' (see 'iotier --help')\n", stderr);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		print_overview(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_overview(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("iotier %s\n", IOTIER_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			print_overview(stdout);
			return 0;
		}
		cmd = find_command(argv[2]);
		if (!cmd) {
			unknown_command(argv[2]);
			return EXIT_USAGE;
		}
		fputs(cmd->help, stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		unknown_command(argv[1]);
		return EXIT_USAGE;
	}
	return cmd->main(argc - 1, argv + 1);
}
