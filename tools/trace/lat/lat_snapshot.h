/* SPDX-License-Identifier: MIT */
/*
 * lat_snapshot.h: a latency snapshot as plain data (no libbpf types), what lat_session.h
 * reads from the tracer and what the renderers and tests take, and its BPF-free helpers
 * (lat_snapshot.c): rows, merging, sorting, percentiles from the log-linear buckets of
 * bpf/hist.h, and the names and parsers of operations and classes.
 */
#ifndef IOTIER_LAT_SNAPSHOT_H
#define IOTIER_LAT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "iolat.h"
#include "lat_coverage.h"

/* One histogram row: a device, operation, class and level (level -1 once merged by class). */
struct lat_row {
	__u32 dev;
	__u32 op;
	__u32 ioclass;
	int level;
	__u64 count;
	__u64 bytes;
	struct iolat_lat q2c;
	struct iolat_lat d2c;
};

struct lat_snapshot {
	struct timespec start, end;   /* CLOCK_REALTIME bounds of the interval */
	size_t nrows, cap;
	struct lat_row *rows;
	/* Since the session was opened: */
	__u64 drops;                  /* requests not tracked, in-flight map full */
	__u64 hist_drops;             /* completions lost, histogram map full */
	__u64 requeues;
	__u64 merges;
	/* Now: */
	__u64 inflight;               /* requests in the in-flight map */
	__u32 inflight_max;
	const char *attach;           /* "tp_btf" or "raw_tp" */
	/* Coverage: one entry per traced device whose diskstats could be read. Without a
	 * submitter filter, traced counts the rows; with one (--pid, --children, --cgroup:
	 * coverage_filtered) the rows are a subset and traced counts every completion of the
	 * device that the tracer saw, so its shortfall bounds what the rows may lack. */
	bool has_coverage;
	bool coverage_filtered;
	__u64 missed_runs;            /* program runs the kernel reported skipping, this window */
	size_t ncov;
	struct lat_coverage cov[LAT_MAX_COVERAGE];
};

/* Add the distribution @src into @dst: counts, sums, buckets, min and max. */
void lat_sum(struct iolat_lat *dst, const struct iolat_lat *src);
void lat_snapshot_init(struct lat_snapshot *snap);
void lat_snapshot_free(struct lat_snapshot *snap);
/* Find or add the row for a key; NULL on allocation failure. */
struct lat_row *lat_snapshot_row(struct lat_snapshot *snap, __u32 dev, __u32 op, __u32 ioclass,
				 int level);
/* Add @src's rows and counters into @dst (for cumulative reports). Returns 0 or -ENOMEM. */
int lat_snapshot_merge(struct lat_snapshot *dst, const struct lat_snapshot *src);
/* Merge levels: one row per device, op and class, with level -1. Returns 0 or -ENOMEM. */
int lat_snapshot_by_class(struct lat_snapshot *snap);
/* Sort rows by device, op, class, level. */
void lat_snapshot_sort(struct lat_snapshot *snap);

/*
 * The @p-th percentile (0 < p <= 100) of @l in ns: the midpoint of the bucket holding that
 * rank, clamped to [min, max], so percentiles are monotone and P100 is the exact max.
 * 0 when @l is empty.
 */
__u64 lat_percentile(const struct iolat_lat *l, double p);

const char *lat_op_name(__u32 op);
const char *lat_class_name(__u32 ioclass);
/* Parse "read,write,..." into a mask; -1 with the bad token in @bad (size @badlen). */
int lat_parse_ops(const char *list, __u32 *mask, char *bad, size_t badlen);

#endif
