// SPDX-License-Identifier: MIT
/*
 * shim_options.c: turn the shared shim flags into IOTIER_* variables, and load and check the
 * resulting configuration with the shim's own loader (see shim_options.h). The flags, what
 * each does and its help all come from settings.def.
 */
#include "shim_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "shim_locate.h"

enum flag_kind { FLAG_SET, FLAG_APPEND, FLAG_RULES, FLAG_SWITCH, FLAG_PLACE };

static const struct {
	const char *key;
	const char *flag;
	int opt;
	enum flag_kind kind;
} settings[] = {
#define SETTING_FLAG(id, key, short, flag, kind, parse, default_value, help) \
	{ key, flag, (short) ? (short) : SHIM_OPT_##id, kind },
	IOTIER_SETTINGS(SETTING_FLAG)
#undef SETTING_FLAG
};

/* Append @value to the comma-joined list in environment variable @key (for repeated flags). */
static int env_append(const char *key, const char *value, bool *seen)
{
	const char *old = *seen ? getenv(key) : NULL;
	char *joined;
	int ret;

	*seen = true;
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
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		if (settings[i].opt != opt)
			continue;
		switch (settings[i].kind) {
		case FLAG_RULES:
			/*
			 * An empty --low or --high on the command line is a mistake (an unset
			 * shell variable, say), whether alone or repeated; an empty IOTIER_LOW in
			 * the environment still means "no rules". Remember it and refuse it in
			 * shim_config_check, naming the flag.
			 */
			if (!*arg) {
				if (!flags->empty_flag)
					flags->empty_flag = settings[i].flag;
				return 1;
			}
			/* fall through */
		case FLAG_APPEND:
			return env_append(settings[i].key, arg, &flags->seen[i]) < 0 ? -1 : 1;
		case FLAG_SWITCH:
			return setenv(settings[i].key, "1", 1) < 0 ? -1 : 1;
		case FLAG_PLACE:
			flags->place_in_cgroup = true;
			/* fall through */
		case FLAG_SET:
			return setenv(settings[i].key, arg, 1) < 0 ? -1 : 1;
		}
	}
	return 0;
}

int shim_config_check(const char *cmd, const struct shim_flags *flags, struct config *cfg)
{
	char err[RULE_ERROR_MAX + 64];
	int ret;

	if (flags->empty_flag)
		return usage_error(cmd, "--%s needs at least one rule, not ''", flags->empty_flag);
	ret = config_load_process(cfg, "--config ", err, sizeof(err));
	if (ret < 0)
		return usage_error(cmd, "%s", err);
	if (ret == CONFIG_SECURE)
		return usage_error(cmd, "running setuid or with file capabilities: the shim would "
				   "ignore every IOTIER_* setting; run iotier without them");
	if (flags->place_in_cgroup && cfg->cgroup_mode == CGROUP_OFF)
		return usage_error(cmd, "--cgroup-weight needs a cgroup, but the cgroup mode is "
				   "'off'");
	return 0;
}

int shim_preload_for(const char *cmd)
{
	char shim[PATH_MAX], err[3 * PATH_MAX];

	int ret = shim_locate(shim, sizeof(shim), err, sizeof(err));

	if (ret < 0) {
		error_line(cmd, "%s", err);
		return ret == SHIM_BAD ? 2 : 1;
	}
	if (shim_preload_env(shim) < 0) {
		fprintf(stderr, "iotier %s: setting LD_PRELOAD: %s\n", cmd, strerror(errno));
		return 1;
	}
	return 0;
}
