/* SPDX-License-Identifier: MIT */
/*
 * adaptive.h: the adaptive low tier's controller. Pure arithmetic over measurements: it is
 * fed one window at a time (the high tier's read latencies as a histogram, what the low tier
 * moved and how often it waited) and answers with how many low I/Os may be in flight (the
 * cap, 0 = held) and how large each may be (the chunk). No clock, no syscall, no lock: the
 * caller owns time and serialises calls, so the unit tests drive it with a simulated device.
 * The design and every constant are explained at the head of adaptive.c (use: docs/adaptive.md).
 */
#ifndef IOTIER_ADAPTIVE_H
#define IOTIER_ADAPTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"
#include "core/adaptive_target.h"

#define ADAPTIVE_UNLIMITED UINT32_MAX /* cap or chunk: no limit at all */
/*
 * A high read that begins within this of the end of its thread's previous one began
 * queued: the program went straight from one read to the next, as a thread does whose
 * next request was already waiting (adaptive.c, "An open loop's queue").
 */
#define ADAPTIVE_QUEUED_GAP_NS 20000ull

/*
 * Is a reader that began queued in @queued_alone_permille of its reads alone (the probes')
 * an open loop, whose queue the controller holds too? A closed loop queues in all of them
 * (back to back) or in none (think time), whatever the device does.
 */
#define ADAPTIVE_OPEN_LOOP_MIN_PERMILLE 50
#define ADAPTIVE_OPEN_LOOP_MAX_PERMILLE 950

static inline bool adaptive_open_loop(uint32_t queued_alone_permille)
{
	return queued_alone_permille >= ADAPTIVE_OPEN_LOOP_MIN_PERMILLE &&
	       queued_alone_permille <= ADAPTIVE_OPEN_LOOP_MAX_PERMILLE;
}

/*
 * The ladder of levels, from 0 (held) up: first the chunk grows at one I/O in flight, then
 * the number in flight grows at the largest chunk, and the top level lifts every limit.
 * Each step down halves the low tier's bytes in flight.
 */
#define ADAPTIVE_CHUNK_MIN_SHIFT 14 /* 16 KiB */
#define ADAPTIVE_CHUNK_MAX_SHIFT 20 /* 1 MiB */
#define ADAPTIVE_CAP_MAX_SHIFT 4    /* 16 in flight */
#define ADAPTIVE_LEVEL_CHUNKS (ADAPTIVE_CHUNK_MAX_SHIFT - ADAPTIVE_CHUNK_MIN_SHIFT + 1)
#define ADAPTIVE_LEVEL_FULL (ADAPTIVE_LEVEL_CHUNKS + ADAPTIVE_CAP_MAX_SHIFT + 1)

struct adaptive_params {
	uint64_t window_min_ns;    /* a window lasts max(window_min_ns, window_mult x target) */
	uint32_t window_mult;
	uint32_t window_max_mult;  /* a window with too few reads is extended up to this many */
	uint32_t min_samples;      /* reads a window needs to be judged (at least 2 / (1 - pct)) */
	uint32_t climb_windows;    /* good windows in a row before one level up */
	uint32_t hysteresis_mult;  /* ... times this, to climb back to a level that missed, */
	uint32_t backoff_max;      /* doubled on each new miss there, up to this */
	uint32_t idle_windows;     /* windows without reads before the low tier is released */
	uint32_t idle_reads;       /* a window that, extended to its longest, saw fewer reads
				      than this counts as one without reads (stray reads) */
	uint64_t probe_every_ns;   /* relative targets: how often the baseline is re-measured */
	uint64_t probe_drain_ns;   /* hold, let the low tier's I/O leave the device, ignore */
	uint64_t probe_measure_ns; /* hold and measure the reads alone (longer if few reads) */
	uint64_t probe_retry_ns;   /* after a probe with too few reads */
	uint64_t probe_warmup_ns;  /* between the first ADAPTIVE_WARMUP_PROBES probes */
	uint32_t probe_min_reads;  /* a baseline needs max(this, 2 / (1 - pct)) reads */
	uint64_t look_ns;          /* how often a window is looked at for a certain miss, or a
				      reader to take the first baseline of, before its end */
	uint64_t floor_rate;       /* bytes/s below which the low tier is never held (0: none) */
};

