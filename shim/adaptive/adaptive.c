// SPDX-License-Identifier: MIT
/*
 * adaptive.c: the controller of the adaptive low tier, modelled on the kernel's
 * blk-iolatency: judge each window by the fraction of the high tier's reads over the target,
 * cut the low tier's bytes in flight in half on a miss, climb back one step at a time after
 * several good windows, and climb back slower still to a level that has missed before. Two
 * things iolatency does not need: a relative target re-measures its baseline by holding the
 * low tier briefly, and a floor rate and a debt signal can overrule the target, because a
 * database whose compaction starves stalls its own writes. See docs/adaptive.md.
 */
#include "adaptive.h"
#include "adaptive_hist.h"

#include <string.h>

#define NONE UINT32_MAX
#define NS_PER_SEC 1000000000ull

void adaptive_params_default(struct adaptive_params *p)
{
	memset(p, 0, sizeof(*p));
	p->window_min_ns = 100000000;   /* 100 ms, blk-iolatency's minimum window */
	p->window_mult = 16;            /* blk-iolatency: 16 x target */
	p->window_max_mult = 4;
	p->min_samples = 32;
	p->climb_windows = 4;
	p->hysteresis_mult = 4;
	p->backoff_max = 32;
	p->idle_windows = 2;
	p->idle_reads = 8;              /* under 2 reads a window over 4 windows */
	p->probe_every_ns = 30 * NS_PER_SEC;
	p->probe_drain_ns = 50000000;    /* 50 ms */
	p->probe_measure_ns = 250000000; /* 250 ms: 300 ms held in all */
	p->probe_retry_ns = 5 * NS_PER_SEC;
	p->probe_warmup_ns = 2 * NS_PER_SEC;
}

void adaptive_level_limits(uint32_t level, uint32_t *cap, uint32_t *chunk)
{
	if (level >= ADAPTIVE_LEVEL_FULL) {
		*cap = ADAPTIVE_UNLIMITED;
		*chunk = ADAPTIVE_UNLIMITED;
	} else if (level == 0) {
		*cap = 0;
		*chunk = 1u << ADAPTIVE_CHUNK_MIN_SHIFT;
	} else if (level <= ADAPTIVE_LEVEL_CHUNKS) {
		*cap = 1;
		*chunk = 1u << (ADAPTIVE_CHUNK_MIN_SHIFT + level - 1);
	} else {
		*cap = 1u << (level - ADAPTIVE_LEVEL_CHUNKS);
		*chunk = 1u << ADAPTIVE_CHUNK_MAX_SHIFT;
	}
}

static void set_level(struct adaptive *c, uint32_t level)
{
	c->level = level > ADAPTIVE_LEVEL_FULL ? ADAPTIVE_LEVEL_FULL : level;
	adaptive_level_limits(c->level, &c->cap, &c->chunk);
}

static uint64_t window_len(const struct adaptive *c)
{
	uint64_t len = c->target_ns * c->p.window_mult;

	return len > c->p.window_min_ns ? len : c->p.window_min_ns;
}

/*
 * Enough reads that the allowance over the target is at least two reads: for p99, 200.
 * With fewer, a single stray slow read would be a miss.
 */
static uint64_t min_samples(const struct adaptive *c)
{
	uint64_t n = 2000 / (1000 - c->target.permille);

	return n > c->p.min_samples ? n : c->p.min_samples;
}

static void start_window(struct adaptive *c, uint64_t now_ns, uint64_t len)
{
	memset(&c->pending, 0, sizeof(c->pending));
	c->window_start_ns = now_ns;
	c->deadline_ns = now_ns + len;
}

void adaptive_init(struct adaptive *c, const struct adaptive_params *p,
		   const struct adaptive_target *t, uint64_t now_ns)
{
	memset(c, 0, sizeof(*c));
	c->p = *p;
	c->target = *t;
	c->target_ns = t->relative ? 0 : t->latency_ns;
	c->miss_level = c->resume_level = c->debt_level = NONE;
	c->next_probe_ns = now_ns; /* the first baseline as soon as the reader shows up */
	c->last_step_ns = now_ns;
	set_level(c, ADAPTIVE_LEVEL_FULL);
	start_window(c, now_ns, window_len(c));
}

static void accumulate(struct adaptive_window *acc, const struct adaptive_window *w)
{
	for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
		acc->hist[i] += w->hist[i];
	acc->low_bytes += w->low_bytes;
	acc->low_limited += w->low_limited;
	if (w->debt > acc->debt)
		acc->debt = w->debt; /* the worst of the window */
}

