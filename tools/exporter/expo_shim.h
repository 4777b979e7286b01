/* SPDX-License-Identifier: MIT */
/*
 * expo_shim.h: the shims' state files (expo_shim.c): the state directory scanned into
 * per-tier totals, published as iotier_shim_*.
 */
#ifndef IOTIER_EXPO_SHIM_H
#define IOTIER_EXPO_SHIM_H

#include "expo_options.h"
#include "expo_state.h"

/* Scan the state directory into e->shim (lock held). */
void expo_shim_scan(struct expo *e);
/* Create the default state directory (mode 1733) if it is missing; never fails the run. */
void expo_shim_prepare_dir(const char *dir);
/* The state directory --shim-dir, $IOTIER_STATE_DIR or the default name; NULL for --no-shim. */
const char *expo_shim_dir(const struct expo_options *x);

#endif
