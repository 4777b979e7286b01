// SPDX-License-Identifier: MIT
/*
 * cmd_check.c: `iotier check`, run a command under the shim while tracing its block I/O, and
 * hold the result against expectations. Setting a priority proves nothing. What counts is
 * the class the I/O reached the device with, including writeback the kernel does for the
 * command, and what the foreground paid in latency. Everything the user typed (rules,
 * expectations, devices, the baseline) is checked before the command starts, so a typo is
 * exit status 2 and not a failed CI job after a long benchmark.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "commands.h"
#include "core/core.h"
#include "launch/launch.h"
#include "trace/check/trace_check.h"
#include "trace/common/trace_common.h"
#include "trace/expect/trace_expect.h"
#include "trace/stalls/trace_stalls.h"

static const char check_help[] =
	"usage: iotier check [OPTIONS] [--expect EXPR]... [--] CMD [ARGS...]\n"
	"\n"
	"Run CMD under libiotier.so, as 'iotier run' does, while tracing its block I/O. Then\n"
	"report per tier (low, high, default) the requests and bytes by the class they arrived\n"
	"with at the block layer, the leaks (I/O a tier's thread caused that reached the device\n"
	"at another class, such as the flusher's writeback of its buffered writes, attributed\n"
	"to the thread that dirtied the inode), the unattributed kernel I/O, and the latency\n"
	"per tier and class. Each --expect is then checked against the measurements.\n"
	"\n"
	"The tier of each I/O comes from the same rules as the shim's, applied to the thread's\n"
	"name at submit time, its process name and its command line. After CMD exits, 'iotier\n"
	"check' calls sync(2), so that the writeback CMD left behind is counted too.\n"
	"\n"
	"exit status: 0 when every expectation holds, 1 when one fails or CMD itself fails (each\n"
	"is reported on its own line), 2 for a usage error (nothing is run).\n"
	"\n"
	"options:\n"
	SHIM_OPTIONS_HELP
	"\n"
	"tracing and expectations:\n"
	"  -d, --device DEV       trace only DEV (/dev/sdb, loop3 or 7:3; repeatable, at most 8);\n"
	"                         without it every device is traced, and I/O through stacked\n"
	"                         devices (loop over a file, dm) is counted once per layer\n"
	"  -e, --expect EXPR      an expectation such as 'high.read.p99 < 2ms' (repeatable);\n"
	"                         the grammar is in docs/check-expressions.md\n"
	"  -b, --baseline FILE    a report saved with --json, for 'baseline.' paths\n"
	"  -j, --json FILE        write the whole report to FILE (a CI artifact)\n"
	"      --no-sync          do not sync(2) after CMD exits\n"
	"  -v, --verbose          show libbpf's own messages (warnings, debug)\n"
	"\n"
	"paths: TIER[.OP][.CLASS][.leak[.CAUSE]].METRIC with TIER low, high, default or\n"
	"unattributed; OP read, write or other; CLASS none, rt, be or idle; CAUSE submit,\n"
	"writeback, journal or other; METRIC bytes, count, pN (p99, p99.9), max, mean, class,\n"
	"or ratio (of leaked bytes). Units: ns us ms s, B KiB MiB GiB, %.\n"
	"\n"
	"examples:\n"
	"  iotier check --low 'rocksdb:low*' -d nvme0n1 --expect 'low.write.class == idle' \\\n"
	"      -- db_bench --benchmarks=readwhilewriting --use_direct_io_for_flush_and_compaction\n"
	"      compaction I/O must reach the disk at idle\n"
	"  iotier check --low 'bg-*' -d loop3 --expect 'low.leak.bytes == 0' -- ./loader\n"
	"      fail when the low threads' writes escape idle, for example through writeback\n"
	"  iotier check --low 'rocksdb:low*' --high 'db_bench' -d sdb --json run.json \\\n"
	"      --baseline main.json --expect 'high.read.p99.9 <= 1.5 * baseline.read.p99.9' \\\n"
	"      -- db_bench --benchmarks=readwhilewriting\n"
	"      fail when foreground p99.9 regresses by more than half against a saved run\n";

enum { OPT_NO_SYNC = SHIM_OPT_END };

static const struct option check_options[] = {
	SHIM_LONG_OPTIONS /* each entry with its comma */
	{ "device", required_argument, NULL, 'd' },
	{ "expect", required_argument, NULL, 'e' },
	{ "baseline", required_argument, NULL, 'b' },
	{ "json", required_argument, NULL, 'j' },
	{ "no-sync", no_argument, NULL, OPT_NO_SYNC },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define MAX_EXPECTS 64