/*
 * The median of the recent probes' values (0 = no value): one noisy probe, high (an
 * outside load during it) or low (a lucky one), does not move it.
 */
static uint64_t median_of(const uint64_t *values)
{
	uint64_t v[ADAPTIVE_BASELINES];
	unsigned n = 0;

	for (unsigned i = 0; i < ADAPTIVE_BASELINES; i++) {
		uint64_t x = values[i];
		unsigned j = n;

		if (!x)
			continue;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
		n++;
	}
	return n ? v[(n - 1) / 2] : 0;
}

static void push_recent(uint64_t *values, uint64_t x)
{
	memmove(values + 1, values, (ADAPTIVE_BASELINES - 1) * sizeof(values[0]));
	values[0] = x;
}

/*
 * Pooled over the recent probes, since one probe holds only a few of the rare slow reads;
 * a probe whose baseline was more than twice the median (an outside load then) is left
 * out, as it is from the baseline.
 */
static uint32_t alone_over_permille(const struct adaptive *c)
{
	uint64_t reads = 0, over = 0;

	for (unsigned i = 0; i < ADAPTIVE_BASELINES; i++)
		if (c->baselines[i] && c->baselines[i] <= 2 * c->baseline_ns) {
			reads += c->probe_reads[i];
			over += c->probe_over[i];
		}
	return reads ? (uint32_t)(over * 1000 / reads) : 0;
}

static void start_probe(struct adaptive *c, uint64_t now_ns)
{
	c->run_level = c->level;
	set_level(c, 0);
	c->phase = PHASE_PROBE_DRAIN;
	c->probes++;
	start_window(c, now_ns, c->p.probe_drain_ns);
}

static void finish_probe(struct adaptive *c, uint64_t now_ns)
{
	const uint32_t *hist = c->pending.hist;
	uint64_t reads = adaptive_hist_count(hist);

	if (reads >= c->p.min_samples) {
		push_recent(c->baselines, adaptive_hist_percentile(hist, c->target.permille));
		c->baseline_ns = median_of(c->baselines);
		c->target_ns = c->baseline_ns * c->target.factor_milli / 1000;
		push_recent(c->probe_reads, reads);
		push_recent(c->probe_over, adaptive_hist_over(hist, c->target_ns));
		c->alone_permille = alone_over_permille(c);
		c->next_probe_ns = now_ns + (++c->valid_probes < ADAPTIVE_WARMUP_PROBES ?
					     c->p.probe_warmup_ns : c->p.probe_every_ns);
	} else {
		c->next_probe_ns = now_ns + c->p.probe_retry_ns;
	}
	set_level(c, c->run_level);
	c->phase = PHASE_RUN;
	start_window(c, now_ns, window_len(c));
}

static void reset_streak(struct adaptive *c)
{
	c->good_streak = 0;
	c->streak_reads = c->streak_excess = 0;
}

/* One step down; back to where the reader last did fine if a release overshot. */
static void cut(struct adaptive *c)
{
	uint32_t next = c->level ? c->level - 1 : 0;

	c->misses++;
	if (c->resume_level != NONE && c->resume_level < next)
		next = c->resume_level;
	c->resume_level = NONE;
	if (c->p.floor_rate && next == 0)
		next = 1; /* with a floor the low tier is never held */
	if (c->miss_level == c->level)
		c->backoff = c->backoff * 2 > c->p.backoff_max ? c->p.backoff_max : c->backoff * 2;
	else
		c->backoff = c->p.hysteresis_mult;
	c->miss_level = c->level;
	set_level(c, next);
	reset_streak(c);
}

/*
 * A window that did not miss joins the streak. After enough of them, climb if the streak as
 * a whole kept to half the allowance: summed, a few hundred reads per window become a
 * thousand, and one stray slow read no longer decides (the hysteresis band).
 */
static void climb_after_good(struct adaptive *c, uint64_t reads, uint64_t excess)
{
	uint32_t need = c->p.climb_windows;

	if (c->level + 1 == c->miss_level)
		need *= c->backoff;
	c->streak_reads += reads;
	c->streak_excess += excess;
	if (++c->good_streak < need)
		return;
	if (c->streak_excess * 2 <= c->streak_reads * (1000 - c->target.permille) &&
	    c->level < ADAPTIVE_LEVEL_FULL) {
		set_level(c, c->level + 1);
		c->resume_level = NONE; /* a level met for a streak: cut from here, one step */
	}
	reset_streak(c);
}

/* A window without reads: after a few in a row, give the low tier everything. */
static void judge_idle(struct adaptive *c)
{
	reset_streak(c);
	if (++c->idle_streak >= c->p.idle_windows && c->level < ADAPTIVE_LEVEL_FULL) {
		c->resume_level = c->level;
		c->miss_level = NONE;
		set_level(c, ADAPTIVE_LEVEL_FULL);
	}
}