/* The defaults, with their reasons at the head of adaptive.c. */
void adaptive_params_default(struct adaptive_params *p);

/*
 * How far behind the database is (struct adaptive_window's debt), worst first in a window:
 * slowing its writes down (RocksDB's "Stalling writes") or stopping them ("Stopping writes").
 */
enum adaptive_debt { ADAPTIVE_DEBT_NONE = 0, ADAPTIVE_DEBT_SLOW = 1, ADAPTIVE_DEBT_STOP = 2 };

/* One window of measurements, accumulated by the caller since the previous step. */
struct adaptive_window {
	uint32_t hist[HIST_NR_BUCKETS]; /* the high tier's read latencies (bpf/hist.h buckets) */
	uint64_t low_bytes;             /* bytes the low tier completed */
	uint64_t low_limited;           /* low I/Os the limits held back (waited at the gate or
					   were split); 0: the low tier wanted no more */
	uint8_t debt;                   /* enum adaptive_debt: the database is falling behind,
					   relax (SLOW: one level up, STOP: full) */
	uint32_t l0_files;              /* the database's L0 files now (RocksDB's lsm_state) */
	uint32_t l0_trigger;            /* ... and its slowdown trigger; 0: unknown, no floor */
	uint64_t urgent_ios;            /* I/O calls of urgent threads (IOTIER_URGENT): a probe
					   that saw any is not alone, and void */
	uint64_t queued;                /* of the reads in hist, those that began as their
					   thread's last read ended (ADAPTIVE_QUEUED_GAP_NS): a
					   request that had waited in the program (queue_over) */
};

enum adaptive_phase { PHASE_RUN = 0, PHASE_PROBE_DRAIN, PHASE_PROBE_MEASURE };

#define ADAPTIVE_BASELINES 5 /* the baseline is the median of this many recent probes */
#define ADAPTIVE_WARMUP_PROBES 3 /* probes taken quickly at the start, for a median at once */

struct adaptive {
	struct adaptive_params p;
	struct adaptive_target target;

	/* The decision. */
	uint32_t level;             /* 0 (held) .. ADAPTIVE_LEVEL_FULL */
	uint32_t cap, chunk;        /* what the level means, for the gate and split_io; while
				       released, resume_level's: the fast path applies them
				       while the foreground is active, full while it is idle */
	uint32_t released;          /* 1: at full for want of reads (judge_idle) */

	/* Windows. */
	enum adaptive_phase phase;
	uint64_t window_start_ns, window_end_ns, last_step_ns;
	uint64_t deadline_ns;       /* the next step: the window's end, or a look before it */
	struct adaptive_window pending; /* a window still short of min_samples */
	uint32_t good_streak, idle_streak;
	uint64_t streak_reads, streak_excess; /* summed over the good streak, judged together */
	uint32_t miss_level;        /* last level that missed; climbing to it needs hysteresis */
	uint32_t miss_run;          /* judged windows missed in a row */
	uint32_t deep_run;          /* ... by twice over or more (levels_to_cut): the cut grows */
	uint32_t held_drain;        /* 1: cut to held, the next judged window is the drain's */
	uint32_t slow_start;        /* 1 from the first baseline to the first miss: one good
				       window climbs a level (finish_probe) */
	uint64_t last_read_ns;      /* the last step that collected reads: the reader is there */
	uint32_t good_level;        /* the highest level a window held at since a miss at or
				       under it; UINT32_MAX: none yet. A miss above it cuts at
				       least half way down to it */
	uint32_t backoff;           /* how many times longer that climb takes */
	uint32_t resume_level;      /* the level before an idle release or an L0 floor's lift,
				       to return to on a miss */
	uint32_t run_level;         /* the level to restore after a probe */
	uint32_t debt_level;        /* the level when the current debt began; UINT32_MAX: none */
	uint32_t l0_floor;          /* the level the database's L0 needs (adaptive_l0_floor): the
				       level, a cut and a release's allowance stay at or above it */
	uint32_t l0_files, l0_trigger; /* the last window's (the floor's inputs) */

