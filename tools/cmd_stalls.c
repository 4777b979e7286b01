// SPDX-License-Identifier: MIT
/*
 * cmd_stalls.c: `iotier stalls`, where threads wait in the write path. `iotier lat` sees
 * the block layer only; a WAL append that stalls because the machine is over its dirty
 * limits, or because its page is under writeback, never reaches it. This reports per
 * process, thread, tier and I/O class the time spent in dirty throttling, writeback waits
 * and fsync-like calls, and who dirtied page cache meanwhile, by tier.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "commands.h"
#include "launch/launch.h"
#include "trace/common/trace_common.h"
#include "trace/stalls/trace_stalls.h"

static const char stalls_help[] =
	"usage: iotier stalls [--pid PID [--children]] [-d DEV]... [--duration S]\n"
	"                     [--interval S] [--format text|json|prom] [--low RULES]\n"
	"                     [--high RULES] [-v]\n"
	"\n"
	"Trace where threads wait in the write path, by cause: dirty_throttle (balance_dirty_\n"
	"pages paused the writer because memory is over its dirty limits), writeback_wait\n"
	"(the thread waited for a page under writeback, outside fsync) and fsync (fsync,\n"
	"fdatasync, sync_file_range with a wait flag, from call to return). Report per process,\n"
	"thread, tier and I/O class each cause's count, total, P50, P99 and max, and the page\n"
	"cache each tier dirtied in the window, so a throttled high thread shows who filled\n"
	"memory. Tiers come from the shim's rules (IOTIER_LOW, IOTIER_HIGH, IOTIER_CONFIG, or\n"
	"--low/--high). Runs until Ctrl-C, SIGTERM, --duration or PID's exit. Needs root\n"
	"(CAP_BPF and CAP_PERFMON) and kernel BTF.\n"
	"\n"
	"exit status: 0 after a report, 1 when tracing fails (a missing capability or kernel\n"
	"feature, one line), 2 for a usage error (nothing is traced).\n"
	"\n"
	"options:\n"
	"  -p, --pid PID          trace only process PID\n"
	"      --children         and its descendants, present and future (needs --pid)\n"
	"  -d, --device DEV       only stalls on file systems on DEV (/dev/sdb, loop3, 7:3;\n"
	"                         a partition or its disk; repeatable, at most 8)\n"
	"  -t, --duration S       stop after S seconds\n"
	"  -i, --interval S       one report every S seconds (each covers its interval)\n"
	"  -f, --format FMT       text (default), json (one document a line, schema in\n"
	"                         docs/stalls-schema.json) or prom (Prometheus text format)\n"
	"  -l, --low RULES        tier rules as in 'iotier run' (default: $IOTIER_LOW)\n"
	"  -H, --high RULES       (default: $IOTIER_HIGH)\n"
	"  -v, --verbose          show libbpf's own messages\n"
	"\n"
	"examples:\n"
	"  iotier stalls --pid $(pidof postgres) --children --duration 60 \\\n"
	"      --low 'postgres: autovacuum*' --high 'postgres: walwriter'\n"
	"      does the WAL writer wait for memory the vacuum dirtied?\n"
	"  iotier stalls -d nvme0n1 --format json --interval 10 >> stalls.jsonl\n";

enum { OPT_CHILDREN = SHIM_OPT_END };

static const struct option stalls_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "device", required_argument, NULL, 'd' },
	{ "duration", required_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "format", required_argument, NULL, 'f' },
	{ "low", required_argument, NULL, 'l' },
	{ "high", required_argument, NULL, 'H' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum stalls_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROM };

struct stalls_args {
	unsigned long pid;
	bool children, verbose;
	const char *devices[STALLS_MAX_DEVS + 1];
	uint32_t devs[STALLS_MAX_DEVS];
	unsigned n_devs;
	double duration, interval;
	enum stalls_format fmt;
	struct shim_flags shim;
};

/* One option's value: 0 or an exit status. */
static int parse_option(struct stalls_args *a, int opt, const char *arg)
{
	static const char *const formats[] = { "text", "json", "prom", NULL };
	int i, err;

	switch (opt) {
	case 'p':
		if (cli_parse_ulong(arg, 0x3fffffff, &a->pid) < 0)
			return usage_error("stalls", "bad pid '%s'", arg);
		if (kill((pid_t)a->pid, 0) < 0 && errno == ESRCH)
			return usage_error("stalls", "no process with pid '%s'", arg);
		return 0;
	case 'd':
		if (a->n_devs == STALLS_MAX_DEVS)
			return usage_error("stalls", "too many devices at '%s' (at most %d)", arg,
					   STALLS_MAX_DEVS);
		err = blkdev_resolve(arg, BLKDEV_EXACT, &a->devs[a->n_devs]);
		if (err < 0)
			return usage_error("stalls", "--device '%s': %s", arg,
					   err == -ENOTBLK ? "not a block device" : strerror(-err));
		a->devices[a->n_devs++] = arg;
		return 0;
	case 't':
		return cli_parse_seconds(arg, &a->duration) < 0 ?
		       usage_error("stalls", "bad duration '%s'", arg) : 0;
	case 'i':
		return cli_parse_seconds(arg, &a->interval) < 0 ?
		       usage_error("stalls", "bad interval '%s'", arg) : 0;
	default: /* 'f' */
		if ((i = cli_pick(arg, formats)) < 0)
			return usage_error("stalls", "unknown format '%s' (text, json or prom)", arg);
		a->fmt = (enum stalls_format)i;
		return 0;
	}
}

