/* SPDX-License-Identifier: MIT */
/*
 * lat_coverage.h: how many of a device's completions the latency tracer saw, against the
 * kernel's own diskstats (lat_coverage.c): one entry per traced device, and how a report
 * vouches for its counts or says how many of its requests may be missing. Free of BPF.
 */
#ifndef IOTIER_LAT_COVERAGE_H
#define IOTIER_LAT_COVERAGE_H

#include <stdbool.h>

#include "iolat.h"
#include "trace/common/diskstats.h"

/* Devices whose completions are checked against diskstats at most (more are not checked). */
#define LAT_MAX_COVERAGE 128

/*
 * One device's completions in a window, as the kernel's diskstats count them and as the
 * tracer counted them (diskstats.h says which columns match which op). Only the ops in
 * @compared are checked: the ones traced (--op) among reads, writes and discards.
 */
struct lat_coverage {
	__u32 dev;
	__u32 compared;                   /* 1 << DISKSTATS_* */
	__u64 kernel[DISKSTATS_NR_OPS];
	__u64 traced[DISKSTATS_NR_OPS];
};

struct lat_snapshot; /* lat_snapshot.h */

/* Fill each coverage entry's traced counts from the rows (before any by-class merge); not
 * for a filtered snapshot, whose traced counts are the device's. */
void lat_coverage_count(struct lat_snapshot *snap);
/* Add @src's coverage into @dst's, device by device. */
void lat_coverage_merge(struct lat_snapshot *dst, const struct lat_snapshot *src);
/* Completions diskstats counted and the tracer did not, over the compared ops (negative
 * when the tracer counted more), and the totals of both. */
long long lat_coverage_missing(const struct lat_coverage *c, __u64 *kernel, __u64 *traced);
/* How many of the report's requests on @c's device may be missing at most: the device's
 * missing completions, and with a filter (@filtered) also every program run the kernel
 * reported skipping (@missed_runs: a skipped start leaves a request untracked unseen). */
unsigned long long lat_coverage_may_be_missing(const struct lat_coverage *c, bool filtered,
					       __u64 missed_runs);

#endif
