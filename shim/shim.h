/* SPDX-License-Identifier: MIT */
/*
 * shim.h: internals of libiotier.so shared between its units: the global state, the
 * per-thread record, and the hooks that the wrappers call on every I/O. Nothing here is
 * exported; the version script (libiotier.map) exports only the wrapped libc names and the
 * public API of iotier.h.
 */
#ifndef IOTIER_SHIM_H
#define IOTIER_SHIM_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "core/compiler.h"
#include "core/config.h"
#include "core/log.h"
#include "core/sys.h"
#include "state_table.h"


enum shim_status {
	SHIM_UNINITIALISED = 0,
	SHIM_ACTIVE,
	SHIM_DISABLED, /* bad configuration: warned once, the program runs untouched */
};

struct shim_globals {
	_Atomic int status;
	struct config cfg;          /* written once by shim_init, read-only afterwards */
	struct state_table *table;  /* per-thread records, see state_table.h */
	pthread_key_t exit_key;     /* its destructor frees a thread's slot */
	bool cmdline_rules;         /* cmdline: rules exist, so the title must be watched */
	bool process_rules;         /* comm: or cmdline: rules exist */
	_Atomic int process_tier;   /* what comm:/cmdline: rules give the whole process */
	/*
	 * A new process (fresh start or fork) usually sets its title soon and then does only a
	 * little I/O (PostgreSQL's autovacuum launcher): for its first calls the title is
	 * checked on every one, afterwards on every 64th.
	 */
	_Atomic int title_eager_calls;
};

extern struct shim_globals shim SHIM_HIDDEN;

/* The calling thread's record; NULL until it is attached. */
extern SHIM_TLS struct state_slot *self_slot SHIM_HIDDEN;
/* Set while the shim itself calls libc, so its own I/O passes straight through. */
extern SHIM_TLS int in_shim SHIM_HIDDEN;
/* I/O calls made by this thread, to look at the command line now and then. */
extern SHIM_TLS unsigned io_calls SHIM_HIDDEN;

/* init.c */
SHIM_HIDDEN void shim_init(void);

/* thread_state.c */
SHIM_HIDDEN struct state_slot *slot_alloc(void);
SHIM_HIDDEN void slot_free(struct state_slot *slot);
SHIM_HIDDEN struct state_slot *slot_find_handle(pthread_t handle);
SHIM_HIDDEN struct state_slot *slot_find_tid(pid_t tid);
/* Store @slot's new name and re-evaluate it (naming checks for fork and the process first). */
SHIM_HIDDEN void slot_set_name(struct state_slot *slot, const char *name);
SHIM_HIDDEN bool slot_is_inert(const struct state_slot *slot);
SHIM_HIDDEN struct state_slot *slot_inert(void);
/* Store a name without evaluating: for a thread that has not started yet. */
SHIM_HIDDEN void slot_prefill_name(struct state_slot *slot, const char *name);
SHIM_HIDDEN void slot_get_name(struct state_slot *slot, char name[16]);
SHIM_HIDDEN int threads_init(void);
/* In a new thread: record its tid, name and priority, then evaluate its tier. */
SHIM_HIDDEN void thread_start_tracking(struct state_slot *slot);
/*
 * Attach the calling thread (not created through our pthread_create, or the main thread),
 * bringing the shim up first if nothing has yet (init.c).
 */
SHIM_HIDDEN struct state_slot *thread_attach_self(void);
/* The same once the shim is up: NULL while it is not (thread_state.c). */
SHIM_HIDDEN struct state_slot *thread_attach_current(void);
/* Work out @slot's tier again and apply it; lock-free, callable from any thread. */
SHIM_HIDDEN void thread_reevaluate(struct state_slot *slot);
/* The same, returning the errno of a failed ioprio_set (0 when it applied). */
SHIM_HIDDEN int thread_reevaluate_result(struct state_slot *slot);
/* Mark every thread dirty and re-evaluate it: the process tier changed. */
SHIM_HIDDEN void threads_reevaluate_all(void);
/* After fork, in the child: only the calling thread survives. */
SHIM_HIDDEN void threads_after_fork_child(void);

/* process_identity.c */
SHIM_HIDDEN void process_identity_init(void);
SHIM_HIDDEN void process_identity_refresh(void);
SHIM_HIDDEN void process_check_title(void);
SHIM_HIDDEN void process_after_fork_child(void);

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
