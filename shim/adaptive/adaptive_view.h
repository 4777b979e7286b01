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
 *
 * Only low threads step (adaptive_region.h), so with none calling the snapshot is the last
 * step's decision, however old: it carries that step's time (last_step_ns), and a reader
 * says how long ago that was, with its own clock (adaptive_view_step_age_ns).
 */
#ifndef IOTIER_ADAPTIVE_VIEW_H
#define IOTIER_ADAPTIVE_VIEW_H

#include <stdbool.h>
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
	/* The database's L0 (debt_log.h) as the last step saw it; 0 and 0: unknown, no floor. */
	uint64_t l0_files, l0_trigger; /* the trigger: the smaller of slowdown and stop */
	uint64_t l0_floor;          /* the level L0 imposes, 0 (none) .. level_full */
	uint64_t l0_lifts;          /* windows the L0 floor raised the level or refused a cut */
	uint64_t void_probes;       /* probes voided by urgent threads' I/O */
	uint64_t short_probes;      /* probes in a row with too few reads (0 after a valid one) */
	uint64_t valid_probes;      /* probes that gave a baseline */
	uint64_t baseline_reads;    /* reads of the last probe that gave one; 0: none yet */
	uint64_t last_step_ns;      /* CLOCK_MONOTONIC of the last step (or of the start) */
	uint64_t slots_taken_back;  /* gate slots taken back from dead or stopped holders */
	uint64_t step_takeovers;    /* steps taken over from a stepper past its lease */
	uint64_t lease_ns;          /* CLOCK_MONOTONIC at which the cap lapses; 0: none */
	uint64_t early_misses;      /* misses cut at a look, before their window's end */
	uint64_t outside_restores;  /* held windows that missed anyway: the level restored */
	uint64_t slow_start;        /* 1 from the first baseline to the first miss */
	uint64_t queued_alone_permille; /* reads that began queued in the probes (an open loop's
					   utilisation alone), thousandths */
	uint64_t queue_misses;      /* misses of an open-loop reader's queue */
};

/* The numeric fields by name: the state file's "adaptive_NAME VALUE" lines. */
struct adaptive_view_field {
	const char *name;
	size_t offset;
};
extern const struct adaptive_view_field adaptive_view_fields[];
#define ADAPTIVE_VIEW_NFIELDS 33

static inline uint64_t *adaptive_view_at(struct adaptive_view *v, unsigned i)
{
	return (uint64_t *)((char *)v + adaptive_view_fields[i].offset);
}

/*
 * How long before @now_ns (CLOCK_MONOTONIC, the reader's) the controller last stepped; 0
 * for a step stamped later (the stepper's coarse clock, a few ms behind, never ahead).
 * Another time namespace's monotonic clock has another origin: the age is then wrong.
 */
static inline uint64_t adaptive_view_step_age_ns(const struct adaptive_view *v, uint64_t now_ns)
{
	return now_ns > v->last_step_ns ? now_ns - v->last_step_ns : 0;
}

/*
 * A view whose last step is this old is stale: the cap's lease (ADAPTIVE_LEASE_NS) has
 * lapsed, so the gate applies no cap whatever the view says, until a low thread's call
 * steps again. A reader of a state file allows STATE_FILE_ADAPTIVE_EVERY_NS more: the file
 * is rewritten at most that often, so its last step may be older by that much while the
 * controller still steps.
 */
#define ADAPTIVE_VIEW_STALE_NS ADAPTIVE_LEASE_NS /* adaptive_region.h */

/*
 * Is the view stale at @now_ns, @slack_ns allowed (a state file's refresh period)? Once
 * the cap's lease (lease_ns: the window's end + ADAPTIVE_LEASE_NS) has passed; a view
 * without one (a state file of an older shim) by the last step's age.
 */
bool adaptive_view_stale(const struct adaptive_view *v, uint64_t now_ns, uint64_t slack_ns);

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
