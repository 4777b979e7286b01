// SPDX-License-Identifier: MIT
/*
 * cgroup_place.c: the CLI side of the cgroup weight tier (see cgroup_place.h). It reuses
 * the shim's own cgroup_tier code, so the CLI and the shim create the same directory with the
 * same weight and clean it up the same way.
 */
#include "cgroup_place.h"

#include <stdlib.h>

#include "cgroup_tier.h"
#include "commands.h"
#include "config.h"

static const char *lookup_env(const char *key, void *ctx)
{
	(void)ctx;
	return getenv(key);
}

int cgroup_place_before_exec(void)
{
	static struct config cfg; /* large: rule globs are inline */
	char err[512];

	/* cmd_run has validated everything already, file included; only the keys matter here */
	if (config_load(&cfg, lookup_env, NULL, NULL, err, sizeof(err)) < 0)
		return usage_error("run", "%s", err);
	if (cfg.cgroup_mode == CGROUP_OFF)
		return usage_error("run", "--cgroup-weight needs a cgroup, but the cgroup mode is "
				   "'off'");
	if (cgroup_tier_init(&cfg) == 0) {
		cgroup_tier_process(true);
		atexit(cgroup_tier_exit); /* runs only if exec fails and iotier returns */
	}
	return 0;
}
