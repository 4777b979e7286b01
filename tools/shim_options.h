/* SPDX-License-Identifier: MIT */
/*
 * shim_options.h: the shim's settings as command-line flags, shared by every subcommand that
 * starts a program under libiotier.so (`iotier run`, `iotier check`). Each flag only sets the
 * IOTIER_* variable the shim reads, so a flag and the variable mean exactly the same, and the
 * whole configuration is then loaded once, with the shim's own code, before anything starts.
 */
#ifndef IOTIER_SHIM_OPTIONS_H
#define IOTIER_SHIM_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>

#include "config.h"

/* getopt values of the long-only shim flags; a subcommand numbers its own from SHIM_OPT_END. */
enum {
	SHIM_OPT_LOW_CLASS = 256,
	SHIM_OPT_HIGH_CLASS,
	SHIM_OPT_LOG,
	SHIM_OPT_CONFIG,
	SHIM_OPT_WRITEBACK,
	SHIM_OPT_WRITEBACK_STRICT,
	SHIM_OPT_DROP_BEHIND,
	SHIM_OPT_LOW_RATE,
	SHIM_OPT_CGROUP,
	SHIM_OPT_CGROUP_WEIGHT,
	SHIM_OPT_TARGET,
	SHIM_OPT_LOW_MIN_RATE,
	SHIM_OPT_END,
};

/* Short options, to put at the front of a subcommand's optstring (after "+:"). */
#define SHIM_SHORT_OPTIONS "l:H:"

/* Entries for a subcommand's struct option array. */
#define SHIM_LONG_OPTIONS                                                                  \
	{ "low", required_argument, NULL, 'l' },                                            \
	{ "high", required_argument, NULL, 'H' },                                           \
	{ "low-class", required_argument, NULL, SHIM_OPT_LOW_CLASS },                       \
	{ "high-class", required_argument, NULL, SHIM_OPT_HIGH_CLASS },                     \
	{ "log", required_argument, NULL, SHIM_OPT_LOG },                                   \
	{ "config", required_argument, NULL, SHIM_OPT_CONFIG },                             \
	{ "writeback", required_argument, NULL, SHIM_OPT_WRITEBACK },                       \
	{ "writeback-strict", no_argument, NULL, SHIM_OPT_WRITEBACK_STRICT },               \
	{ "drop-behind", required_argument, NULL, SHIM_OPT_DROP_BEHIND },                   \
	{ "low-rate", required_argument, NULL, SHIM_OPT_LOW_RATE },                         \
	{ "cgroup", required_argument, NULL, SHIM_OPT_CGROUP },                             \
	{ "cgroup-weight", required_argument, NULL, SHIM_OPT_CGROUP_WEIGHT },               \
	{ "target", required_argument, NULL, SHIM_OPT_TARGET },                             \
	{ "low-min-rate", required_argument, NULL, SHIM_OPT_LOW_MIN_RATE }

/* The help text of those flags, for a subcommand's usage. */
#define SHIM_OPTIONS_HELP                                                                  \
	"  -l, --low RULES        comma-separated rules for the low tier (repeatable)\n"       \
	"  -H, --high RULES       rules for the high tier; a high match beats a low one\n"     \
	"      --low-class C      idle (default) or be:0..be:7\n"                              \
	"      --high-class C     keep (default), be:N or rt:N\n"                              \
	"      --log LEVEL        the shim's messages on CMD's stderr: off, warn (default)\n"  \
	"                         or debug\n"                                                  \
	"      --config FILE      read IOTIER_* KEY=VALUE lines from FILE\n"                   \
	"      --cgroup MODE      auto (default), v1, v2 or off: where low processes get a\n"  \
	"                         cgroup weight (IOTIER_CGROUP)\n"                             \
	"      --cgroup-weight N  put CMD as a whole in a low cgroup with io weight N\n"       \
	"                         (1-10000, default 10; bfq caps at 1000) before it starts;\n" \
	"                         also the weight for processes a low rule matches\n"          \
	"\n"                                                                                   \
	"low paths (docs/low-paths.md):\n"                                                     \
	"      --writeback N      a low thread pushes its own buffered writes to the device\n" \
	"                         every N bytes per file, so they carry its class (default\n"  \
	"                         1M; 0 off)\n"                                                \
	"      --writeback-strict also wait for the previous push to finish (bounded dirty\n"  \
	"                         data per file, like RocksDB's strict_bytes_per_sync)\n"      \
	"      --drop-behind GLOBS\n"                                                          \
	"                         drop the pages written to files whose path matches a glob\n" \
	"                         from the page cache once written back (repeatable)\n"        \
	"      --low-rate BYTES   limit all low threads together to BYTES per second of\n"     \
	"                         reads and writes; high threads are never delayed (default\n" \
	"                         off)\n"                                                      \
	"\n"                                                                                   \
	"adaptive low tier (docs/adaptive.md; pread and pwrite only so far):\n"                \
	"      --target EXPR      a latency target for the high tier's reads, relative to\n"  \
	"                         their unloaded latency (read.p99<=2x) or absolute\n"        \
	"                         (read.p99<=1.5ms); percentiles p50, p90, p95, p99, p99.9\n" \
	"      --low-min-rate BYTES\n"                                                          \
	"                         a floor: the low tier is never held below BYTES per second\n" \
	"Sizes take a K, M or G suffix (binary).\n"

struct shim_flags {
	int seen_low, seen_high, seen_drop; /* a repeated list flag appends, a first one replaces */
	bool place_in_cgroup;               /* --cgroup-weight: CMD goes to its low cgroup */
	const char *empty_flag;             /* "--low" or "--high" given an empty value */
};

/*
 * Handle getopt's @opt if it is a shim flag: 1 when handled, 0 when it is not a shim flag,
 * -1 when the environment could not be set (errno set).
 */
int shim_flag(struct shim_flags *flags, int opt, const char *arg);

/*
 * Load the configuration the shim will see (environment and IOTIER_CONFIG file) into @cfg.
 * On a bad setting print one line for subcommand @cmd and return EXIT_USAGE; else 0.
 */
int shim_config_check(const char *cmd, const struct shim_flags *flags, struct config *cfg);

/* Put the shim into LD_PRELOAD for the command about to start: 0, or 1 after a message. */
int shim_preload_for(const char *cmd);

#endif
