/* SPDX-License-Identifier: MIT */
/*
 * expo_collect.h: the exporter's collection (expo_collect.c): the tracer read into the
 * cumulative totals, and the clocks the series are stamped with.
 */
#ifndef IOTIER_EXPO_COLLECT_H
#define IOTIER_EXPO_COLLECT_H

#include "expo_state.h"

/* Read the tracer into the totals (lock held). Returns 0 or -errno. */
int expo_collect(struct expo *e);
/* When @row's series first appeared (OpenMetrics' _created), CLOCK_REALTIME seconds. */
double expo_created_at(const struct expo *e, const struct lat_row *row);
double expo_now_realtime(void);
double expo_now_monotonic(void);

#endif