struct check_args {
	const char *expr_text[MAX_EXPECTS];
	struct expect *exprs;
	int n_exprs;
	const char *devices[IOTRACK_MAX_DEVS + 1];
	uint32_t devs[IOTRACK_MAX_DEVS];
	unsigned n_devs;
	const char *baseline, *json;
	bool no_sync, verbose;
	bool wants_stalls;    /* an expectation names a `stall` path: trace stalls too */
	struct shim_flags shim;
};

/* The tracers of one run: block I/O always, write-path stalls when asked for. */
struct check_tracers {
	struct check_trace *io;
	struct stalls_session *stalls;
};

static bool ioprio_is(uint16_t got, int want)
{
	unsigned want_class = ioprio_class((unsigned)want);

	if (ioprio_class(got) != want_class)
		return false;
	/* Levels mean nothing for idle. */
	return want_class == IOPRIO_CLASS_IDLE ||
	       ioprio_level(got) == ioprio_level((unsigned)want);
}

static enum expect_tier classify(const struct iotrack_key *key, const char *cmdline, bool *leak,
				 void *ctx)
{
	const struct config *cfg = ctx;
	char comm[IOTRACK_COMM_LEN + 1], pcomm[IOTRACK_COMM_LEN + 1];
	enum expect_tier tier;

	memcpy(comm, key->comm, IOTRACK_COMM_LEN);
	comm[IOTRACK_COMM_LEN] = '\0';
	memcpy(pcomm, key->pcomm, IOTRACK_COMM_LEN);
	pcomm[IOTRACK_COMM_LEN] = '\0';
	tier = tier_classify(cfg, comm, pcomm, cmdline);
	switch (tier) {
	case TIER_LOW:
		*leak = !ioprio_is(key->ioprio, cfg->low_ioprio);
		break;
	case TIER_HIGH:
		/* "keep" promises nothing but not being demoted: idle is the only leak then. */
		*leak = cfg->high_ioprio == IOPRIO_KEEP ?
			ioprio_class(key->ioprio) == IOPRIO_CLASS_IDLE :
			!ioprio_is(key->ioprio, cfg->high_ioprio);
		break;
	default:
		*leak = false;
		break;
	}
	return tier;
}

static int parse_args(int argc, char **argv, struct check_args *a)
{
	struct cli_getopt g = {
		.name = "check", .optstring = "+:" SHIM_SHORT_OPTIONS "d:e:b:j:vh",
		.longopts = check_options, .operands = CLI_COMMAND,
	};
	int opt, ret;

	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		ret = 0;
		switch (opt) {
		case 'd': {
			int err;

			if (a->n_devs == IOTRACK_MAX_DEVS)
				return usage_error("check", "too many devices at '%s' (at most %d)",
						   optarg, IOTRACK_MAX_DEVS);
			err = blkdev_resolve(optarg, BLKDEV_EXACT, &a->devs[a->n_devs]);
			if (err < 0)
				return usage_error("check", "--device '%s': %s", optarg,
						   err == -ENOTBLK ? "not a block device" :
						   strerror(-err));
			a->devices[a->n_devs++] = optarg;
			break;
		}
		case 'e':
			if (a->n_exprs == MAX_EXPECTS)
				return usage_error("check", "too many expectations at '%s' (at most "
						   "%d)", optarg, MAX_EXPECTS);
			a->expr_text[a->n_exprs++] = optarg;
			break;
		case 'b':
			a->baseline = optarg;
			break;
		case 'j':
			a->json = optarg;
			break;
		case OPT_NO_SYNC:
			a->no_sync = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			fputs(check_help, stdout);
			return -1;
		default:
			ret = shim_flag(&a->shim, opt, optarg);
			break;
		}
		if (ret < 0) {
			perror("iotier check: setenv");
			return 1;
		}
	}
	return g.status;
}

static int json_dir_writable(const char *path)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", path);
	return access(dirname(copy), W_OK);
}

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/*
 * Start CMD held on a pipe, follow it, attach, then let it exec: the tracked-process map
 * must hold its pid before its first I/O, and its first I/O may be the exec itself.
 * Returns the pid, or -1 after printing why (exit status in *status: 126 or 127).
 */
static pid_t start_command(char **argv, const struct check_tracers *tr,
			   const struct config *place_cfg, int *status)
{
	struct spawn held;
	char msg[256];

	*status = 1;
	if (spawn_held(&held, "check", argv, place_cfg) < 0)
		return -1;
	child_pid = held.pid;
	msg[0] = '\0';
	if (check_trace_follow(tr->io, held.pid) < 0 ||
	    check_trace_attach(tr->io, msg, sizeof(msg)) < 0 ||
	    (tr->stalls && (stalls_session_follow(tr->stalls, held.pid, false) < 0 ||
			    stalls_session_attach(tr->stalls, msg, sizeof(msg)) < 0))) {
		error_line("check", "%s", msg[0] ? msg : "cannot follow the command");
		spawn_abandon(&held);
		return -1;
	}
	return spawn_release(&held, "check", argv, status);
}

