// SPDX-License-Identifier: MIT
/*
 * api_direct.c: set a thread's tier with ioprio_set(2) alone. Per-thread state is two
 * thread-local ints; there is no rule matching and nothing to configure but the low class.
 */
#include <errno.h>
#include <linux/ioprio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api_direct.h"
#include "iotier.h"
#include "rules.h"

static __thread int saved_ioprio = -1;
static __thread int current_tier = IOTIER_DEFAULT;

static int low_ioprio(void)
{
	const char *cls = getenv("IOTIER_LOW_CLASS");
	int value = cls ? low_class_parse(cls, NULL, 0) : -1;

	return value >= 0 ? value : IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0);
}

int api_direct_set_tier(int tier)
{
	int want;

	if (tier != IOTIER_DEFAULT && tier != IOTIER_LOW && tier != IOTIER_HIGH) {
		errno = EINVAL;
		return -1;
	}
	if (saved_ioprio < 0) {
		saved_ioprio = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
		if (saved_ioprio < 0)
			return -1;
	}
	want = tier == IOTIER_LOW ? low_ioprio() : saved_ioprio;
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, want) < 0)
		return -1;
	current_tier = tier;
	return 0;
}

int api_direct_get_tier(void)
{
	return current_tier;
}
