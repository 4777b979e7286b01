/* SPDX-License-Identifier: MIT */
/*
 * fork.h: how the shim tells a forked, vforked or raw-cloned child from its parent, and
 * resets what a child inherited. All of it lives in fork.c, with the one list of resets.
 */
#ifndef IOTIER_FORK_H
#define IOTIER_FORK_H

#include <stdbool.h>

#include "core/sys.h"

/* Add @reset to what a child runs first, in the order given; at init only. */
SHIM_HIDDEN void fork_on_child(void (*reset)(void));

/* Register the atfork handler, once at init: 0, or an error number. */
SHIM_HIDDEN int fork_hooks_init(void);

/*
 * In a child forked without atfork handlers, reset the inherited state before using it;
 * false in a vfork() child, which shares the parent's memory and must leave it alone.
 */
SHIM_HIDDEN bool shim_fork_check(void);

/*
 * True in a child of vfork() (or clone(CLONE_VM)) before it execs: it shares the parent's
 * memory, so the per-fd tables and the shim's ring mappings are the parent's, and its
 * close() of an inherited fd must leave them alone. Syscalls: call it only on slow paths,
 * where state exists for the fd. errno is kept.
 */
SHIM_HIDDEN bool shim_memory_borrowed(void);

#endif
