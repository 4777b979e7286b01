/* SPDX-License-Identifier: MIT */
/*
 * globals.h: the shim's global state (globals.c): its status, the configuration loaded
 * once, the per-thread table, and the calling thread's record and re-entry guard. Nothing
 * here is exported; the version script (libiotier.map) exports only the wrapped libc names
 * and the public API of iotier.h. What works on this state has its own header:
 * thread_state.h, process_identity.h, init.h, and prologue.h for the wrappers.
 */
#ifndef IOTIER_GLOBALS_H
#define IOTIER_GLOBALS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "state_table.h"
#include "core/compiler.h"
#include "core/config.h"

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

#endif
