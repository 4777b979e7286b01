/* SPDX-License-Identifier: MIT */
/*
 * prologue.h: what every wrapper runs first. Only shim/wrap/ includes it: its inline body
 * calls init.c (a thread's first call brings the shim up), so it sits above init in the
 * layers (scripts/shim-layers counts an inline call as an include of its callee's room).
 */
#ifndef IOTIER_PROLOGUE_H
#define IOTIER_PROLOGUE_H

#include <errno.h>
#include <stdatomic.h>

#include "globals.h"
#include "init.h"
#include "process_identity.h"
#include "thread_state.h"
#include "core/compiler.h"

/*
 * Called at the top of every wrapped I/O function. In the steady state it costs two TLS
 * loads, one relaxed atomic load and a predictable branch or two: no syscall, no lock, no
 * allocation. Work happens only when something changed (a new thread, a new name).
 */
static inline void shim_io_prologue(void)
{
	struct state_slot *slot = self_slot;

	if (unlikely(!slot)) {
		int saved = errno;

		slot = thread_attach_self();
		errno = saved;
		if (!slot)
			return;
	}
	if (unlikely(atomic_load_explicit((_Atomic uint32_t *)&slot->dirty, memory_order_relaxed))) {
		int saved = errno;

		thread_reevaluate(slot);
		errno = saved;
	}
	if (unlikely(shim.cmdline_rules) &&
	    (unlikely(atomic_load_explicit(&shim.title_eager_calls, memory_order_relaxed) > 0) ||
	     unlikely((++io_calls & 63) == 0))) {
		int saved = errno;

		process_check_title();
		errno = saved;
	}
}

#endif