/*
 * Judge a window with reads. A miss: more than (1 - percentile) of the reads over the
 * target beyond those that are over it even with the low tier held (alone_permille).
 * Anything else counts towards a climb (climb_after_good). The floor and the debt signal
 * overrule both.
 */
static void judge_reads(struct adaptive *c, uint64_t reads, const struct adaptive_window *w)
{
	uint64_t over = adaptive_hist_over(w->hist, c->target_ns) * 1000; /* thousandths of a read */
	uint64_t allowed = reads * (1000 - c->target.permille);
	uint64_t alone = reads * c->alone_permille;
	uint64_t excess = over > alone ? over - alone : 0;
	bool floor_set = c->p.floor_rate != 0;

	c->miss_permille = (uint32_t)(over / reads);
	if (floor_set && w->low_limited && c->rate < c->p.floor_rate) {
		c->floor_lifts++;
		reset_streak(c);
		set_level(c, c->level + 1);
	} else if (excess > allowed) {
		if (floor_set && c->rate < 2 * c->p.floor_rate && w->low_limited)
			c->floor_lifts++; /* halving would take the low tier under its floor */
		else
			cut(c);
	} else {
		climb_after_good(c, reads, excess);
	}
}

/*
 * The database is falling behind: the debt overrules the target. A slowdown climbs one
 * level a window (the bytes in flight double each window); a stop, where every write of
 * the database waits, goes straight to full. Either way the first miss after the debt
 * returns to one level above where the debt began (that level was too little for the
 * database), not one level a window down from wherever the debt took it.
 */
static void judge_debt(struct adaptive *c, enum adaptive_debt debt)
{
	c->debt_lifts++;
	reset_streak(c);
	if (c->debt_level == NONE)
		c->debt_level = c->level;
	set_level(c, debt == ADAPTIVE_DEBT_STOP ? ADAPTIVE_LEVEL_FULL : c->level + 1);
	c->resume_level = c->debt_level + 1 < c->level ? c->debt_level + 1 : c->level;
}

/*
 * A window reaches judgement with fewer than min_samples reads only once it has been
 * extended to its longest. Fewer than idle_reads there are stray reads, not a reader: a
 * flush thread reading back the table it just wrote, a stats thread. They say nothing about
 * a percentile (one slow one would be a miss), and judged, they would keep a low tier held
 * long after the reader stopped: treated as a window without reads.
 */
static uint64_t reader_reads(const struct adaptive *c, const struct adaptive_window *w)
{
	uint64_t reads = adaptive_hist_count(w->hist);

	return reads < c->p.idle_reads ? 0 : reads;
}

static void judge_window(struct adaptive *c, uint64_t now_ns)
{
	const struct adaptive_window *w = &c->pending;
	uint64_t reads = reader_reads(c, w);
	bool judged = c->target_ns != 0;

	c->windows++;
	if (w->debt) {
		judge_debt(c, (enum adaptive_debt)w->debt);
	} else if (!reads) {
		judge_idle(c);
	} else {
		c->idle_streak = 0;
		if (judged)
			judge_reads(c, reads, w);
	}
	if (!w->debt)
		c->debt_level = NONE;
	if (c->target.relative && !w->debt && reads &&
	    now_ns >= c->next_probe_ns)
		start_probe(c, now_ns);
	else
		start_window(c, now_ns, window_len(c));
}

#define HOUR_NS (3600 * NS_PER_SEC)
#define IN(v, lo, hi) ((v) >= (lo) && (v) <= (hi))
#define LEVEL_OR_NONE(v) ((v) <= ADAPTIVE_LEVEL_FULL || (v) == NONE)

/* set read as a byte: a bool holding anything but 0 or 1 must not be loaded as one. */
static bool target_sane(const struct adaptive_target *t)
{
	unsigned char set, relative;

	memcpy(&set, &t->set, 1);
	memcpy(&relative, &t->relative, 1);
	return set == 1 && relative <= 1 && IN(t->permille, 1, TARGET_PERMILLE_MAX) &&
	       (t->relative ? IN(t->factor_milli, TARGET_FACTOR_MIN_MILLI, TARGET_FACTOR_MAX_MILLI)
			    : IN(t->latency_ns, TARGET_ABS_MIN_NS, TARGET_ABS_MAX_NS));
}