/* validate: rules, classes, expectations, the baseline and the JSON path. 0 or exit status. */
static int validate_args(struct check_args *a, struct config *cfg,
			 struct check_report **baseline)
{
	char err[EXPECT_ERROR_MAX + 256];
	int ret = shim_config_check("check", &a->shim, cfg);

	if (ret)
		return ret;
	for (int i = 0; i < a->n_exprs; i++) {
		if (expect_parse(a->expr_text[i], a->baseline != NULL, &a->exprs[i], err,
				 sizeof(err)) < 0)
			return usage_error("check", "--expect '%s': %s", a->expr_text[i], err);
		for (int n = 0; n < a->exprs[i].n_nodes; n++)
			if (a->exprs[i].nodes[n].kind == NODE_REF && a->exprs[i].nodes[n].ref.stall)
				a->wants_stalls = true;
	}
	if (a->baseline) {
		*baseline = check_report_read_json(a->baseline, err, sizeof(err));
		if (!*baseline)
			return usage_error("check", "--baseline: %s", err);
	}
	if (a->json && json_dir_writable(a->json) < 0)
		return usage_error("check", "--json '%s': %s", a->json, strerror(errno));
	return shim_preload_for("check"); /* 2 for an unusable shim path, 1 if none */
}

/* Poll process events until CMD exits; its exit status, or -1 after a message. */
static int wait_command(struct check_trace *trace, pid_t pid)
{
	int ret, status = 0;

	for (;;) {
		pid_t w;

		ret = check_trace_poll(trace, 100);
		if (ret < 0) {
			fprintf(stderr, "iotier check: reading events: %s\n", strerror(-ret));
			kill(pid, SIGTERM);
		}
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			perror("iotier check: waitpid");
			return -1;
		}
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The cmdline the rules see for a stalled or dirtying process: what check_trace followed. */
static const char *traced_cmdline(uint32_t tgid, char *buf, size_t len, void *ctx)
{
	snprintf(buf, len, "%s", check_trace_cmdline(ctx, tgid));
	return buf;
}

/* open: the block I/O tracer, and the stall tracer when an expectation needs it. */
static int open_tracers(const struct check_args *a, struct check_tracers *tr)
{
	struct stalls_options so = {
		.filter_pids = true, .children = true, .devs = a->devs, .n_devs = a->n_devs,
		.verbose = a->verbose,
	};
	char err[512];

	if (check_trace_open(&tr->io, a->devs, a->n_devs, a->verbose, err, sizeof(err)) < 0 ||
	    (a->wants_stalls && stalls_session_open(&tr->stalls, &so, err, sizeof(err)) < 0)) {
		error_line("check", "%s", err);
		return 1;
	}
	return 0;
}

/* collect: classify what the tracers counted into @report and @stalls. 0 or 1. */
static int collect(const struct check_tracers *tr, struct config *cfg,
		   struct check_report *report, struct stalls_report *stalls, double seconds)
{
	struct stalls_snapshot snap = { 0 };
	int ret = check_trace_collect(tr->io, classify, cfg, report);

	if (ret < 0) {
		fprintf(stderr, "iotier check: reading the maps: %s\n", strerror(-ret));
		return 1;
	}
	if (!tr->stalls)
		return 0;
	ret = stalls_session_read(tr->stalls, &snap);
	if (!ret)
		ret = stalls_report_build(stalls, &snap, seconds, cfg, traced_cmdline, tr->io);
	stalls_snapshot_free(&snap);
	if (ret < 0)
		error_line("check", "reading the stall maps: %s", strerror(-ret));
	return ret < 0 ? 1 : 0;
}

/*
 * run: trace CMD from before its exec until it exits (and its writeback is done), then
 * classify what it did into @report (and its stalls into @stalls). Returns 0 with CMD's
 * status in @cmd_status and its start time in @started, or an exit status after a message.
 */
static int run_traced(const struct check_args *a, char **cmd, struct config *cfg,
		      struct check_report *report, struct stalls_report *stalls, int *cmd_status,
		      double *started)
{
	struct sigaction sa = { 0 }, old_int, old_term;
	struct check_tracers tr = { 0 };
	int ret = 1;
	pid_t pid;

	if (open_tracers(a, &tr))
		goto close;
	/* Like time(1): ^C reaches CMD from the terminal and we report what it did until then. */
	sa.sa_handler = forward_signal;
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	*started = cli_now();
	pid = start_command(cmd, &tr, a->shim.place_in_cgroup ? cfg : NULL, cmd_status);
	if (pid < 0) {
		ret = *cmd_status;
		goto restore;
	}
	*cmd_status = wait_command(tr.io, pid);
	child_pid = 0;
	if (*cmd_status < 0)
		goto restore;
	/* Writeback CMD left in the page cache is CMD's I/O too: make the flusher do it now. */
	if (!a->no_sync)
		sync();
	check_trace_poll(tr.io, 0);
	ret = collect(&tr, cfg, report, stalls, cli_now() - *started);
restore:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
close:
	stalls_session_close(tr.stalls);
	check_trace_close(tr.io);
	return ret;
}

/* Judge every expectation against @report, printing each; the number that failed. */
static int judge(const struct check_args *a, const struct check_report *report,
		 const struct check_report *baseline, const struct stalls_report *stalls,
		 struct check_outcome *outcomes)
{
	int failed = 0;

	if (a->n_exprs)
		printf("\nexpectations:\n");
	for (int i = 0; i < a->n_exprs; i++) {
		struct check_sources src = { report, baseline, a->wants_stalls ? stalls : NULL };
		struct expect_result *res = &outcomes[i].result;

		outcomes[i].expr = a->expr_text[i];
		expect_eval(&a->exprs[i], check_report_lookup, &src, res);
		if (!res->holds)
			failed++;
		if (res->no_data)
			printf("  FAIL  %s: %s\n", a->expr_text[i], res->measured);
		else
			printf("  %-4s  %s: measured %s, limit %s\n", res->holds ? "ok" : "FAIL",
			       a->expr_text[i], res->measured, res->limit);
	}
	return failed;
}

/* report: the table, the expectations and the JSON file. The exit status. */
static int report_results(const struct check_args *a, char **cmd, int cmd_status,
			  double seconds, const struct check_report *report,
			  const struct check_report *baseline, const struct stalls_report *stalls,
			  struct check_outcome *outcomes)
{
	char err[512];
	int failed;

	printf("\n");
	check_report_print(report, stdout);
	if (a->wants_stalls) {
		printf("\n");
		stalls_report_print_text(stalls, stdout);
	}
	failed = judge(a, report, baseline, stalls, outcomes);
	if (cmd_status) {
		fputs("\ncommand failed: '", stdout);
		text_escape_fputs(cmd[0], stdout);
		printf("' exited with status %d\n", cmd_status);
	}
	if (a->json) {
		struct check_meta meta = {
			.argv = (const char *const *)cmd,
			.exit_status = cmd_status,
			.seconds = seconds,
			.low_rules = getenv("IOTIER_LOW"),
			.high_rules = getenv("IOTIER_HIGH"),
			.low_class = getenv("IOTIER_LOW_CLASS"),
			.high_class = getenv("IOTIER_HIGH_CLASS"),
			.devices = a->devices,
		};

		if (check_report_write_json(report, &meta, outcomes, a->n_exprs, a->json, err,
					    sizeof(err)) < 0) {
			error_line("check", "%s", err);
			return 1;
		}
	}
	if (failed)
		printf("%d of %d expectations failed\n", failed, a->n_exprs);
	return failed || cmd_status ? 1 : 0;
}

static int check_main(int argc, char **argv)
{
	static struct config cfg; /* large: rule globs are inline */
	struct check_args a = { 0 };
	struct check_report *baseline = NULL, *report = NULL;
	struct check_outcome *outcomes = NULL;
	struct stalls_report stalls = { 0 };
	int ret, exit_code = 1, cmd_status = 0;
	double started = 0;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret < 0 ? 0 : ret;
	a.exprs = calloc((size_t)a.n_exprs + 1, sizeof(*a.exprs));
	outcomes = calloc((size_t)a.n_exprs + 1, sizeof(*outcomes));
	report = check_report_new();
	if (!a.exprs || !outcomes || !report) {
		fprintf(stderr, "iotier check: out of memory\n");
		goto cleanup;
	}
	exit_code = validate_args(&a, &cfg, &baseline);
	if (exit_code)
		goto cleanup;
	exit_code = run_traced(&a, argv + optind, &cfg, report, &stalls, &cmd_status, &started);
	if (!exit_code)
		exit_code = report_results(&a, argv + optind, cmd_status, cli_now() - started,
					   report, baseline, &stalls, outcomes);
cleanup:
	stalls_report_free(&stalls);
	check_report_free(report);
	check_report_free(baseline);
	free(outcomes);
	free(a.exprs);
	return exit_code;
}

const struct command command_check = {
	.name = "check",
	.summary = "run a command traced, report I/O per tier and class, check expectations",
	.help = check_help,
	.main = check_main,
};
