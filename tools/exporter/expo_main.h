/* SPDX-License-Identifier: MIT */
/*
 * expo_main.h: the exporter's run (expo_main.c): validate, trace and serve, with what the
 * rest of `iotier lat` parsed.
 */
#ifndef IOTIER_EXPO_MAIN_H
#define IOTIER_EXPO_MAIN_H

#include "expo_options.h"
#include "trace/lat/trace_lat.h"

#define EXPO_DEFAULT_INTERVAL 15.0

/* Everything else `iotier lat` parsed, as the exporter takes it. */
struct expo_run {
	struct lat_options lat;
	struct lat_report_opts report;
	enum lat_format format;
	double interval;        /* 0: EXPO_DEFAULT_INTERVAL */
	double duration;        /* 0: until SIGTERM or SIGINT */
	unsigned long count;
};

/* Validate, trace and serve until a signal or the duration. Returns the exit status. */
int expo_main(const struct expo_options *x, const struct expo_run *run);

#endif
