/* SPDX-License-Identifier: MIT */
/*
 * preload.h: the preloaded library's insides, as the wrappers (wrap/) see them: the real
 * functions, the shared state, fork detection, the state file, the per-fd table, the
 * per-thread records, the process identity, the low paths, the adaptive hook and its
 * region across exec, and bring-up. Only wrap/ includes it (scripts/shim-layers fails on
 * anyone outside shim/ who does); prologue.h, what every wrapper runs first, is apart.
 */
#ifndef IOTIER_PRELOAD_H
#define IOTIER_PRELOAD_H

#include "preload/adaptive_hook.h"
#include "preload/adaptive_low.h"
#include "preload/adaptive_tree.h"
#include "preload/fd_table.h"
#include "preload/fork.h"
#include "preload/globals.h"
#include "preload/init.h"
#include "preload/low_paths.h"
#include "preload/process_identity.h"
#include "preload/real.h"
#include "preload/state_file.h"
#include "preload/thread_state.h"

#endif
