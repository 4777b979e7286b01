// SPDX-License-Identifier: MIT
/*
 * cgroup_place.c: the CLI side of the cgroup weight tier (see cgroup_place.h). It reuses
 * the shim's own cgroup_tier code, so the CLI and the shim create the same directory with the
 * same weight and clean it up the same way.
 */
#include "cgroup_place.h"

#include <stdlib.h>

#include "core/core.h"

void cgroup_place_before_exec(const struct config *cfg)
{
	if (cgroup_tier_init(cfg) == 0) {
		cgroup_tier_process(true);
		atexit(cgroup_tier_exit); /* runs only if exec fails and iotier returns */
	}
	/* warned once already; the shim in CMD would only fail and say it again */
	if (!cgroup_tier_usable())
		setenv("IOTIER_CGROUP", "off", 1);
}
