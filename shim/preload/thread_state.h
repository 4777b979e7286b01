/* SPDX-License-Identifier: MIT */
/*
 * thread_state.h: the per-thread records (thread_state.c): a slot per thread in the shared
 * table, its name, and where a tier becomes an I/O priority. Lock-free, callable from any
 * thread; the wrappers reach it through prologue.h.
 */
#ifndef IOTIER_THREAD_STATE_H
#define IOTIER_THREAD_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "state_table.h"
#include "core/compiler.h"

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
/* Attach the calling thread once the shim is up: NULL while it is not (init.h's
 * thread_attach_self also brings it up). */
SHIM_HIDDEN struct state_slot *thread_attach_current(void);
/* Work out @slot's tier again and apply it; lock-free, callable from any thread. */
SHIM_HIDDEN void thread_reevaluate(struct state_slot *slot);
/* The same, returning the errno of a failed ioprio_set (0 when it applied). */
SHIM_HIDDEN int thread_reevaluate_result(struct state_slot *slot);
/* Mark every thread dirty and re-evaluate it: the process tier changed. */
SHIM_HIDDEN void threads_reevaluate_all(void);
/* After fork, in the child: only the calling thread survives. */
SHIM_HIDDEN void threads_after_fork_child(void);

#endif
