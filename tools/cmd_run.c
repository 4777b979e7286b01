// SPDX-License-Identifier: MIT
/*
 * cmd_run.c: `iotier run`, start a command with libiotier.so preloaded. Flags become the
 * same IOTIER_* variables a user could set by hand, and the complete configuration is loaded
 * exactly as the shim will load it before anything is started, so a bad rule is refused here
 * with exit status 2 instead of being a warning inside the program.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_place.h"
#include "commands.h"
#include "config.h"
#include "shim_locate.h"

static const char run_help[] =
	"usage: iotier run [OPTIONS] [--] CMD [ARGS...]\n"
	"\n"
	"Run CMD with libiotier.so preloaded. Threads and processes that match a low rule get\n"
	"the low I/O priority before their next I/O; everything else is left alone. The exit\n"
	"status is CMD's own (126/127 when it cannot be started, 2 for a bad option).\n"
	"\n"
	"options:\n"
	"  -l, --low RULES        comma-separated rules for the low tier (repeatable)\n"
	"  -H, --high RULES       rules for the high tier; a high match beats a low one\n"
	"      --low-class C      idle (default) or be:0..be:7\n"
	"      --high-class C     keep (default), be:N or rt:N\n"
	"      --log LEVEL        off, warn (default) or debug, on CMD's stderr\n"
	"      --config FILE      read IOTIER_* KEY=VALUE lines from FILE\n"
	"      --cgroup MODE      auto (default), v1, v2 or off: where low processes get a\n"
	"                         cgroup weight (IOTIER_CGROUP)\n"
	"      --cgroup-weight N  put CMD as a whole in a low cgroup with io weight N\n"
	"                         (1-10000, default 10; bfq caps at 1000) before it starts;\n"
	"                         also the weight for processes a low rule matches\n"
	"\n"
	"A rule is thread:GLOB (the default kind: the thread's name), comm:GLOB (the process\n"
	"name) or cmdline:GLOB (the whole command line). Globs are fnmatch(3) patterns.\n"
	"\n"
	"examples:\n"
	"  iotier run --low 'rocksdb:low*' -- db_bench --benchmarks=readwhilewriting\n"
	"      RocksDB compaction threads at idle, flush and foreground threads untouched\n"
	"  iotier run --low 'rocksdb:low*,rocksdb:high*' -- db_bench ...\n"
	"      compaction and flush both low\n"
	"  iotier run --low 'cmdline:postgres: *autovacuum*' --low-class be:7 -- postgres -D data\n"
	"      autovacuum workers at best-effort level 7\n"
	"  iotier run --cgroup-weight 10 -- pg_basebackup -D /backup\n"
	"      the whole backup, writeback included, at io weight 10 in <cgroup>/iotier-low.PID\n"
	"  iotier run --low 'comm:compactor' --cgroup v1 -- ./compactor\n"
	"      a matching process is moved to the blkio cgroup as well as tagged idle\n";

enum { OPT_LOW_CLASS = 256, OPT_HIGH_CLASS, OPT_LOG, OPT_CONFIG, OPT_CGROUP, OPT_CGROUP_WEIGHT };

static const struct option run_options[] = {
	{ "low", required_argument, NULL, 'l' },
	{ "high", required_argument, NULL, 'H' },
	{ "low-class", required_argument, NULL, OPT_LOW_CLASS },
	{ "high-class", required_argument, NULL, OPT_HIGH_CLASS },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "cgroup-weight", required_argument, NULL, OPT_CGROUP_WEIGHT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Append @value to the comma-joined list in environment variable @key (for repeated flags). */
static int env_append(const char *key, const char *value, int *seen)
{
	const char *old = *seen ? getenv(key) : NULL;
	char *joined;
	int ret;

	*seen = 1;
	if (!old || !*old)
		return setenv(key, value, 1);
	if (asprintf(&joined, "%s,%s", old, value) < 0)
		return -1;
	ret = setenv(key, joined, 1);
	free(joined);
	return ret;
}

static const char *lookup_env(const char *key, void *ctx)
{
	(void)ctx;
	return getenv(key);
}

/* Load the configuration the shim will see; on error print it and return EXIT_USAGE. */
static int validate_config(void)
{
	static char file_text[64 * 1024];
	static struct config cfg; /* large: rule globs are inline */
	const char *file = getenv("IOTIER_CONFIG");
	char err[RULE_ERROR_MAX + 64];

	if (file && *file) {
		int ret = config_read_file(file, file_text, sizeof(file_text));

		if (ret < 0)
			return usage_error("run", "--config %s: %s", file, strerror(-ret));
	}
	if (config_load(&cfg, lookup_env, NULL, file && *file ? file_text : NULL, err,
			sizeof(err)) < 0)
		return usage_error("run", "%s", err);
	return 0;
}

static int run_main(int argc, char **argv)
{
	int seen_low = 0, seen_high = 0, place_low = 0, opt, ret;
	char shim[PATH_MAX], err[PATH_MAX + 128];

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:l:H:h", run_options, NULL)) != -1) {
		switch (opt) {
		case 'l':
			ret = env_append("IOTIER_LOW", optarg, &seen_low);
			break;
		case 'H':
			ret = env_append("IOTIER_HIGH", optarg, &seen_high);
			break;
		case OPT_LOW_CLASS:
			ret = setenv("IOTIER_LOW_CLASS", optarg, 1);
			break;
		case OPT_HIGH_CLASS:
			ret = setenv("IOTIER_HIGH_CLASS", optarg, 1);
			break;
		case OPT_LOG:
			ret = setenv("IOTIER_LOG", optarg, 1);
			break;
		case OPT_CONFIG:
			ret = setenv("IOTIER_CONFIG", optarg, 1);
			break;
		case OPT_CGROUP:
			ret = setenv("IOTIER_CGROUP", optarg, 1);
			break;
		case OPT_CGROUP_WEIGHT:
			place_low = 1;
			ret = setenv("IOTIER_LOW_WEIGHT", optarg, 1);
			break;
		case 'h':
			fputs(run_help, stdout);
			return 0;
		case ':':
			return usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
		if (ret < 0) {
			perror("iotier run: setenv");
			return 1;
		}
	}
	if (optind >= argc)
		return usage_error("run", "no command given");
	ret = validate_config();
	if (ret)
		return ret;
	if (shim_locate(shim, sizeof(shim), err, sizeof(err)) < 0) {
		fprintf(stderr, "iotier run: %s\n", err);
		return 1;
	}
	if (shim_preload_env(shim) < 0) {
		perror("iotier run: setenv LD_PRELOAD");
		return 1;
	}
	if (place_low && (ret = cgroup_place_before_exec()))
		return ret;
	execvp(argv[optind], argv + optind);
	ret = errno;
	fprintf(stderr, "iotier run: cannot run '%s': %s\n", argv[optind], strerror(ret));
	return ret == ENOENT ? 127 : 126;
}

const struct command command_run = {
	.name = "run",
	.summary = "run a command with its matching threads tagged low",
	.help = run_help,
	.main = run_main,
};
