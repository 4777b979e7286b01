/* SPDX-License-Identifier: MIT */
/*
 * adaptive_view.h: what an operator sees of the adaptive controller (`iotier threads PID`,
 * the shim's state file, the exporter's iotier_adaptive_* metrics), taken as one
 * consistent snapshot of a region the stepper may be changing at that very moment.
 *
 * The stepper writes struct adaptive without atomics, so the region carries a sequence
 * counter (a seqlock): odd while a step runs, bumped again when it ends. A reader copies the
 * counter, the fields, the counter again, and keeps the copy only if both counts are the
 * same even number. The copy goes through a callback, so the same reader serves the shim
 * (its own mapping) and `iotier threads` (another process's, through /proc/PID/mem).
 */
#ifndef IOTIER_ADAPTIVE_VIEW_H
#define IOTIER_ADAPTIVE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "core/adaptive_target.h"

/* Every number a uint64_t, so one table (below) names them for the state file's lines. */
struct adaptive_view {
	struct adaptive_target target;
	uint64_t creator_pid;       /* the region's creator: the root of the process tree */
	uint64_t baseline_ns;       /* relative targets: the measured baseline, 0 until one */
	uint64_t bound_ns;          /* the bound in force; 0 while a relative one has no baseline */
	uint64_t level;             /* 0 (held) .. level_full */
	uint64_t level_full;
	uint64_t cap;               /* low I/Os in flight; 0 held, ADAPTIVE_UNLIMITED none */
	uint64_t chunk;             /* bytes per low request; ADAPTIVE_UNLIMITED none */
	uint64_t probing;           /* 1 while a baseline probe holds the low tier */
	uint64_t rate;              /* low tier's bytes/s in the last window */
	uint64_t miss_permille;     /* reads over the bound in the last judged window */
	uint64_t held_ns;           /* total time held (cap 0), probes included */
	uint64_t windows, misses, probes, floor_lifts, debt_lifts;
};

/* The numeric fields by name: the state file's "adaptive_NAME VALUE" lines. */
struct adaptive_view_field {
	const char *name;
	size_t offset;
};
extern const struct adaptive_view_field adaptive_view_fields[];
#define ADAPTIVE_VIEW_NFIELDS 16

static inline uint64_t *adaptive_view_at(struct adaptive_view *v, unsigned i)
{
	return (uint64_t *)((char *)v + adaptive_view_fields[i].offset);
}

/* Copy @len bytes at offset @off of the region into @dst; 0 or -errno. */
typedef int (*adaptive_copy_fn)(void *ctx, size_t off, void *dst, size_t len);

#define ADAPTIVE_VIEW_TRIES 1000 /* a step takes microseconds: this many tries span many */

/*
 * A consistent snapshot of the region that @copy reads, into @v: 0; -EAGAIN when every try
 * met a step in progress; -ERANGE when the snapshot's level, phase or percentile is out of
 * range (a garbled region); or the callback's -errno. The region's header is not checked
 * here: validate it first (adaptive_region_valid).
 */
int adaptive_view_read(adaptive_copy_fn copy, void *ctx, struct adaptive_view *v);

/* @copy for a region mapped in this process: @ctx is the region. Never fails. */
int adaptive_view_copy_local(void *ctx, size_t off, void *dst, size_t len);

#endif
