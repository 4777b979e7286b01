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

#include "core/core.h"
#include "core/settings.def"

/*
 * getopt values of the shim flags, one per settings.def row; a flag with a short form uses
 * its letter instead. A subcommand numbers its own long-only flags from SHIM_OPT_END.
 */
#define SHIM_OPT_ROW_(id, key, short, flag, kind, parse, default_value, help) SHIM_OPT_##id,
enum {
	SHIM_OPT_BEFORE_FIRST_ = 255,
	IOTIER_SETTINGS(SHIM_OPT_ROW_)
	SHIM_OPT_END,
};

/* Short options, to put at the front of a subcommand's optstring (after "+:"). */
#define SHIM_SHORT_OPTIONS "l:H:"

/* What each kind of flag takes (see settings.def). */
#define SHIM_FLAG_ARG_FLAG_RULES required_argument
#define SHIM_FLAG_ARG_FLAG_SET required_argument
#define SHIM_FLAG_ARG_FLAG_APPEND required_argument
#define SHIM_FLAG_ARG_FLAG_PLACE required_argument
#define SHIM_FLAG_ARG_FLAG_SWITCH no_argument

#define SHIM_LONG_OPTION_(id, key, short, flag, kind, parse, default_value, help)           \
	{ flag, SHIM_FLAG_ARG_##kind, NULL, (short) ? (short) : SHIM_OPT_##id },
#define SHIM_HELP_LINES_(id, key, short, flag, kind, parse, default_value, help) help

/* Entries for a subcommand's struct option array (followed by its own and the end). */
#define SHIM_LONG_OPTIONS IOTIER_SETTINGS(SHIM_LONG_OPTION_)

/* The help text of those flags, for a subcommand's usage. */
#define SHIM_OPTIONS_HELP IOTIER_SETTINGS(SHIM_HELP_LINES_) "Sizes take a K, M or G suffix (binary).\n"

#define SHIM_SETTING_ROW_(id, key, short, flag, kind, parse, default_value, help) SHIM_SETTING_##id,
enum { IOTIER_SETTINGS(SHIM_SETTING_ROW_) SHIM_SETTINGS_COUNT };

struct shim_flags {
	bool seen[SHIM_SETTINGS_COUNT];     /* a repeated list flag appends, a first one replaces */
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

/*
 * Put the shim into LD_PRELOAD for the command about to start: 0; or after one line, 2 when
 * the shim path is unusable (see shim_locate()), 1 when there is none or setenv failed.
 */
int shim_preload_for(const char *cmd);

#endif
