// SPDX-License-Identifier: MIT
/*
 * cmd_lat.c: `iotier lat`, block-layer latency per I/O priority class and level. This file
 * only parses and checks options, runs the report loop and handles signals; tracing lives
 * in lat_session.c and printing in lat_report.c, which `iotier check` reuses.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "commands.h"
#include "exporter/expo.h"
#include "trace/common/trace_common.h"
#include "trace/lat/trace_lat.h"

static const char lat_help[] =
	"usage: iotier lat [-d DEV]... [--pid PID] [--cgroup PATH] [--op read,write,...]\n"
	"                  [--by class|level] [--interval S] [--count N] [--duration S]\n"
	"                  [--format text|json|prom] [--queue|--device] [--histogram]\n"
	"                  [--listen ADDR:PORT] [--textfile PATH] [--shim-dir DIR|--no-shim]\n"
	"\n"
	"Trace block requests with BPF and report their latency per device, operation and I/O\n"
	"priority (class none, rt, be or idle, and level 0-7): count, bytes, P50, P90, P99,\n"
	"P99.9 and max. Requests are attributed to the process that submitted them, so --pid\n"
	"is exact. Runs until Ctrl-C or SIGTERM, then prints the report; with --interval it\n"
	"prints one report per interval, like iostat. Needs root (CAP_BPF and CAP_PERFMON) and\n"
	"kernel BTF.\n"
	"\n"
	"options:\n"
	"  -d, --disk DEV         only this disk: loop0, /dev/nvme0n1 or 259:0; a partition\n"
	"                         means its disk (repeatable; default: all disks)\n"
	"  -p, --pid PID          only requests submitted by process PID\n"
	"      --children         with --pid, also count processes PID forks from now on\n"
	"  -c, --cgroup PATH      only requests submitted from this cgroup v2 directory\n"
	"  -o, --op LIST          only these operations: read, write, flush, discard, other\n"
	"  -b, --by class|level   one row per class, or per class and level (default)\n"
	"  -i, --interval S       print a report every S seconds (decimals allowed)\n"
	"  -n, --count N          stop after N reports (needs --interval)\n"
	"  -t, --duration S       stop after S seconds and print the report\n"
	"  -f, --format FMT       text (default), json (one object per report, see\n"
	"                         docs/lat-json.md) or prom (Prometheus text exposition,\n"
	"                         cumulative, for node_exporter's textfile collector)\n"
	"  -Q, --queue            latency from queue insert to completion (default)\n"
	"  -D, --device           latency from issue to the driver to completion\n"
	"  -H, --histogram        text: print a histogram under each row\n"
	"      --attach MODE      auto (default), tp_btf or raw_tp\n"
	"      --inflight-max N   size of the in-flight request map (default 16384)\n"
	"  -v, --verbose          show libbpf's messages\n"
	EXPO_HELP
	"\n"
	"examples:\n"
	"  iotier lat -d nvme0n1\n"
	"      latency per priority on nvme0n1 until Ctrl-C\n"
	"  iotier lat -d sda --op read --interval 1 --count 10\n"
	"      read latency, one report a second for ten seconds\n"
	"  iotier lat --pid $(pidof postgres) --by class --duration 60 -H\n"
	"      one minute of one process's I/O, one row per class, with histograms\n"
	"  iotier lat --format json --interval 10 >> lat.jsonl\n"
	"      machine-readable reports every ten seconds\n"
	"  iotier lat --format prom --duration 15 > /var/lib/node_exporter/iotier.prom.$$ &&\n"
	"    mv /var/lib/node_exporter/iotier.prom.$$ /var/lib/node_exporter/iotier.prom\n"
	"      a snapshot for node_exporter's textfile collector\n"
	"  iotier lat --listen 127.0.0.1:9586 --by class\n"
	"      a Prometheus exporter, until SIGTERM (docs/operations.md)\n";

enum { OPT_ATTACH = 256, OPT_INFLIGHT, OPT_CHILDREN };

static const struct option lat_options[] = {
	{ "disk", required_argument, NULL, 'd' },
	{ "pid", required_argument, NULL, 'p' },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "op", required_argument, NULL, 'o' },
	{ "by", required_argument, NULL, 'b' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 't' },
	{ "format", required_argument, NULL, 'f' },
	{ "queue", no_argument, NULL, 'Q' },
	{ "device", no_argument, NULL, 'D' },
	{ "histogram", no_argument, NULL, 'H' },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "inflight-max", required_argument, NULL, OPT_INFLIGHT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	EXPO_LONG_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

/* Everything the command line asks for. */
struct lat_args {
	struct lat_options o;
	struct lat_report_opts ro;
	enum lat_format fmt;
	double interval, duration;
	unsigned long count, pid;
	bool queue_set, device_set;
	__u32 tgid;
	struct expo_options xo;   /* --listen, --textfile: the exporter (tools/exporter) */
};

