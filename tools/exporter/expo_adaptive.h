/* SPDX-License-Identifier: MIT */
/*
 * expo_adaptive.h: the adaptive controllers in the shims' state files (expo_adaptive.c).
 */
#ifndef IOTIER_EXPO_ADAPTIVE_H
#define IOTIER_EXPO_ADAPTIVE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "adaptive/adaptive_tier.h"
#include "expo_state.h"

/*
 * A state file's "adaptive_NAME N" line into @v (false: not one); the controller of a file
 * that @owner owns into @t, the freshest per tree; their series.
 */
bool expo_adaptive_line(struct adaptive_view *v, const char *line);
void expo_adaptive_add(struct expo_shim_totals *t, const struct adaptive_view *v, uid_t owner);
void expo_adaptive_render(FILE *out, bool om, const struct expo_shim_totals *t,
			  void (*family)(FILE *, bool, const char *, const char *, const char *));

#endif
