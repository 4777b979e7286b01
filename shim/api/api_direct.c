// SPDX-License-Identifier: MIT
/*
 * api_direct.c: set a thread's tier with ioprio_set(2) alone. Per-thread state is two
 * thread-local ints; there is no rule matching and nothing to configure but the low class,
 * which comes from config_load_process() like the shim's.
 */
#include <errno.h>
#include <pthread.h>

#include "api_direct.h"
#include "iotier.h"
#include "core/config.h"
#include "core/sys.h"

static __thread int saved_ioprio = -1;
static __thread int current_tier = IOTIER_DEFAULT;

static int low_class = -1;
static pthread_once_t low_class_once = PTHREAD_ONCE_INIT;

/*
 * The low class as the shim would load it, with the same loader: the environment and the
 * IOTIER_CONFIG file, nothing in secure mode. A configuration the shim would refuse leaves
 * the default, idle.
 */
static void load_low_class(void)
{
	static struct config cfg; /* large: rule globs are inline */
	char err[RULE_ERROR_MAX + 64];

	if (config_load_process(&cfg, "IOTIER_CONFIG=", err, sizeof(err)) < 0)
		config_defaults(&cfg);
	low_class = cfg.low_ioprio;
}

static int low_ioprio(void)
{
	pthread_once(&low_class_once, load_low_class);
	return low_class;
}

int api_direct_set_tier(int tier)
{
	int want;

	if (tier != IOTIER_DEFAULT && tier != IOTIER_LOW && tier != IOTIER_HIGH) {
		errno = EINVAL;
		return -1;
	}
	if (saved_ioprio < 0) {
		saved_ioprio = sys_ioprio_get(0);
		if (saved_ioprio < 0)
			return -1;
	}
	want = tier == IOTIER_LOW ? low_ioprio() : saved_ioprio;
	if (sys_ioprio_set(0, want) < 0)
		return -1;
	current_tier = tier;
	return 0;
}

int api_direct_get_tier(void)
{
	return current_tier;
}
