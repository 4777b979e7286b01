// SPDX-License-Identifier: MIT
/*
 * shim_options.c: turn the shared shim flags into IOTIER_* variables, and load and check the
 * resulting configuration with the shim's own parser (see shim_options.h).
 */
#include "shim_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "shim_locate.h"

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

int shim_flag(struct shim_flags *flags, int opt, const char *arg)
{
	static const struct {
		int opt;
		const char *key;
	} plain[] = {
		{ SHIM_OPT_LOW_CLASS, "IOTIER_LOW_CLASS" },
		{ SHIM_OPT_HIGH_CLASS, "IOTIER_HIGH_CLASS" },
		{ SHIM_OPT_LOG, "IOTIER_LOG" },
		{ SHIM_OPT_CONFIG, "IOTIER_CONFIG" },
		{ SHIM_OPT_WRITEBACK, "IOTIER_WRITEBACK" },
		{ SHIM_OPT_LOW_RATE, "IOTIER_LOW_RATE" },
		{ SHIM_OPT_CGROUP, "IOTIER_CGROUP" },
		{ SHIM_OPT_TARGET, "IOTIER_TARGET" },
		{ SHIM_OPT_LOW_MIN_RATE, "IOTIER_LOW_MIN_RATE" },
	};

	/*
	 * An empty --low or --high on the command line is a mistake (an unset shell variable,
	 * say), whether alone or repeated; an empty IOTIER_LOW in the environment still means
	 * "no rules". Remember it and refuse it in shim_config_check, naming the flag.
	 */
	if ((opt == 'l' || opt == 'H') && !*arg) {
		if (!flags->empty_flag)
			flags->empty_flag = opt == 'l' ? "--low" : "--high";
		return 1;
	}
	switch (opt) {
	case 'l':
		return env_append("IOTIER_LOW", arg, &flags->seen_low) < 0 ? -1 : 1;
	case 'H':
		return env_append("IOTIER_HIGH", arg, &flags->seen_high) < 0 ? -1 : 1;
	case SHIM_OPT_DROP_BEHIND:
		return env_append("IOTIER_DROP_BEHIND", arg, &flags->seen_drop) < 0 ? -1 : 1;
	case SHIM_OPT_WRITEBACK_STRICT:
		return setenv("IOTIER_WRITEBACK_STRICT", "1", 1) < 0 ? -1 : 1;
	case SHIM_OPT_CGROUP_WEIGHT:
		flags->place_in_cgroup = true;
		return setenv("IOTIER_LOW_WEIGHT", arg, 1) < 0 ? -1 : 1;
	}
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (plain[i].opt == opt)
			return setenv(plain[i].key, arg, 1) < 0 ? -1 : 1;
	return 0;
}

static const char *lookup_env(const char *key, void *ctx)
{
	(void)ctx;
	return getenv(key);
}

int shim_config_check(const char *cmd, const struct shim_flags *flags, struct config *cfg)
{
	static char file_text[64 * 1024];
	const char *file = getenv("IOTIER_CONFIG");
	char err[RULE_ERROR_MAX + 64];

	if (flags->empty_flag)
		return usage_error(cmd, "%s needs at least one rule, not ''", flags->empty_flag);
	if (file && *file) {
		int ret = config_read_file(file, file_text, sizeof(file_text));

		if (ret < 0)
			return usage_error(cmd, "--config %s: %s", file, strerror(-ret));
	}
	if (config_load(cfg, lookup_env, NULL, file && *file ? file_text : NULL, err,
			sizeof(err)) < 0)
		return usage_error(cmd, "%s", err);
	if (flags->place_in_cgroup && cfg->cgroup_mode == CGROUP_OFF)
		return usage_error(cmd, "--cgroup-weight needs a cgroup, but the cgroup mode is "
				   "'off'");
	return 0;
}

int shim_preload_for(const char *cmd)
{
	char shim[PATH_MAX], err[PATH_MAX + 128];

	if (shim_locate(shim, sizeof(shim), err, sizeof(err)) < 0) {
		fprintf(stderr, "iotier %s: %s\n", cmd, err);
		return 1;
	}
	if (shim_preload_env(shim) < 0) {
		fprintf(stderr, "iotier %s: setting LD_PRELOAD: %s\n", cmd, strerror(errno));
		return 1;
	}
	return 0;
}
