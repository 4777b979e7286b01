// SPDX-License-Identifier: MIT
/*
 * cmd_run.c: `iotier run`, start a command with libiotier.so preloaded. Flags become the
 * same IOTIER_* variables a user could set by hand, and the complete configuration is loaded
 * exactly as the shim will load it before anything is started, so a bad rule is refused here
 * with exit status 2 instead of being a warning inside the program.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "commands.h"
#include "core/core.h"
#include "launch/launch.h"

static const char run_help[] =
	"usage: iotier run [OPTIONS] [--] CMD [ARGS...]\n"
	"\n"
	"Run CMD with libiotier.so preloaded. Threads and processes that match a low rule get\n"
	"the low I/O priority before their next I/O; everything else is left alone. The exit\n"
	"status is CMD's own (126/127 when it cannot be started, 2 for a bad option).\n"
	"\n"
	"options:\n"
	SHIM_OPTIONS_HELP
	"\n"
	"A rule is thread:GLOB (the default kind: the thread's name), comm:GLOB (the process\n"
	"name) or cmdline:GLOB (the whole command line). Globs are fnmatch(3) patterns, on bytes.\n"
	"\n"
	"examples:\n"
	"  iotier run --low 'rocksdb:low*' -- db_bench --benchmarks=readwhilewriting\n"
	"      RocksDB compaction threads at idle, flush and foreground threads untouched\n"
	"  iotier run --low 'rocksdb:low*,rocksdb:high*' -- db_bench ...\n"
	"      compaction and flush both low\n"
	"  iotier run --low 'cmdline:postgres: *autovacuum*' --low-class be:7 -- postgres -D data\n"
	"      autovacuum workers at best-effort level 7\n"
	"  iotier run --low 'rocksdb:low*' --low-rate 50M --drop-behind '*.log' -- db_bench ...\n"
	"      compaction limited to 50 MiB/s, write-ahead logs kept out of the page cache\n"
	"  iotier run --cgroup-weight 10 -- pg_basebackup -D /backup\n"
	"      the whole backup, writeback included, at io weight 10 in <cgroup>/iotier-low.PID\n"
	"  iotier run --low 'comm:compactor' --cgroup v1 -- ./compactor\n"
	"      a matching process is moved to the blkio cgroup as well as tagged idle\n";

static const struct option run_options[] = {
	SHIM_LONG_OPTIONS /* each entry with its comma */
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int run_main(int argc, char **argv)
{
	static struct config cfg; /* large: rule globs are inline */
	struct cli_getopt g = {
		.name = "run", .optstring = "+:" SHIM_SHORT_OPTIONS "h", .longopts = run_options,
		.operands = CLI_COMMAND,
	};
	struct shim_flags flags = { 0 };
	int opt, ret;

	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (opt == 'h') {
			fputs(run_help, stdout);
			return 0;
		}
		if (shim_flag(&flags, opt, optarg) < 0) {
			perror("iotier run: setenv");
			return 1;
		}
	}
	if (g.status)
		return g.status;
	ret = shim_config_check("run", &flags, &cfg);
	if (ret)
		return ret;
	ret = shim_preload_for("run");
	if (ret)
		return ret;
	ret = spawn_exec(argv + optind, flags.place_in_cgroup ? &cfg : NULL);
	error_line("run", "cannot run '%s': %s", argv[optind], strerror(ret));
	return spawn_exec_status(ret);
}

const struct command command_run = {
	.name = "run",
	.summary = "run a command with its matching threads tagged low",
	.help = run_help,
	.main = run_main,
};
