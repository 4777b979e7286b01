/* SPDX-License-Identifier: MIT */
/*
 * expo.h: `iotier lat --listen ADDR:PORT` and `--textfile PATH`, the long-running Prometheus
 * exporter. cmd_lat.c parses its usual options, hands the exporter's four options to
 * expo_set_option() and, when one of --listen or --textfile was given, gives the whole run
 * to expo_main(). Everything the exporter is lives under tools/exporter/: options and
 * validation (expo_options.c), collection (expo_collect.c), rendering (expo_render.c), the
 * HTTP server (expo_http.c), the textfile writer (expo_textfile.c), the shims' state
 * (expo_shim.c) and the loop that ties them together (expo_main.c).
 */
#ifndef IOTIER_EXPO_H
#define IOTIER_EXPO_H

#include <stdbool.h>

#include "lat_report.h"
#include "lat_session.h"

enum {
	EXPO_OPT_LISTEN = 400,
	EXPO_OPT_TEXTFILE,
	EXPO_OPT_SHIM_DIR,
	EXPO_OPT_NO_SHIM,
};
#define EXPO_OPT_FIRST EXPO_OPT_LISTEN
#define EXPO_OPT_LAST EXPO_OPT_NO_SHIM

/* Entries for cmd_lat.c's getopt_long table. */
#define EXPO_LONG_OPTIONS                                                        \
	{ "listen", required_argument, NULL, EXPO_OPT_LISTEN },                  \
	{ "textfile", required_argument, NULL, EXPO_OPT_TEXTFILE },              \
	{ "shim-dir", required_argument, NULL, EXPO_OPT_SHIM_DIR },              \
	{ "no-shim", no_argument, NULL, EXPO_OPT_NO_SHIM }

/* Lines for `iotier lat --help`. */
#define EXPO_HELP                                                                          \
	"      --listen ADDR:PORT serve /metrics over HTTP until SIGTERM (Prometheus text, or\n" \
	"                         OpenMetrics when asked); 127.0.0.1:9586, [::1]:9586,\n"     \
	"                         :9586 (every IPv4 address), or port 0 for any free one\n"        \
	"      --textfile PATH    write the same exposition to PATH every --interval (default\n" \
	"                         15 s), atomically, for node_exporter's textfile collector\n"  \
	"      --shim-dir DIR     where shims leave their state (default /run/iotier, or\n"    \
	"                         $IOTIER_STATE_DIR); published as iotier_shim_*\n"            \
	"      --no-shim          do not read or publish the shims' state\n"

#define EXPO_DEFAULT_INTERVAL 15.0

struct expo_options {
	const char *listen;     /* ADDR:PORT, or NULL */
	const char *textfile;   /* path, or NULL */
	const char *shim_dir;   /* NULL: $IOTIER_STATE_DIR or the default */
	bool no_shim;
};

/* Everything else `iotier lat` parsed, as the exporter takes it. */
struct expo_run {
	struct lat_options lat;
	struct lat_report_opts report;
	enum lat_format format;
	double interval;        /* 0: EXPO_DEFAULT_INTERVAL */
	double duration;        /* 0: until SIGTERM or SIGINT */
	unsigned long count;
};

/* Take one of the EXPO_OPT_* options. Returns 0, or EXIT_USAGE after printing one line. */
int expo_set_option(struct expo_options *x, int opt, const char *arg);

static inline bool expo_wanted(const struct expo_options *x)
{
	return x->listen || x->textfile;
}

/* Validate, trace and serve until a signal or the duration. Returns the exit status. */
int expo_main(const struct expo_options *x, const struct expo_run *run);

#endif