	/* Baseline (relative targets only). */
	uint64_t baselines[ADAPTIVE_BASELINES]; /* most recent first, 0 = none */
	uint64_t baseline_ns;       /* 0 until the first valid probe */
	/*
	 * Per probe, its reads and how many of them were over the target even with the low
	 * tier held (an outside load, a busy host). Pooled, they give alone_permille: that
	 * much of a window's reads over the target is not blamed on the low tier.
	 */
	uint64_t probe_reads[ADAPTIVE_BASELINES], probe_over[ADAPTIVE_BASELINES];
	uint32_t alone_permille;
	/*
	 * ... and how many began queued (struct adaptive_window's queued), pooled the same
	 * way: an open-loop reader's utilisation alone, which queue_over holds it near.
	 */
	uint64_t probe_queued[ADAPTIVE_BASELINES];
	uint32_t queued_alone_permille;
	uint32_t valid_probes;
	uint32_t short_probes;      /* probes in a row with too few reads: the retry backs off */
	uint64_t next_probe_ns;

	/* What `iotier threads` will show. */
	uint64_t target_ns;         /* the bound in force; 0 while a relative one has no baseline */
	uint32_t miss_permille;     /* reads over the target in the last judged window */
	uint64_t rate;              /* low bytes/s in the last window */
	uint64_t held_ns;           /* total time at cap 0, probes included */
	uint64_t windows, misses, probes, floor_lifts, debt_lifts;
	uint64_t early_misses;      /* misses judged at a look, before the window's end */
	uint64_t outside_restores;  /* held windows of a relative target that missed anyway:
				       the level restored (held_outside) */
	uint64_t l0_lifts;          /* windows the L0 floor raised the level or refused a cut */
	uint64_t void_probes;       /* probes voided by urgent threads' I/O */
	uint64_t queue_misses;      /* misses of an open-loop reader's queue (queue_over) */
};

void adaptive_init(struct adaptive *c, const struct adaptive_params *p,
		   const struct adaptive_target *t, uint64_t now_ns);

/* When the current window ends: call adaptive_step at or after this time. */
static inline uint64_t adaptive_deadline(const struct adaptive *c)
{
	return c->deadline_ns;
}

/* Close the window that ends at @now_ns with measurements @w; updates cap and chunk. */
void adaptive_step(struct adaptive *c, uint64_t now_ns, const struct adaptive_window *w);

/*
 * Is every field of @c in its range at @now_ns? A controller in shared memory can be written
 * by any process of the tree; one out of range would divide by zero, shift past a word or
 * never end a window. *@why names the first bad field. A step torn by a stepper that died
 * passes: every value a step writes is in range.
 */
bool adaptive_sane(const struct adaptive *c, uint64_t now_ns, const char **why);

/* Make the cap and chunk those of the level again (a step torn between them). */
void adaptive_repair(struct adaptive *c);

/*
 * The floor the database's L0 sets (adaptive.c, "Floor and debt"): 0 (none) up to L0 at half
 * @trigger, ADAPTIVE_LEVEL_FULL from one file short of it; 0 when @trigger is 0 (unknown).
 */
uint32_t adaptive_l0_floor(uint32_t l0_files, uint32_t trigger);

/* The cap and chunk of @level (exposed for tests and the docs' table). */
void adaptive_level_limits(uint32_t level, uint32_t *cap, uint32_t *chunk);

#endif
