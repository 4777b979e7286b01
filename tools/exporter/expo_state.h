/* SPDX-License-Identifier: MIT */
/*
 * expo_state.h: the exporter's shared state, which its units pass each other. One mutex
 * guards the tracer session and the cumulative snapshot, so concurrent scrapes and the
 * periodic collection take turns; the request counters are atomics, so a scrape that waits
 * for the mutex still shows up as in flight.
 */
#ifndef IOTIER_EXPO_STATE_H
#define IOTIER_EXPO_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "adaptive/adaptive_tier.h"
#include "trace/lat/trace_lat.h"

/* When a series first appeared: OpenMetrics' _created. */
struct expo_created {
	__u32 dev, op, ioclass;
	int level;
	double at;              /* CLOCK_REALTIME seconds */
};

/* Totals over every state file the last scan read (expo_shim.c). */
#define EXPO_SHIM_TIERS 2       /* low, high: untagged threads are not counted */
#define EXPO_SHIM_CLASSES 4     /* none, rt, be, idle */
#define EXPO_ADAPTIVE_MAX 64    /* controllers published at most: series stay bounded */
struct expo_shim_totals {
	unsigned long processes;
	unsigned long process_tier[EXPO_SHIM_TIERS];
	unsigned long threads[EXPO_SHIM_TIERS][EXPO_SHIM_CLASSES];
	unsigned long ignored;  /* files of dead processes, or not the process owner's */
	size_t nadaptive;       /* adaptive controllers, one per process tree under a target */
	struct adaptive_view adaptive[EXPO_ADAPTIVE_MAX];
};

struct expo {
	pthread_mutex_t lock;             /* guards everything down to `shim` */
	struct lat_session *session;
	struct lat_report_opts report;
	struct lat_snapshot delta;        /* scratch for each read */
	struct lat_snapshot total;        /* cumulative since start, gone disks dropped */
	struct expo_created *created;
	size_t ncreated, capcreated;
	double start_time;                /* CLOCK_REALTIME seconds */
	__u64 missed_runs;                /* BPF program runs the kernel skipped */
	__u64 inflight[IOLAT_NR_CLASSES];  /* block requests in flight now, by class */
	double oldest_s[IOLAT_NR_CLASSES]; /* age of the oldest of them, 0 when none */
	unsigned long collect_errors;
	unsigned long textfile_writes, textfile_errors;
	double scrape_seconds;            /* sum, and count, of completed scrapes */
	unsigned long scrapes;
	const char *shim_dir;             /* NULL: --no-shim */
	struct expo_shim_totals shim;

	atomic_uint in_flight;            /* HTTP requests being answered now */
	atomic_ulong dropped;             /* HTTP requests refused: too many in flight */
};

#endif
