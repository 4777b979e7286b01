// SPDX-License-Identifier: MIT
/*
 * adaptive_low.c: the region pointer and the low side of the gate (see adaptive_low.h).
 */
#include "adaptive_low.h"

#include "globals.h"
#include "adaptive/adaptive_region.h"
#include "core/sys.h"

struct adaptive_region *adaptive_on;

pid_t adaptive_self_tid(void)
{
	struct state_slot *slot = self_slot;

	return slot && slot->tid ? slot->tid : sys_gettid();
}

/*
 * The pid is a syscall: it is read only while a cap is in force. The wait is bounded by
 * IOTIER_GATE_WAIT, this process's own setting: nothing in the shared region can lengthen it.
 */
uint32_t adaptive_gate_enter(void)
{
	struct low_gate *gate = &adaptive_on->gate;

	if (atomic_load_explicit(&gate->cap, memory_order_relaxed) == LOW_GATE_UNLIMITED ||
	    adaptive_region_bad(adaptive_on))
		return 0;
	return adaptive_region_gate_enter(adaptive_on, sys_getpid(), adaptive_self_tid(),
					  shim.cfg.gate_wait_ns);
}

uint32_t adaptive_push_chunk(void)
{
	struct adaptive_region *r = adaptive_on;
	uint32_t chunk;

	if (!r || atomic_load_explicit(&r->gate.cap, memory_order_relaxed) == LOW_GATE_UNLIMITED)
		return 0;
	chunk = adaptive_region_chunk(r);
	/* The foreground idle: 1 MiB pieces at least, as the splitter's (adaptive_region_piece). */
	return chunk == ADAPTIVE_UNLIMITED ? 0 : adaptive_region_piece(r, chunk);
}

uint32_t adaptive_push_enter(void)
{
	atomic_fetch_add_explicit(&adaptive_on->pushes, 1, memory_order_relaxed);
	return adaptive_gate_enter();
}

void adaptive_push_exit(uint32_t ticket)
{
	low_gate_exit(&adaptive_on->gate, ticket, 0);
}