/* Index of @value in the NULL-terminated @names, or -1. */
/* Options that select one thing (who and what is traced): 0 or an exit status. */
static int parse_filter(struct lat_args *a, int opt, const char *arg)
{
	struct lat_options *o = &a->o;
	char bad[64];
	struct stat st;

	switch (opt) {
	case 'd':
		if (o->ndevs == IOLAT_MAX_DEVS)
			return usage_error("lat", "too many devices (at most %d)", IOLAT_MAX_DEVS);
		if (blkdev_resolve(arg, BLKDEV_WHOLE_DISK, &o->devs[o->ndevs]) < 0)
			return usage_error("lat", "'%s' is not a block device", arg);
		o->ndevs++;
		return 0;
	case 'p':
		if (cli_parse_ulong(arg, 0x3fffffff, &a->pid) < 0)
			return usage_error("lat", "bad pid '%s'", arg);
		if (kill((pid_t)a->pid, 0) < 0 && errno == ESRCH)
			return usage_error("lat", "no process with pid '%s'", arg);
		return 0;
	case OPT_CHILDREN:
		o->follow_forks = true;
		return 0;
	case 'c':
		if (stat(arg, &st) < 0 || !S_ISDIR(st.st_mode))
			return usage_error("lat", "cgroup '%s' is not a directory", arg);
		o->cgroup = arg;
		return 0;
	default: /* 'o' */
		if (lat_parse_ops(arg, &o->op_mask, bad, sizeof(bad)) < 0)
			return usage_error("lat", "unknown operation '%s' in --op", bad);
		return 0;
	}
}

/* Options about reports and the tracer itself: 0 or an exit status. */
static int parse_output(struct lat_args *a, int opt, const char *arg)
{
	static const char *const bys[] = { "level", "class", NULL };
	static const char *const formats[] = { "text", "json", "prom", NULL };   /* lat_format */
	static const char *const attaches[] = { "auto", "tp_btf", "raw_tp", NULL }; /* lat_attach */
	unsigned long ul;
	int i;

	switch (opt) {
	case 'b':
		if ((i = cli_pick(arg, bys)) < 0)
			return usage_error("lat", "bad --by '%s' (class or level)", arg);
		a->ro.by_class = i == 1;
		return 0;
	case 'i':
		return cli_parse_seconds(arg, &a->interval) < 0 ?
		       usage_error("lat", "bad interval '%s'", arg) : 0;
	case 'n':
		return cli_parse_ulong(arg, 1000000000ul, &a->count) < 0 ?
		       usage_error("lat", "bad count '%s'", arg) : 0;
	case 't':
		return cli_parse_seconds(arg, &a->duration) < 0 ?
		       usage_error("lat", "bad duration '%s'", arg) : 0;
	case 'f':
		if ((i = cli_pick(arg, formats)) < 0)
			return usage_error("lat", "unknown format '%s' (text, json or prom)", arg);
		a->fmt = (enum lat_format)i;
		return 0;
	case OPT_ATTACH:
		if ((i = cli_pick(arg, attaches)) < 0)
			return usage_error("lat", "bad --attach '%s' (auto, tp_btf or raw_tp)", arg);
		a->o.attach = (enum lat_attach)i;
		return 0;
	default: /* OPT_INFLIGHT */
		if (cli_parse_ulong(arg, 1u << 22, &ul) < 0)
			return usage_error("lat", "bad --inflight-max '%s'", arg);
		a->o.inflight_max = (__u32)ul;
		return 0;
	}
}

