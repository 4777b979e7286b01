/* SPDX-License-Identifier: MIT */
/*
 * adaptive_tree.h: one adaptive region for a whole process tree, across exec as well as
 * fork (docs/adaptive.md, "One tree"). A forked child shares the MAP_SHARED
 * mapping already; exec drops every mapping, so a process that holds the region keeps one
 * close-on-exec descriptor on its memfd, the exec wrappers (wrap_exec.c) hand the new image
 * a duplicate without close-on-exec, named in IOTIER_ADAPTIVE_FD, and the new image's shim
 * adopts it at start-up and takes the variable out of its environment again.
 */
#ifndef IOTIER_ADAPTIVE_TREE_H
#define IOTIER_ADAPTIVE_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "adaptive/adaptive.h"
#include "core/compiler.h"

#define ADAPTIVE_FD_ENV "IOTIER_ADAPTIVE_FD"

struct adaptive_region;

/*
 * At init, before any region exists: the region an ancestor handed over in
 * IOTIER_ADAPTIVE_FD, now this process's (its descriptor close-on-exec again, the variable
 * gone from environ). NULL when there is none, or after one warning when the handover is
 * unusable. The tree's target wins over @own, this image's own (a warning says so).
 */
SHIM_HIDDEN struct adaptive_region *adaptive_tree_inherit(const struct adaptive_target *own);

/* A fresh region: this process is the root of the tree. NULL with errno. */
SHIM_HIDDEN struct adaptive_region *adaptive_tree_create(const struct adaptive_params *p,
							 const struct adaptive_target *t,
							 uint64_t now_ns);

/*
 * The shim is off in this process (a bad configuration): still take IOTIER_ADAPTIVE_FD out
 * of environ and close the descriptor it names when that is the region's, so the program
 * keeps no stray descriptor and its children no stale number.
 */
SHIM_HIDDEN void adaptive_tree_discard(void);

/*
 * The region's descriptor, to duplicate for an exec'd image: -1 when this process holds no
 * region, or the program closed or replaced the descriptor (warned once). Keeps errno and
 * writes no memory: it may run in a vfork() child.
 */
SHIM_HIDDEN int adaptive_tree_fd(void);

/*
 * Will an image started with @envp load the shim? Yes when its LD_PRELOAD names libiotier,
 * or when this process's shim did not come from LD_PRELOAD (/etc/ld.so.preload loads it
 * into every program). Otherwise a handed-over descriptor would be a stray one.
 */
SHIM_HIDDEN bool adaptive_tree_shim_follows(char *const envp[]);

#endif
