// SPDX-License-Identifier: MIT
/*
 * api.c: iotier_set_tier() and iotier_get_tier() as the preloaded shim implements them. An
 * explicit tier beats every rule, and iotier_set_tier(IOTIER_DEFAULT) hands the thread back
 * to the rules. When the shim is off (bad configuration), the calls still work, by setting
 * the priority directly, as the static helper does without the shim.
 */
#include "iotier.h"

#include <errno.h>
#include "api_direct.h"
#include "preload/fork.h"
#include "preload/globals.h"
#include "preload/init.h"
#include "preload/thread_state.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int iotier_set_tier(int tier)
{
	struct state_slot *slot;
	int err;

	if (tier != IOTIER_DEFAULT && tier != IOTIER_LOW && tier != IOTIER_HIGH) {
		errno = EINVAL;
		return -1;
	}
	slot = self_slot ? self_slot : thread_attach_self();
	if (!slot || slot_is_inert(slot) || !shim_fork_check())
		return api_direct_set_tier(tier); /* off, or a vfork() child: the parent's records */
	slot->explicit_tier = tier;
	atomic_store((_Atomic uint32_t *)&slot->dirty, 1);
	err = thread_reevaluate_result(slot);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

EXPORT int iotier_get_tier(void)
{
	struct state_slot *slot = self_slot ? self_slot : thread_attach_self();

	if (!slot || slot_is_inert(slot))
		return api_direct_get_tier();
	return __atomic_load_n(&slot->tier, __ATOMIC_ACQUIRE);
}
