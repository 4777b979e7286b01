/* SPDX-License-Identifier: MIT */
/*
 * expo_render.h: the exposition (expo_render.c): every series, as OpenMetrics or as
 * Prometheus text 0.0.4.
 */
#ifndef IOTIER_EXPO_RENDER_H
#define IOTIER_EXPO_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "expo_state.h"

/* The whole exposition (lock held). */
void expo_render(FILE *out, const struct expo *e, bool openmetrics);
/* Collect and render into a malloc'ed buffer; NULL on failure. Takes the lock. */
char *expo_scrape(struct expo *e, bool openmetrics, size_t *len);

#endif
