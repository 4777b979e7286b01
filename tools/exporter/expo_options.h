/* SPDX-License-Identifier: MIT */
/*
 * expo_options.h: the exporter's four options of `iotier lat` (expo_options.c): their getopt
 * entries and help lines for cmd_lat.c, their values, and the listening socket --listen
 * asks for.
 */
#ifndef IOTIER_EXPO_OPTIONS_H
#define IOTIER_EXPO_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

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

struct expo_options {
	const char *listen;     /* ADDR:PORT, or NULL */
	const char *textfile;   /* path, or NULL */
	const char *shim_dir;   /* NULL: $IOTIER_STATE_DIR or the default */
	bool no_shim;
};

/* Take one of the EXPO_OPT_* options. Returns 0, or EXIT_USAGE after printing one line. */
int expo_set_option(struct expo_options *x, int opt, const char *arg);

static inline bool expo_wanted(const struct expo_options *x)
{
	return x->listen || x->textfile;
}

/* Bind and listen on ADDR:PORT; the fd, or -1 with a message in @err. */
int expo_listen(const char *addr, char *err, size_t errlen);
/* "http://ADDR:PORT/metrics" of a listening socket, for the start-up line. */
void expo_describe_listener(int fd, char *buf, size_t len);

#endif