/* Far wider than any default or test: they only keep the arithmetic finite. */
static bool params_sane(const struct adaptive_params *p)
{
	return IN(p->window_min_ns, 1000000, 60 * NS_PER_SEC) && IN(p->window_mult, 1, 1024) &&
	       IN(p->window_max_mult, 1, 64) && IN(p->min_samples, 1, 1000000) &&
	       IN(p->climb_windows, 1, 1024) && IN(p->hysteresis_mult, 1, 1024) &&
	       IN(p->backoff_max, 1, 65536) && IN(p->idle_windows, 1, 1024) &&
	       p->idle_reads <= 1000000 && IN(p->probe_every_ns, 1000000, HOUR_NS) &&
	       IN(p->probe_drain_ns, 1000000, HOUR_NS) &&
	       IN(p->probe_measure_ns, 1000000, HOUR_NS) &&
	       IN(p->probe_retry_ns, 1000000, HOUR_NS) && IN(p->probe_warmup_ns, 1000000, HOUR_NS);
}

/* Times are set from a step's now plus at most a window or a probe period. */
static bool times_sane(const struct adaptive *c, uint64_t now_ns)
{
	uint64_t horizon = now_ns + 24 * HOUR_NS;

	return c->window_start_ns <= horizon && c->deadline_ns <= horizon &&
	       c->last_step_ns <= horizon && c->next_probe_ns <= horizon;
}

bool adaptive_sane(const struct adaptive *c, uint64_t now_ns, const char **why)
{
	/* A target bound: 10 s absolute, or 100x a baseline that the histogram caps at 69 s. */
	const uint64_t bound_max = 100 * 100 * NS_PER_SEC;

	*why = NULL;
	if (!target_sane(&c->target))
		*why = "its target is out of range";
	else if (!params_sane(&c->p))
		*why = "its controller's parameters are out of range";
	else if (c->level > ADAPTIVE_LEVEL_FULL || c->run_level > ADAPTIVE_LEVEL_FULL ||
		 !LEVEL_OR_NONE(c->miss_level) || !LEVEL_OR_NONE(c->resume_level) ||
		 !LEVEL_OR_NONE(c->debt_level) || c->phase > PHASE_PROBE_MEASURE ||
		 c->backoff > 65536 || c->pending.debt > ADAPTIVE_DEBT_STOP)
		*why = "its controller's level or phase is out of range";
	else if (c->target_ns > bound_max || c->baseline_ns > bound_max ||
		 c->alone_permille > 1000)
		*why = "its controller's bound is out of range";
	else if (!times_sane(c, now_ns))
		*why = "its controller's times are out of range";
	return !*why;
}

void adaptive_repair(struct adaptive *c)
{
	set_level(c, c->level);
}

void adaptive_step(struct adaptive *c, uint64_t now_ns, const struct adaptive_window *w)
{
	uint64_t elapsed;
	uint64_t reads;

	if (now_ns < c->last_step_ns)
		now_ns = c->last_step_ns; /* a caller's clock never runs backwards here */
	if (c->cap == 0)
		c->held_ns += now_ns - c->last_step_ns;
	c->last_step_ns = now_ns;
	accumulate(&c->pending, w);
	if (now_ns < c->deadline_ns)
		return;
	elapsed = now_ns - c->window_start_ns;
	c->rate = elapsed ? (uint64_t)((unsigned __int128)c->pending.low_bytes * NS_PER_SEC /
				       elapsed) : 0;
	if (c->phase != PHASE_RUN && c->pending.debt) {
		/* A probe holds the low tier: not while the database falls behind. */
		set_level(c, c->run_level);
		c->phase = PHASE_RUN;
		c->next_probe_ns = now_ns + c->p.probe_retry_ns;
	}
	switch (c->phase) {
	case PHASE_PROBE_DRAIN: /* reads still queued behind the low tier's I/O: not alone */
		c->phase = PHASE_PROBE_MEASURE;
		start_window(c, now_ns, c->p.probe_measure_ns);
		return;
	case PHASE_PROBE_MEASURE:
		if (adaptive_hist_count(c->pending.hist) < min_samples(c) &&
		    elapsed < c->p.probe_measure_ns * c->p.window_max_mult) {
			c->deadline_ns = now_ns + c->p.probe_measure_ns / 2; /* a slow reader */
			return;
		}
		finish_probe(c, now_ns);
		return;
	case PHASE_RUN:
		break;
	}
	reads = adaptive_hist_count(c->pending.hist);
	if (reads && reads < min_samples(c) && !c->pending.debt &&
	    elapsed < window_len(c) * c->p.window_max_mult) {
		c->deadline_ns = now_ns + window_len(c) / 2; /* too few reads to judge yet */
		return;
	}
	judge_window(c, now_ns);
}