/* parse: 0 to go on, -1 after --help, or an exit status. */
static int parse_args(int argc, char **argv, struct lat_args *a)
{
	struct cli_getopt g = {
		.name = "lat", .optstring = ":d:p:c:o:b:i:n:t:f:QDHvh", .longopts = lat_options,
		.operands = CLI_NO_OPERANDS,
	};
	int opt, ret = 0;

	while (!ret && (opt = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (opt) {
		case 'd': case 'p': case 'c': case 'o': case OPT_CHILDREN:
			ret = parse_filter(a, opt, optarg);
			break;
		case 'b': case 'i': case 'n': case 't': case 'f': case OPT_ATTACH: case OPT_INFLIGHT:
			ret = parse_output(a, opt, optarg);
			break;
		case 'Q':
			a->queue_set = true;
			a->ro.stage = LAT_STAGE_QUEUE;
			break;
		case 'D':
			a->device_set = true;
			a->ro.stage = LAT_STAGE_DEVICE;
			break;
		case 'H':
			a->ro.histogram = true;
			break;
		case 'v':
			a->o.verbose = true;
			break;
		case EXPO_OPT_FIRST ... EXPO_OPT_LAST:
			ret = expo_set_option(&a->xo, opt, optarg);
			break;
		case 'h':
			fputs(lat_help, stdout);
			return -1;
		}
	}
	return ret ? ret : g.status;
}

/* validate: the options that only make sense together. 0 or an exit status. */
static int validate_args(struct lat_args *a)
{
	if (a->queue_set && a->device_set)
		return usage_error("lat", "--queue and --device exclude each other");
	if (a->count && !a->interval)
		return usage_error("lat", "--count needs --interval");
	if (a->o.follow_forks && !a->pid)
		return usage_error("lat", "--children needs --pid");
	if (a->pid) {
		a->tgid = (__u32)a->pid;
		a->o.filter_tgid = true;
		a->o.tgids = &a->tgid;
		a->o.ntgids = 1;
	}
	return 0;
}

/* report: one snapshot in the chosen format. */
static void report(const struct lat_snapshot *snap, struct lat_snapshot *total,
		   enum lat_format fmt, const struct lat_report_opts *ro)
{
	switch (fmt) {
	case LAT_FORMAT_TEXT:
		lat_report_text(stdout, snap, ro);
		fflush(stdout);
		break;
	case LAT_FORMAT_JSON:
		lat_report_json(stdout, snap, ro);
		break;
	case LAT_FORMAT_PROM:
		/* Prometheus counters only grow: every exposition is cumulative. */
		lat_snapshot_merge(total, snap);
		lat_report_prom(stdout, total, ro);
		break;
	}
}

/* Read what was counted since the last read and report it. 0, or 1 after a message. */
static int read_and_report(struct lat_session *s, const struct lat_args *a,
			   struct lat_snapshot *snap, struct lat_snapshot *total, bool final)
{
	if (lat_session_read(s, snap, final) < 0) {
		fprintf(stderr, "iotier lat: reading the histograms failed\n");
		return 1;
	}
	if (a->ro.by_class)
		lat_snapshot_by_class(snap);
	report(snap, total, a->fmt, &a->ro);
	return 0;
}

/* run: poll until a signal, the duration or the count, reporting each interval. */
static int run(struct lat_session *s, const struct lat_args *a, struct lat_snapshot *snap,
	       struct lat_snapshot *total)
{
	double start = cli_now(), next = a->interval ? start + a->interval : 0;
	unsigned long left = a->count;

	/* poll: wake every 100 ms to notice signals, the interval and the duration */
	while (!cli_stop) {
		double t = cli_now();

		if (a->duration && t - start >= a->duration)
			break;
		if (a->interval && t >= next) {
			if (read_and_report(s, a, snap, total, false))
				return 1;
			next += a->interval;
			if (left && --left == 0)
				return 0;
			continue;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
	/* final: what the last, partial interval (or the whole run) counted */
	return read_and_report(s, a, snap, total, true);
}

static int lat_main(int argc, char **argv)
{
	struct lat_args a = { .o.attach = LAT_ATTACH_AUTO, .ro.stage = LAT_STAGE_QUEUE,
			      .fmt = LAT_FORMAT_TEXT };
	struct lat_snapshot snap, total;
	struct lat_session *s = NULL;
	char err[512];
	int ret;

	ret = parse_args(argc, argv, &a);
	if (!ret)
		ret = validate_args(&a);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (expo_wanted(&a.xo))
		return expo_main(&a.xo, &(struct expo_run){ .lat = a.o, .report = a.ro,
			.format = a.fmt, .interval = a.interval, .duration = a.duration, .count = a.count });
	if (lat_preflight(err, sizeof(err)) < 0) {
		error_line("lat", "%s", err);
		return 1;
	}

	cli_stop_on_signals();
	lat_snapshot_init(&snap);
	lat_snapshot_init(&total);

	/* open, configure, load, attach */
	ret = 1;
	if (lat_session_open(&s, &a.o, err, sizeof(err)) < 0) {
		error_line("lat", "%s", err);
		goto cleanup;
	}
	fprintf(stderr, "Tracing block I/O latency... Hit Ctrl-C to end.\n");
	ret = run(s, &a, &snap, &total);
cleanup:
	lat_session_close(s);
	lat_snapshot_free(&snap);
	lat_snapshot_free(&total);
	return ret;
}

const struct command command_lat = {
	.name = "lat",
	.summary = "block I/O latency per priority class and level (BPF)",
	.help = lat_help,
	.main = lat_main,
};