/* parse: 0 to go on, -1 after --help, or an exit status. */
static int parse_args(int argc, char **argv, struct stalls_args *a)
{
	struct cli_getopt g = {
		.name = "stalls", .optstring = ":p:d:t:i:f:l:H:vh", .longopts = stalls_options,
		.operands = CLI_NO_OPERANDS,
	};
	int opt, ret = 0;

	while (!ret && (opt = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (opt) {
		case 'p': case 'd': case 't': case 'i': case 'f':
			ret = parse_option(a, opt, optarg);
			break;
		case OPT_CHILDREN:
			a->children = true;
			break;
		case 'l': case 'H':
			if (shim_flag(&a->shim, opt, optarg) < 0) {
				perror("iotier stalls: setenv");
				return 1;
			}
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			fputs(stalls_help, stdout);
			return -1;
		}
	}
	if (!ret)
		ret = g.status;
	if (!ret && a->children && !a->pid)
		return usage_error("stalls", "--children needs --pid");
	return ret;
}

/* Read the interval just ended and print it. 0, or 1 after a message. */
static int read_and_report(struct stalls_session *s, const struct stalls_args *a,
			   const struct config *cfg, double seconds)
{
	struct stalls_snapshot snap = { 0 };
	struct stalls_report r;
	int ret = stalls_session_read(s, &snap);

	if (!ret)
		ret = stalls_report_build(&r, &snap, seconds, cfg, NULL, NULL);
	stalls_snapshot_free(&snap);
	if (ret < 0) {
		error_line("stalls", "reading the maps: %s", strerror(-ret));
		return 1;
	}
	switch (a->fmt) {
	case FORMAT_TEXT:
		stalls_report_print_text(&r, stdout);
		fflush(stdout);
		break;
	case FORMAT_JSON:
		ret = stalls_report_print_json(&r, stdout);
		break;
	case FORMAT_PROM:
		stalls_report_print_prom(&r, stdout);
		break;
	}
	stalls_report_free(&r);
	if (ret < 0)
		error_line("stalls", "out of memory");
	return ret < 0 ? 1 : 0;
}

/* run: poll every 100 ms until a signal, the duration or PID's exit, reporting intervals. */
static int run(struct stalls_session *s, const struct stalls_args *a, const struct config *cfg)
{
	double start = cli_now(), last = start, next = a->interval ? start + a->interval : 0;

	while (!cli_stop) {
		double t = cli_now();

		if (a->duration && t - start >= a->duration)
			break;
		if (a->pid && !a->children && kill((pid_t)a->pid, 0) < 0 && errno == ESRCH)
			break;
		if (a->interval && t >= next) {
			if (read_and_report(s, a, cfg, t - last))
				return 1;
			last = t;
			next += a->interval;
			continue;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
	/* final: what the last, partial interval (or the whole run) counted */
	return read_and_report(s, a, cfg, cli_now() - last);
}

static int stalls_main(int argc, char **argv)
{
	static struct config cfg; /* large: rule globs are inline */
	struct stalls_args a = { 0 };
	struct stalls_session *s = NULL;
	struct stalls_options o;
	char err[512];
	int ret;

	ret = parse_args(argc, argv, &a);
	if (!ret)
		ret = shim_config_check("stalls", &a.shim, &cfg);
	if (ret)
		return ret < 0 ? 0 : ret;
	o = (struct stalls_options){ .filter_pids = a.pid != 0, .children = a.children,
				     .devs = a.devs, .n_devs = a.n_devs, .verbose = a.verbose };
	cli_stop_on_signals();
	/* open, rodata, load; follow; attach */
	ret = stalls_session_open(&s, &o, err, sizeof(err));
	if (!ret && a.pid && (ret = stalls_session_follow(s, (pid_t)a.pid, a.children)) < 0)
		snprintf(err, sizeof(err), "cannot follow pid %lu: %s", a.pid, strerror(-ret));
	if (!ret)
		ret = stalls_session_attach(s, err, sizeof(err));
	if (ret) {
		error_line("stalls", "%s", err);
		ret = 1;
		goto cleanup;
	}
	fprintf(stderr, "Tracing write-path stalls... Hit Ctrl-C to end.\n");
	ret = run(s, &a, &cfg);
cleanup:
	stalls_session_close(s);
	return ret;
}

const struct command command_stalls = {
	.name = "stalls",
	.summary = "where threads wait in the write path: dirty throttling, writeback, fsync (BPF)",
	.help = stalls_help,
	.main = stalls_main,
};
