/* SPDX-License-Identifier: MIT */
/*
 * config.h: the whole shim configuration, read once from IOTIER_* environment variables and
 * an optional IOTIER_CONFIG file holding the same keys; settings.def lists them. The CLI loads it the same way before
 * it starts a command, so a setting the shim would reject is refused up front.
 */
#ifndef IOTIER_CONFIG_H
#define IOTIER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adaptive_target.h"
#include "log.h"
#include "rules.h"

#define DROP_GLOBS_MAX 16 /* globs in IOTIER_DROP_BEHIND */
#define URGENT_GLOBS_MAX 8 /* globs in IOTIER_URGENT */

/* Which cgroup hierarchy low processes are placed in (IOTIER_CGROUP); see cgroup_tier.h. */
enum cgroup_mode { CGROUP_AUTO = 0, CGROUP_OFF, CGROUP_V1, CGROUP_V2 };

#define LOW_WEIGHT_DEFAULT 10   /* IOTIER_LOW_WEIGHT, on io.weight's 1..10000 scale */
#define LOW_WEIGHT_MAX 10000

#define STATE_DIR_MAX 200 /* the state file's directory, with its NUL */

#define GATE_WAIT_MAX_NS 60000000000ull /* IOTIER_GATE_WAIT's largest value, 60 s */

#define TARGET_LOW_CLASS "be:7" /* the low class under a target, unless one is given */

struct config {
	struct tier_rules rules;
	int low_ioprio;        /* what low threads get; idle by default, be:7 under a target */
	bool low_class_given;  /* while loading: IOTIER_LOW_CLASS was given (false after) */
	int high_ioprio;       /* IOPRIO_KEEP, or what high threads get */
	enum log_level log;
	enum cgroup_mode cgroup_mode;  /* IOTIER_CGROUP: auto unless configured */
	unsigned low_weight;           /* IOTIER_LOW_WEIGHT: the low cgroup's io/blkio weight */
	bool low_weight_given;         /* IOTIER_LOW_WEIGHT was set (env, file or --cgroup-weight),
					* not the default: only then is a kernel without a weight
					* file worth a warning (cgroup_tier.c) */

	/* Low paths (docs/low-paths.md). */
	uint64_t writeback_bytes; /* steer a low thread's writeback every N bytes per file; 0 off */
	bool writeback_strict;    /* wait for the previous range first (strict_bytes_per_sync) */
	uint64_t dirty_budget;    /* dirty + writeback bytes all low threads may hold; 0 off */
	unsigned n_drop_globs;    /* IOTIER_DROP_BEHIND: files whose written pages are dropped */
	char drop_globs[DROP_GLOBS_MAX][RULE_GLOB_MAX];
	uint64_t low_rate;        /* bytes per second for all low threads together; 0 off */

	/* The adaptive low tier (docs/adaptive.md). */
	struct adaptive_target target; /* IOTIER_TARGET; target.set false: off */
	uint64_t low_min_rate;    /* IOTIER_LOW_MIN_RATE: the low tier is never held below it */
	char debt_log[RULE_GLOB_MAX]; /* IOTIER_DEBT_LOG: the database's log, a glob; "" none */
	uint64_t gate_wait_ns;    /* IOTIER_GATE_WAIT: the longest a low call waits at the gate */
	unsigned n_urgent_globs;  /* IOTIER_URGENT: thread names neither timed nor gated */
	char urgent_globs[URGENT_GLOBS_MAX][RULE_GLOB_MAX];

	/* IOTIER_STATE_DIR: where this process's state file goes for the exporter; "" none. */
	char state_dir[STATE_DIR_MAX];
};

/* Where a value comes from: the environment, or a KEY=VALUE file. */
typedef const char *(*config_lookup_fn)(const char *key, void *ctx);

/*
 * Fill @cfg from @lookup (getenv-like). When IOTIER_CONFIG names a file and @allow_file is
 * true, @file_text is its content (the caller reads it, so that the shim can use raw
 * syscalls); keys in the environment win over keys in the file. Returns 0, or -1 with one
 * line in @err naming the bad key and token.
 */
int config_load(struct config *cfg, config_lookup_fn lookup, void *ctx, const char *file_text,
		char *err, size_t errlen);

#define CONFIG_FILE_MAX (64 * 1024) /* an IOTIER_CONFIG file, its terminating NUL included */
#define CONFIG_SECURE 1              /* config_load_process(): secure mode, nothing read */

/*
 * The one loader: the configuration this process's shim runs with, from the environment and
 * the IOTIER_CONFIG file it names. Returns 0; or CONFIG_SECURE in secure mode (AT_SECURE:
 * setuid, setgid or file capabilities), where every IOTIER_* setting is ignored and @cfg
 * holds the defaults, with log at LOG_DEBUG if IOTIER_LOG=debug asked to be told, else
 * LOG_OFF; or -1 with one line in @err, where a file that cannot be read is named
 * "<@file_label><path>". Raw syscalls only: the shim calls it before its wrappers are ready.
 */
int config_load_process(struct config *cfg, const char *file_label, char *err, size_t errlen);

/*
 * Read the IOTIER_CONFIG file @path into @buf (CONFIG_FILE_MAX bytes). Only a regular text
 * file is read, and it is opened without blocking: a FIFO would hang the program's
 * constructor, /dev/stdin would eat its input, and a NUL byte would hide what follows.
 * Returns 0, or -1 with the reason in @err. Raw syscalls only.
 */
int config_file_read(const char *path, char *buf, char *err, size_t errlen);

/* Every setting at its settings.def default. */
void config_defaults(struct config *cfg);

/* The @i-th key a file may hold, or NULL past the last: for help text and the CLI. */
const char *config_key_at(unsigned i);

/*
 * A byte count: decimal digits with an optional binary suffix K, M or G (also KiB, MiB,
 * GiB), any case. Returns 0, or -1 with one line in @err naming the bad token.
 */
int config_parse_size(const char *text, uint64_t *out, char *err, size_t errlen);

/* Does @path match one of the IOTIER_DROP_BEHIND globs? */
bool config_drop_behind_matches(const struct config *cfg, const char *path);
/* Is a thread named @name urgent (IOTIER_URGENT)? The adaptive tier neither times nor holds it. */
bool config_urgent_matches(const struct config *cfg, const char *name);

#endif
