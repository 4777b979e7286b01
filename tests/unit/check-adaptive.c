// SPDX-License-Identifier: MIT
/*
 * check-adaptive.c: unit tests of the adaptive controller (shim/adaptive/adaptive.c). Two kinds: a
 * simulated device (sim_device.c) for the behaviour a user sees (the cap engages under
 * contention, the target holds in steady state, everything is released when the reader
 * stops, the floor is kept), and hand-made windows for the exact rules (the ladder, the
 * hysteresis, the debt guard, the baseline's median). Simulated time: deterministic, fast.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptive/adaptive.h"
#include "adaptive/adaptive_hist.h"
#include "sim_device.h"
#include "check_main.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct adaptive c;
static struct adaptive_params params;
static struct sim_device dev;
static struct sim_stats st;
static uint64_t now;
/* What feed() adds to each window: the database's L0 and trigger, urgent threads' I/O. */
static uint32_t feed_l0, feed_trigger;
static uint64_t feed_urgent, feed_low_bytes, feed_queued;

static void setup(void)
{
	feed_l0 = feed_trigger = 0;
	feed_urgent = feed_low_bytes = feed_queued = 0;
	adaptive_params_default(&params);
	sim_device_default(&dev);
	dev.noise_permille = 1; /* one read in a thousand hit by an outside 5 ms spike */
	dev.noise_ns = 5 * MS;
	now = 0;
}

static void start(const char *target)
{
	struct adaptive_target t;
	char err[256];

	ck_assert_msg(adaptive_target_parse(target, &t, err, sizeof(err)) == 0, "%s", err);
	adaptive_init(&c, &params, &t, now);
}

/* @target's controller, put at @level as if it had got there (a test of what comes next). */
static void start_at(const char *target, uint32_t level)
{
	start(target);
	c.level = level;
	adaptive_repair(&c);
}

/*
 * A relative target's controller as if its probes had measured @baseline_ns: judged from
 * the next window, no probe due, no longer released at held as it starts (adaptive_init).
 */
static void as_if_probed(uint64_t baseline_ns)
{
	c.baseline_ns = baseline_ns;
	c.target_ns = baseline_ns * c.target.factor_milli / 1000;
	c.next_probe_ns = 3600 * SEC;
	c.released = 0;
	c.resume_level = UINT32_MAX; /* none */
	adaptive_repair(&c);
}

static void run_until(uint64_t until)
{
	sim_run(&dev, &c, &now, until, c.target_ns ? c.target_ns : UINT64_MAX, &st);
}

static uint64_t low_rate(const struct sim_stats *s)
{
	return s->ns ? s->low_bytes * SEC / s->ns : 0;
}

START_TEST(test_ladder)
{
	uint32_t cap, chunk, prev_bytes = 0;

	adaptive_level_limits(0, &cap, &chunk);
	ck_assert_uint_eq(cap, 0);
	adaptive_level_limits(1, &cap, &chunk);
	ck_assert_uint_eq(cap, 1);
	ck_assert_uint_eq(chunk, 16 << 10);
	adaptive_level_limits(ADAPTIVE_LEVEL_CHUNKS, &cap, &chunk);
	ck_assert_uint_eq(cap, 1);
	ck_assert_uint_eq(chunk, 1 << 20);
	adaptive_level_limits(ADAPTIVE_LEVEL_FULL - 1, &cap, &chunk);
	ck_assert_uint_eq(cap, 16);
	adaptive_level_limits(ADAPTIVE_LEVEL_FULL, &cap, &chunk);
	ck_assert_uint_eq(cap, ADAPTIVE_UNLIMITED);
	ck_assert_uint_eq(chunk, ADAPTIVE_UNLIMITED);
	/* Every step between held and full doubles the bytes in flight. */
	for (uint32_t level = 1; level < ADAPTIVE_LEVEL_FULL; level++) {
		adaptive_level_limits(level, &cap, &chunk);
		if (prev_bytes)
			ck_assert_uint_eq(cap * (chunk >> 10), 2 * prev_bytes);
		prev_bytes = cap * (chunk >> 10);
	}
}
END_TEST

/* The rig's reader alone has a P99 near 400 us; 1 MiB background writes make it ~10x. */
START_TEST(test_engages_under_contention)
{
	start("read.p99<=2x");
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	/* 2x the reader's P99 alone (300 us + up to 100 us), the start included */
	sim_run(&dev, &c, &now, 6 * SEC, 800000, &st);
	ck_assert_uint_ge(c.baseline_ns, 350000);
	ck_assert_uint_le(c.baseline_ns, 450000);
	ck_assert_uint_eq(c.target_ns, c.baseline_ns * 2);
	/*
	 * Slow start: from level 1 after the first baseline, up a level a good window, to the
	 * first miss. Over the first 6 s, the start included: 0.28% of the reads over 2x alone
	 * (from full, searching down: 0.68%).
	 */
	ck_assert_uint_ge(c.misses, 1);
	ck_assert_uint_le(st.reads_over * 1000, st.reads * 5);
	ck_assert_uint_eq(c.cap, 1);
	ck_assert_uint_le(c.chunk, 128 << 10);
	ck_assert_uint_ge(c.chunk, 32 << 10);
}
END_TEST

START_TEST(test_meets_target_in_steady_state)
{
	start("read.p99<=2x");
	run_until(6 * SEC);
	run_until(66 * SEC);
	/* The P99 over a minute: at most 1% of the reads over the target. */
	ck_assert_uint_gt(st.reads, 60000);
	ck_assert_uint_le(st.reads_over * 100, st.reads);
	/* ... while the low tier keeps moving: never held outside probes, a fair share. */
	ck_assert_uint_ge(st.min_level, 1);
	ck_assert_uint_eq(st.held_ns_run, 0);
	ck_assert_uint_ge(low_rate(&st) * 100, sim_untagged_rate(&dev) * 15);
	/* Three quick probes at the start, then one every 30 s; 300 ms each. */
	ck_assert_uint_ge(c.probes, 4);
	ck_assert_uint_ge(c.valid_probes, 4);
	ck_assert_uint_le(c.held_ns, c.probes * 310 * MS);
}
END_TEST

/*
 * An open-loop reader (Poisson arrivals) at about @busy_permille of its thread alone: its
 * P99 from arrival over the target (k x alone, alone measured first, with no low tier), and
 * the low tier's rate against untagged's, from 6 s to 36 s.
 */
static void open_loop_run(uint32_t busy_permille, uint64_t *p99_felt_alone,
			  uint64_t *p99_felt, uint64_t *share_permille)
{
	uint32_t low_threads = dev.low_threads;
	uint64_t untagged = sim_untagged_rate(&dev);

	dev.noise_permille = 0;
	dev.arrival_ns = (dev.base_ns + dev.jitter_ns / 2) * 1000 / busy_permille;
	dev.low_threads = 0;
	start("read.p99<=2x");
	run_until(30 * SEC);
	*p99_felt_alone = adaptive_hist_percentile(st.felt, 990);
	dev.low_threads = low_threads;
	dev.next_arrival_ns = 0;
	now = 0;
	start("read.p99<=2x");
	run_until(6 * SEC);
	run_until(36 * SEC);
	*p99_felt = adaptive_hist_percentile(st.felt, 990);
	*share_permille = low_rate(&st) * 1000 / untagged;
}

/*
 * The shim times calls; an open-loop reader feels its requests from their arrival, queue
 * included (adaptive.c, "An open loop's queue"). Held to 2x its P99 alone as felt at 30% and
 * 60% busy alone, and kept from running away at 85%, while the low tier keeps what share
 * the limit leaves. On this device a level's felt P99 and share, fixed for 30 s: at 30%,
 * level 1 1.61x 19.5%, level 2 1.74x 31%, level 3 2.16x 43%; at 60%, level 1 already 2.37x
 * (11%); at 85% every level runs away. Without the queue's signal, the call's bound alone:
 * 2.16x (43%), 7.73x (25%) and 1578x (21%).
 */
START_TEST(test_open_loop_queue_held)
{
	static const struct {
		uint32_t busy_permille, max_x, min_share_permille;
	} runs[] = { { 300, 2, 250 }, { 600, 2, 10 }, { 850, 5, 0 } };

	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		uint64_t alone, felt, share;

		setup();
		open_loop_run(runs[i].busy_permille, &alone, &felt, &share);
		ck_assert_msg(felt <= runs[i].max_x * alone && share >= runs[i].min_share_permille,
			      "%u permille busy: P99 felt %lu us against %lu us alone, share %lu permille",
			      runs[i].busy_permille, felt / 1000, alone / 1000, share);
		ck_assert_uint_ge(c.queue_misses, 1);
	}
}
END_TEST

START_TEST(test_releases_when_reader_stops)
{
	start("read.p99<=2x");
	run_until(6 * SEC);
	ck_assert_uint_lt(c.level, ADAPTIVE_LEVEL_FULL);
	dev.reader_on = false;
	run_until(7 * SEC);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.released, 1); /* the fast path runs it at full (sim_device.c) */
	run_until(10 * SEC);
	ck_assert_uint_ge(low_rate(&st) * 1000, sim_untagged_rate(&dev) * 999);
	/* The reader is back: the first miss returns to where it did fine, not one step. */
	dev.reader_on = true;
	run_until(10 * SEC + 500 * MS);
	ck_assert_uint_le(c.chunk, 128 << 10);
	ck_assert_uint_eq(c.cap, 1);
}
END_TEST

/*
 * A floor above what the target allows: the floor wins, the low tier keeps its rate. Set
 * once the controller has settled below it, so it must climb back, not merely stop cutting.
 */
START_TEST(test_floor_is_kept)
{
	start("read.p99<=2x");
	run_until(6 * SEC);
	run_until(8 * SEC);
	ck_assert_uint_lt(low_rate(&st), 100ull << 20);
	params.floor_rate = c.p.floor_rate = 100ull << 20;
	run_until(10 * SEC);
	run_until(40 * SEC);
	ck_assert_uint_gt(c.floor_lifts, 0);
	ck_assert_uint_eq(st.held_ns_run, 0);
	ck_assert_uint_ge(low_rate(&st), params.floor_rate);
	ck_assert_uint_le(st.windows_under_floor * 10, st.windows_run);
}
END_TEST

/*
 * One read in 200 hit by an outside 5 ms spike: as many as the low tier is allowed to
 * cause. The probes see them with the low tier held, and they are not blamed on it.
 */
START_TEST(test_outside_noise_not_blamed)
{
	dev.noise_permille = 5;
	start("read.p99<=2x");
	run_until(6 * SEC);
	run_until(66 * SEC);
	ck_assert_uint_ge(c.alone_permille, 2);
	ck_assert_uint_le(c.alone_permille, 9);
	ck_assert_uint_le(st.held_ns_run * 100, st.ns * 15);
	ck_assert_uint_le(st.reads_over * 1000, st.reads * 15); /* the 1% and the noise */
}
END_TEST

/* An unreachable target holds the low tier, except above a floor. */
START_TEST(test_held_without_floor_never_with)
{
	start("read.p99<=10us");
	run_until(10 * SEC);
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.cap, 0);
	ck_assert_uint_gt(c.held_ns, 5 * SEC);

	params.floor_rate = 1 << 20;
	now = 0;
	start("read.p99<=10us");
	run_until(10 * SEC);
	ck_assert_uint_ge(st.min_level, 1);
	ck_assert_uint_eq(c.held_ns, 0);
	ck_assert_uint_ge(low_rate(&st), params.floor_rate);
}
END_TEST

/*
 * A database whose flushes need more of the device than the target leaves the low tier:
 * 16 MiB flushed every 80 ms (200 MiB/s), L0's slowdown trigger 20. The floor lifts the
 * tier as L0 nears the trigger, so L0 levels off below it; the target still rules below
 * half the trigger, and the level does not swing.
 */
START_TEST(test_l0_floor_keeps_writer_running)
{
	dev.l0_trigger = 20;
	dev.file_bytes = 16ull << 20;
	dev.flush_every_ns = 80 * MS;
	start("read.p99<=2x");
	run_until(6 * SEC);
	run_until(66 * SEC);
	/* Without the floor L0 grew past 500 files: the writer would have stopped. */
	ck_assert_uint_lt(st.max_l0, dev.l0_trigger);
	ck_assert_uint_gt(c.l0_lifts, 0);
	ck_assert_uint_ge(low_rate(&st), 200ull << 20); /* what the flushes need */
	/*
	 * The floor holds: no window ends under it, and the level moves with L0 only: when the
	 * floor moves (a flush every 80 ms here), and otherwise at most twice a second.
	 */
	ck_assert_uint_eq(st.windows_under_l0_floor, 0);
	ck_assert_uint_le(st.level_changes, st.floor_changes + 2 * 60);
	ck_assert_uint_ge(st.min_level, 1);
}
END_TEST

/* Flushes the target's share keeps up with: L0 stays under half the trigger, no floor. */
START_TEST(test_l0_floor_idle_while_l0_low)
{
	dev.l0_trigger = 20;
	dev.file_bytes = 16ull << 20;
	dev.flush_every_ns = SEC;
	start("read.p99<=2x");
	run_until(6 * SEC);
	run_until(66 * SEC);
	ck_assert_uint_le(st.max_l0, dev.l0_trigger / 2);
	ck_assert_uint_eq(c.l0_lifts, 0);
	ck_assert_uint_le(st.reads_over * 100, st.reads);
}
END_TEST

/* Hand-made windows: @reads reads at @lat_ns each, closed at the window's end. */
static void feed(uint64_t lat_ns, uint32_t reads, enum adaptive_debt debt)
{
	static struct adaptive_window w;

	memset(&w, 0, sizeof(w));
	w.hist[hist_bucket(lat_ns)] = reads;
	w.low_limited = 1;
	w.debt = (uint8_t)debt;
	w.l0_files = feed_l0;
	w.l0_trigger = feed_trigger;
	w.urgent_ios = feed_urgent;
	w.low_bytes = feed_low_bytes;
	w.queued = feed_queued;
	now = c.window_end_ns;
	adaptive_step(&c, now, &w);
}

#define GOOD 100000 /* 100 us against a 1 ms target */
#define BAD 1500000 /* 1.5 ms: a miss by less than twice the target, one level */

/* @n missed windows in a row under a 1 ms target, from full: n steps down, to 0 at most. */
static void start_and_miss(int n)
{
	start("read.p99<=1ms");
	for (int i = 0; i < n; i++)
		feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, n < ADAPTIVE_LEVEL_FULL ? ADAPTIVE_LEVEL_FULL - (uint32_t)n : 0);
}

static unsigned windows_to_climb(void)
{
	uint32_t level = c.level;
	unsigned n = 0;

	while (c.level == level && n < 1000) {
		feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
		n++;
	}
	ck_assert_uint_eq(c.level, level + 1);
	return n;
}

START_TEST(test_cut_and_hysteresis)
{
	start("read.p99<=1ms");
	ck_assert_uint_eq(c.window_end_ns - c.window_start_ns, 100 * MS);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 1);
	ck_assert_uint_eq(c.miss_permille, 1000);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 2);
	/* Back to the level that missed last: 4 x 4 windows; past it, the normal 4. */
	ck_assert_uint_eq(windows_to_climb(), 16);
	ck_assert_uint_eq(windows_to_climb(), 4);
	/* Missing again at the same level doubles the wait each time. */
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(windows_to_climb(), 16);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(windows_to_climb(), 32);
	/* One stray slow read in a good streak does not stop the climb. */
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	for (int i = 0; i < 63; i++)
		feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	feed(BAD, 1, ADAPTIVE_DEBT_NONE); /* 1 of 301: under the 1% a miss needs */
	feed(GOOD, 299, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
}
END_TEST

/* A miss cuts log2 of its excess: one level a window took 9 windows from full to 3. */
START_TEST(test_cut_in_proportion)
{
	start("read.p99<=1ms");
	feed(28 * MS, 300, ADAPTIVE_DEBT_NONE); /* 28x: four halvings */
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 4);
	start("read.p99<=1ms");
	feed(5 * MS, 300, ADAPTIVE_DEBT_NONE); /* 5x the target: two */
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 2);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE); /* not two deep misses in a row (below) */
	feed(28 * MS, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 6);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	feed(10 * SEC, 300, ADAPTIVE_DEBT_NONE); /* far over: to held, never under it */
	ck_assert_uint_eq(c.level, 0);
	/* A few reads far over, the rest fine: a percentile on a spike, one level. */
	start("read.p99<=1ms");
	{
		static struct adaptive_window w;

		w.hist[hist_bucket(GOOD)] = 294;
		w.hist[hist_bucket(28 * MS)] = 6; /* 2%: twice the 1% allowed */
		w.low_limited = 1;
		now = c.window_end_ns;
		adaptive_step(&c, now, &w);
	}
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 1);
	/* Relative: the excess is over the baseline. 400 us alone, 2x: 800 us. */
	start("read.p99<=2x");
	as_if_probed(400000);
	feed(11200000, 300, ADAPTIVE_DEBT_NONE); /* 27 allowances over alone: four */
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 4);
	feed(1000000, 300, ADAPTIVE_DEBT_NONE); /* 1.5 allowances: one */
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 5);
}
END_TEST

/*
 * A second deep miss in a row (twice over or more) halves the level at least: the cut
 * before was too small. From full, 28x then 3x: 12, 8, then 4, where log2 alone said 7.
 * A shallow miss (a few spikes) after a deep one is one level, as ever.
 */
START_TEST(test_deep_misses_search)
{
	start("read.p99<=1ms");
	feed(28 * MS, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 4);
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE); /* log2 says one */
	ck_assert_uint_eq(c.level, (ADAPTIVE_LEVEL_FULL - 4) / 2);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE); /* 1.5x: shallow */
	ck_assert_uint_eq(c.level, (ADAPTIVE_LEVEL_FULL - 4) / 2 - 1);
	/* A search never holds the tier: from 3 a second deep miss halves to 1, not to 0. */
	start_at("read.p99<=1ms", 4);
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 3);
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 1);
	feed(30 * MS, 300, ADAPTIVE_DEBT_NONE); /* its own size asks for it: held */
	ck_assert_uint_eq(c.level, 0);
}
END_TEST

/* A deep miss above a level that held goes at least half way back down to it. */
START_TEST(test_deep_miss_bisects_to_good_level)
{
	start_at("read.p99<=1ms", 2);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.good_level, 2);
	c.level = 10; /* a floor or a debt lifted it, say, and it came back */
	adaptive_repair(&c);
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE); /* log2 says one; half way to 2 is 6 */
	ck_assert_uint_eq(c.level, 6);
	/* A miss at or under the level that held means it holds no longer: forgotten. */
	c.level = 2;
	adaptive_repair(&c);
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.good_level, UINT32_MAX);
}
END_TEST

/*
 * Outside spikes at the lowest level: a lone shallow miss there does not hold the tier (the
 * climb back from held is the slowest); a second in a row does.
 */
START_TEST(test_lone_shallow_miss_at_bottom)
{
	start_at("read.p99<=1ms", 1);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 1);
	ck_assert_uint_eq(c.misses, 1);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
}
END_TEST

/*
 * The window is looked at every 10 ms: three reads at 6 ms under a 1 ms target (a tier at
 * full under a QD1 reader) are a certain miss, cut at the look, not 100-400 ms later at the
 * window's end. Fewer than idle_reads are not judged early (stray reads); a few slow reads
 * among many fast ones are not a certain miss.
 */
START_TEST(test_look_cuts_a_certain_miss)
{
	static struct adaptive_window w;

	start("read.p99<=1ms");
	ck_assert_uint_eq(c.deadline_ns - c.window_start_ns, params.look_ns);
	memset(&w, 0, sizeof(w));
	w.hist[hist_bucket(6 * MS)] = 3;
	now = c.deadline_ns;
	adaptive_step(&c, now, &w);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL); /* 3 < idle_reads: stray, maybe */
	ck_assert_uint_eq(c.deadline_ns, now + params.look_ns);
	w.hist[hist_bucket(6 * MS)] = 6;
	now = c.deadline_ns;
	adaptive_step(&c, now, &w);
	ck_assert_uint_eq(c.misses, 1);
	ck_assert_uint_eq(c.early_misses, 1);
	ck_assert_uint_lt(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.window_start_ns, now); /* a new window from the cut */
	/* 2 slow of 100 fast in 10 ms: the window's 1000 reads may hold 10; not yet a miss. */
	start("read.p99<=1ms");
	memset(&w, 0, sizeof(w));
	w.hist[hist_bucket(GOOD)] = 100;
	w.hist[hist_bucket(6 * MS)] = 2;
	now = c.deadline_ns;
	adaptive_step(&c, now, &w);
	ck_assert_uint_eq(c.misses, 0);
	ck_assert_uint_eq(c.windows, 0);
}
END_TEST

/*
 * Held, the reads are alone: under a relative target a held window that misses anyway says
 * the slow reads are the outside's, and the level that missed comes back at once, its
 * backoff forgotten; the first held window after the cut is the drain's, not judged. An
 * absolute target has no measure of alone: held it stays.
 */
START_TEST(test_held_miss_is_outside)
{
	start("read.p99<=2x");
	as_if_probed(500000);
	c.level = 1;
	adaptive_repair(&c);
	feed(30 * MS, 300, ADAPTIVE_DEBT_NONE); /* a host's hiccup: held */
	ck_assert_uint_eq(c.level, 0);
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE); /* the drain's window: not judged */
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.misses, 1);
	feed_low_bytes = 1 << 20; /* a held call past its wait bound: a folio on the device */
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE);
	feed_low_bytes = 0;
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.outside_restores, 0);
	ck_assert_uint_eq(c.misses, 2); /* the low tier's own: a miss, and 1 still the level */
	feed(3 * MS, 300, ADAPTIVE_DEBT_NONE); /* still slow, held, nothing moved: outside */
	ck_assert_uint_eq(c.level, 1);
	ck_assert_uint_eq(c.outside_restores, 1);
	ck_assert_uint_eq(c.misses, 2);
	/* Held and fine: it climbs back as ever, no restore. */
	feed(30 * MS, 300, ADAPTIVE_DEBT_NONE);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.outside_restores, 1);
	/* Absolute: a target no read meets holds the tier. */
	start_at("read.p99<=1ms", 1);
	for (int i = 0; i < 5; i++)
		feed(30 * MS, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.outside_restores, 0);
}
END_TEST

/*
 * The queue's rules (queue_over): a relative target whose reader queued in 60% of its
 * probes' reads allows 2 x 600 / 1600 = 75% in a window, beyond twice the binomial
 * deviation (5.7 points at 300 reads). Over by a little: one level; nearly always queued:
 * as deep as the wait is over (250 / 10 = 25: 4 levels). Held and over with nothing moved:
 * still held (a backlog drains). A reader that queues in all its reads alone (back to
 * back), or in none (think time), and an absolute target, are never judged by it.
 */
START_TEST(test_queue_rules)
{
	start_at("read.p99<=2x", 8);
	as_if_probed(500000);
	c.queued_alone_permille = 600;
	feed_queued = 240; /* 80%: within chance of 75% */
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 8);
	feed_queued = 255; /* 85% */
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 7);
	ck_assert_uint_eq(c.queue_misses, 1);
	feed_queued = 297; /* 99% */
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 3);
	ck_assert_uint_eq(c.queue_misses, 2);
	ck_assert_uint_eq(c.misses, 2);
	/*
	 * Held and still over, nothing moved: the backlog the level left, draining. Held it
	 * stays (a slow call held there is the outside's: the level back, held_outside).
	 */
	c.level = 1;
	adaptive_repair(&c);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE); /* the drain */
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.outside_restores, 0);
	ck_assert_uint_eq(c.queue_misses, 4);
	/* Closed loops and absolute targets: queued or not, no miss. */
	static const uint32_t closed[] = { 1000, 960, 40, 0 };

	for (unsigned i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
		start_at("read.p99<=2x", 8);
		as_if_probed(500000);
		c.queued_alone_permille = closed[i];
		feed_queued = closed[i] < 500 ? 300 : 0;
		feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
		ck_assert_uint_eq(c.level, 8);
	}
	start_at("read.p99<=1ms", 8);
	c.queued_alone_permille = 600;
	feed_queued = 300;
	feed(GOOD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 8);
	ck_assert_uint_eq(c.queue_misses, 0);
}
END_TEST

/*
 * A reader that stops: the window that held its last reads is judged at its end, not
 * extended for reads that will not come (it kept the tier at its level, then probed, into
 * the idle spell), and the tier is released two windows later.
 */
START_TEST(test_stopped_reader_not_waited_for)
{
	static struct adaptive_window w;

	start("read.p99<=2x");
	as_if_probed(500000);
	c.next_probe_ns = 0; /* a probe is due */
	c.level = 3;
	adaptive_repair(&c);
	memset(&w, 0, sizeof(w));
	w.hist[hist_bucket(GOOD)] = 50; /* the on period's last reads, then none */
	now = c.deadline_ns;
	adaptive_step(&c, now, &w);
	memset(&w, 0, sizeof(w));
	while (now < 400 * MS) {
		now = c.deadline_ns;
		adaptive_step(&c, now, &w);
		ck_assert_uint_eq(c.phase, PHASE_RUN); /* no probe without a reader */
	}
	ck_assert_uint_eq(c.released, 1);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
}
END_TEST

/*
 * A relative target's first baseline is probed as soon as a reader shows up (idle_reads
 * reads at a look), not after a first window spent at full with nothing to judge it by.
 */
START_TEST(test_first_probe_at_first_reads)
{
	static struct adaptive_window w;

	start("read.p99<=2x");
	memset(&w, 0, sizeof(w));
	w.hist[hist_bucket(6 * MS)] = params.idle_reads;
	now = c.deadline_ns;
	adaptive_step(&c, now, &w);
	ck_assert_uint_eq(c.phase, PHASE_PROBE_DRAIN);
	ck_assert_uint_eq(now, params.look_ns);
}
END_TEST

START_TEST(test_min_samples_and_window)
{
	start("read.p99<=10ms");
	ck_assert_uint_eq(c.window_end_ns - c.window_start_ns, 160 * MS); /* 16 x target */
	feed(15 * MS, 10, ADAPTIVE_DEBT_NONE); /* too few reads for a P99: wait for more */
	ck_assert_uint_eq(c.windows, 0);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	feed(15 * MS, 190, ADAPTIVE_DEBT_NONE); /* 200 in all: judged, a miss */
	ck_assert_uint_eq(c.windows, 1);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 1);
}
END_TEST

START_TEST(test_idle_release_and_resume)
{
	uint32_t cap, chunk;

	start_and_miss(7);
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 7);
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.released, 1);
	/* Released, the allowance for the reader's return stays the level before it. */
	adaptive_level_limits(ADAPTIVE_LEVEL_FULL - 7, &cap, &chunk);
	ck_assert_uint_eq(c.cap, cap);
	ck_assert_uint_eq(c.chunk, chunk);
	/*
	 * The fast path applied that level from the reader's first read: the window that
	 * missed was at it, and the cut goes one below (before the fast path, the window was
	 * at full and the cut went back to the level before the release).
	 */
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.released, 0);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL - 8);
}
END_TEST

/*
 * The reader frozen (bench/rocksdb/burst) while the low tier is held: every low thread waits at the
 * gate, so the steps come once a lease (1 s), when a held thread passes. Meanwhile another
 * high thread reads now and then (RocksDB's flush thread reading back the table it wrote,
 * O_DIRECT, slowed by its own writeback: 5 ms), one read every 1.6 s. Every window but a few
 * holds one such read: judged, each was a miss (1 of 1 over the target) and kept the low tier
 * held for as long as the reader stayed frozen. They are stray reads: the tier is released.
 */
START_TEST(test_stray_reads_release)
{
	static struct adaptive_window w;
	uint64_t next_stray;
	int steps = 0;

	start_and_miss(ADAPTIVE_LEVEL_FULL);
	next_stray = now + 300 * MS;
	while (c.level != ADAPTIVE_LEVEL_FULL && steps < 30) {
		uint64_t end = now + SEC; /* the lease: when a held low thread passes and steps */

		memset(&w, 0, sizeof(w));
		for (; next_stray < end; next_stray += 1600 * MS)
			w.hist[hist_bucket(BAD)]++;
		w.low_limited = 1;
		now = end;
		adaptive_step(&c, now, &w);
		steps++;
	}
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_le(steps, params.idle_windows); /* two windows, as for no reads at all */
	/* The reader thawed: its first missed window holds the tier again. */
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
}
END_TEST

/*
 * A reader starved by the low tier (the matrix's `cloud` sequential-read cells: 4-98 reads a
 * second with the tier at full, 1.6 ms alone) completes a read every 250 ms: each window
 * holds one read or none, under idle_reads. Counted as stray reads, the tier stayed at full
 * for the whole run. Reads that took half the window or more are a reader's: judged, they
 * miss, and the allowance the fast path applies while a read is in flight comes down.
 */
START_TEST(test_starved_reader_is_judged)
{
	static struct adaptive_window w;
	uint64_t next_read, end;

	start("read.p99<=2ms");
	next_read = now + 250 * MS;
	for (end = now + 3 * SEC; now < end;) {
		memset(&w, 0, sizeof(w));
		now += params.look_ns; /* a low thread steps at every look */
		if (now >= next_read) {
			w.hist[hist_bucket(250 * MS)] = 1;
			next_read += 250 * MS;
		}
		adaptive_step(&c, now, &w);
	}
	ck_assert_uint_ge(c.misses, 2);
	ck_assert_uint_le(c.cap, 1); /* the allowance, released or not: one piece at most */
	ck_assert_uint_lt(c.chunk, 1u << 20);
}
END_TEST

/*
 * A reader starved from its first read (a sequential reader's readahead ahead of it: the
 * matrix's `cloud` sequential-read cells) still gets a baseline, and the baseline is of its
 * reads alone: the probe starts from a window of a few slow reads, and its drain waits
 * while the device empties the queue (reads at 25 ms for 150 ms after the hold) instead of
 * measuring its tail. Measured after a fixed 50 ms, four of those reads were in the
 * baseline's P99: 25 ms, fifteen times the 1.6 ms alone.
 */
START_TEST(test_starved_reader_gets_a_baseline)
{
	static struct adaptive_window w;
	uint64_t next_read, held_since = 0;

	start("read.p99<=2x");
	next_read = now + 250 * MS;
	while (!c.valid_probes && now < 3 * SEC) {
		bool held = c.cap == 0;

		memset(&w, 0, sizeof(w));
		if (held && !held_since) {
			held_since = now;
			next_read = now + 25 * MS; /* the queue drains: a read every 25 ms */
		}
		now += params.look_ns;
		if (held && now - held_since > 150 * MS) {
			w.hist[hist_bucket(1600000)] = 6; /* alone: 1.6 ms a read */
			next_read = now;
		} else {
			uint64_t lat = held ? 25 * MS : 250 * MS;

			for (; next_read <= now; next_read += lat)
				w.hist[hist_bucket(lat)]++;
		}
		if (!held)
			held_since = 0;
		adaptive_step(&c, now, &w);
	}
	ck_assert_uint_eq(c.valid_probes, 1);
	ck_assert_uint_lt(c.baseline_ns, 2 * MS);
	ck_assert_uint_gt(c.baseline_ns, 1 * MS);
}
END_TEST

/* A slowdown: one level up a window, whatever the reads say. */
START_TEST(test_debt_relaxes)
{
	start_and_miss(20);
	for (int i = 1; i <= 3; i++) {
		feed(BAD, 300, ADAPTIVE_DEBT_SLOW);
		ck_assert_uint_eq(c.level, (uint32_t)i);
	}
	ck_assert_uint_eq(c.debt_lifts, 3);
}
END_TEST

/* A stop: straight to full, and kept there while the stop lasts despite missed windows. */
START_TEST(test_debt_stop_goes_full)
{
	start_and_miss(9);
	feed(BAD, 300, ADAPTIVE_DEBT_STOP);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.cap, ADAPTIVE_UNLIMITED);
	feed(BAD, 300, ADAPTIVE_DEBT_STOP);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.debt_lifts, 2);
	ck_assert_uint_eq(c.misses, 9);
}
END_TEST

/*
 * After the debt, the first miss returns to one level above where the debt began, not one
 * level down from where the debt took the tier; a level met for a streak forgets that.
 */
START_TEST(test_debt_then_resume)
{
	start_and_miss(9); /* level 3 */
	feed(BAD, 300, ADAPTIVE_DEBT_STOP);
	feed(BAD, 300, ADAPTIVE_DEBT_SLOW); /* the same debt: it began at 3 */
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 4);
	/* A new slowdown from 4 climbs to 6; a met streak there, then a miss: one step. */
	feed(BAD, 300, ADAPTIVE_DEBT_SLOW);
	feed(BAD, 300, ADAPTIVE_DEBT_SLOW);
	ck_assert_uint_eq(c.level, 6);
	windows_to_climb();
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 6);
}
END_TEST

/* A probe holds the low tier: debt ends it at once, and no probe starts during debt. */
START_TEST(test_debt_ends_probe)
{
	start("read.p99<=2x");
	for (int i = 0; i < 1000 && c.phase == PHASE_RUN; i++)
		feed(600000, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_PROBE_DRAIN);
	ck_assert_uint_eq(c.cap, 0);
	feed(600000, 300, ADAPTIVE_DEBT_SLOW);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.debt_lifts, 1);
	for (int i = 0; i < 200; i++) /* 20 s of debt: no probe */
		feed(600000, 300, ADAPTIVE_DEBT_SLOW);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.probes, 1);
}
END_TEST

/* Run windows until the controller starts a probe; then feed the probe @probe_ns reads. */
static void probe_with(uint64_t probe_ns)
{
	for (int i = 0; i < 1000 && c.phase == PHASE_RUN; i++)
		feed(600000, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_PROBE_DRAIN);
	ck_assert_uint_eq(c.cap, 0);
	feed(3 * MS, 50, ADAPTIVE_DEBT_NONE); /* still behind the low tier's last I/O: ignored */
	ck_assert_int_eq(c.phase, PHASE_PROBE_MEASURE);
	feed(probe_ns, 500, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_RUN);
}

static void assert_baseline_near(uint64_t ns)
{
	ck_assert_uint_ge(c.baseline_ns, ns - ns / 16);
	ck_assert_uint_le(c.baseline_ns, ns + ns / 16);
	ck_assert_uint_eq(c.target_ns, c.baseline_ns * 2);
}

START_TEST(test_baseline_survives_noise)
{
	start("read.p99<=2x");
	ck_assert_uint_eq(c.target_ns, 0);
	probe_with(400000);
	assert_baseline_near(400000);
	ck_assert_uint_ne(c.cap, 0);
	probe_with(4 * MS); /* an outside load during the probe */
	assert_baseline_near(400000);
	ck_assert_uint_eq(c.alone_permille, 0); /* its slow reads are not counted either */
	probe_with(400000);
	assert_baseline_near(400000);
	probe_with(100000); /* a lucky probe */
	assert_baseline_near(400000);
	probe_with(8 * MS);
	assert_baseline_near(400000);
	ck_assert_uint_eq(c.probes, 5);
	/* A lasting change moves it once it is most of the recent probes. */
	probe_with(800000);
	probe_with(800000);
	assert_baseline_near(800000);
}
END_TEST

/* Run windows until a probe starts, then past its drain: measuring. */
static void to_probe_measure(void)
{
	for (int i = 0; i < 1000 && c.phase == PHASE_RUN; i++)
		feed(600000, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_PROBE_DRAIN);
	feed(3 * MS, 50, ADAPTIVE_DEBT_NONE); /* the reader is back to its pace: drained */
	ck_assert_int_eq(c.phase, PHASE_PROBE_MEASURE);
}

/* A probe whose reader gives @reads reads a window of its measure: how long it held. */
static uint64_t probe_at(uint32_t reads)
{
	uint64_t held;

	to_probe_measure();
	held = c.held_ns;
	while (c.phase == PHASE_PROBE_MEASURE)
		feed(400000, reads, ADAPTIVE_DEBT_NONE);
	return c.held_ns - held;
}

/*
 * A probe counts its reads that began queued: their share, pooled over the recent probes as
 * alone_permille is, is the reader's queue alone.
 */
START_TEST(test_probe_measures_queue)
{
	start("read.p99<=2x");
	to_probe_measure();
	feed_queued = 300;
	feed(400000, 500, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.queued_alone_permille, 600);
	feed_queued = 0;
	to_probe_measure();
	feed_queued = 600; /* more than its reads (a slot's count raced the window): 100% */
	feed(400000, 500, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.queued_alone_permille, 800);
}
END_TEST

/*
 * A p99 baseline needs 200 reads, however long the probe has to hold for them (up to 4 x
 * its measure, 1 s, or 2 s for a reader whose rate gets there by then: probe_fills): from
 * fewer, its "P99" is the maximum (it took 32). Each probe short of them waits twice as
 * long before the next.
 */
START_TEST(test_probe_needs_reads)
{
	start("read.p99<=2x");
	to_probe_measure();
	for (int i = 0; i < 8 && c.phase == PHASE_PROBE_MEASURE; i++)
		feed(400000, 2, ADAPTIVE_DEBT_NONE); /* a reader this slow cannot give a baseline */
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.baseline_ns, 0);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.next_probe_ns, now + params.probe_retry_ns);
	/* 10 reads a window: 70 in the second held, 140 by 2 s: too few, and not held longer. */
	ck_assert_uint_le(probe_at(10), 4 * params.probe_measure_ns);
	ck_assert_uint_eq(c.baseline_ns, 0);
	ck_assert_uint_eq(c.valid_probes, 0);
	ck_assert_uint_eq(c.next_probe_ns, now + 2 * params.probe_retry_ns);
	/*
	 * 20 a window, 160 reads a second: 140 in the first second, but at that rate 200
	 * within 2 s, so the probe goes on to its 200 (before: short, the tier at full).
	 */
	ck_assert_uint_le(probe_at(20), 6 * params.probe_measure_ns);
	assert_baseline_near(400000);
	ck_assert_uint_eq(c.valid_probes, 1);
	/* 30 a window: the probe waits for its 200, within its usual second. */
	ck_assert_uint_le(probe_at(30), 4 * params.probe_measure_ns);
	assert_baseline_near(400000);
	ck_assert_uint_eq(c.short_probes, 0);
}
END_TEST

/*
 * A relative target starts released at held (adaptive_init): the level shows full, and the
 * allowance the fast path applies from a reader's first read is held, until the first
 * probe; one too short for a baseline goes back to full, as before, and one that gives a
 * baseline slow-starts at level 1. Before, the tier was at full until the first look at
 * the reader: the matrix's open-loop reader had a third of its run's slow reads there.
 */
START_TEST(test_released_at_held_until_baseline)
{
	start("read.p99<=2x");
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.released, 1);
	ck_assert_uint_eq(c.cap, 0);
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	feed(0, 0, ADAPTIVE_DEBT_NONE); /* nobody reads: so it stays, and nothing is held */
	ck_assert_uint_eq(c.cap, 0);
	ck_assert_uint_eq(c.released, 1);
	ck_assert_uint_eq(c.held_ns, 0);
	to_probe_measure();
	ck_assert_uint_eq(c.level, 0);
	while (c.phase == PHASE_PROBE_MEASURE)
		feed(400000, 2, ADAPTIVE_DEBT_NONE); /* too slow a reader for a baseline */
	ck_assert_uint_eq(c.baseline_ns, 0);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(c.released, 0);
	ck_assert_uint_eq(c.cap, ADAPTIVE_UNLIMITED);
	c.next_probe_ns = now;
	to_probe_measure();
	while (c.phase == PHASE_PROBE_MEASURE)
		feed(400000, 300, ADAPTIVE_DEBT_NONE);
	assert_baseline_near(400000);
	ck_assert_uint_eq(c.level, 1);
	ck_assert_uint_eq(c.slow_start, 1);
}
END_TEST

/*
 * An urgent thread's I/O (a flush) during a probe, in its drain or its measure: the reads
 * were not alone, no baseline, another probe after probe_retry_ns.
 */
START_TEST(test_probe_void_with_urgent_io)
{
	start("read.p99<=2x");
	to_probe_measure();
	feed_urgent = 1;
	feed(4 * MS, 500, ADAPTIVE_DEBT_NONE); /* the flush's writes slowed the reads down */
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.baseline_ns, 0);
	ck_assert_uint_eq(c.void_probes, 1);
	ck_assert_uint_eq(c.next_probe_ns, now + params.probe_retry_ns);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	/* In the drain: void as well, before it measures. */
	feed_urgent = 0;
	for (int i = 0; i < 1000 && c.phase == PHASE_RUN; i++)
		feed(600000, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_PROBE_DRAIN);
	feed_urgent = 2;
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.void_probes, 2);
	/* Urgent I/O outside a probe changes nothing; a probe without any gives the baseline. */
	for (int i = 0; i < 1000 && c.phase == PHASE_RUN; i++)
		feed(600000, 300, ADAPTIVE_DEBT_NONE);
	feed_urgent = 0;
	feed(3 * MS, 50, ADAPTIVE_DEBT_NONE); /* the drain */
	feed(400000, 500, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	assert_baseline_near(400000);
	ck_assert_uint_eq(c.void_probes, 2);
}
END_TEST

/*
 * The floor's curve, trigger 20: none up to 10 files (half), then rising, full from 19 (one
 * short of the slowdown); never down as L0 grows. No trigger: no floor.
 */
START_TEST(test_l0_floor_curve)
{
	ck_assert_uint_eq(adaptive_l0_floor(10, 20), 0);
	ck_assert_uint_eq(adaptive_l0_floor(11, 20), 2);
	ck_assert_uint_eq(adaptive_l0_floor(16, 20), 8);
	ck_assert_uint_eq(adaptive_l0_floor(19, 20), ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(adaptive_l0_floor(500, 20), ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(adaptive_l0_floor(500, 0), 0);
	for (uint32_t trigger = 1; trigger < 64; trigger++)
		for (uint32_t l0 = 0, prev = 0; l0 < 2 * trigger; l0++) {
			uint32_t f = adaptive_l0_floor(l0, trigger);

			ck_assert_uint_ge(f, prev);
			ck_assert_uint_le(f, ADAPTIVE_LEVEL_FULL);
			ck_assert_uint_eq(f == ADAPTIVE_LEVEL_FULL, l0 + 1 >= trigger && l0 > trigger / 2);
			prev = f;
		}
}
END_TEST

/*
 * Every window missed, the target would hold the tier (level 0). As L0 rises the floor lifts
 * it, and the misses cannot cut it under the floor (no swing between the two); once L0 is
 * low again the first miss returns to the target's level, not one level a window down.
 */
START_TEST(test_l0_floor_holds_level)
{
	start_and_miss(ADAPTIVE_LEVEL_FULL);
	feed_trigger = 20;
	for (feed_l0 = 8; feed_l0 <= 18; feed_l0++) {
		feed(BAD, 300, ADAPTIVE_DEBT_NONE);
		ck_assert_uint_eq(c.level, adaptive_l0_floor(feed_l0, 20));
	}
	feed_l0 = 16; /* a compaction: L0 down to 16, floor 8 */
	for (int i = 0; i < 50; i++) {
		feed(BAD, 300, ADAPTIVE_DEBT_NONE);
		ck_assert_uint_eq(c.level, 8);
	}
	ck_assert_uint_gt(c.l0_lifts, 50);
	feed_l0 = 3;
	feed(BAD, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, 0);
	ck_assert_uint_eq(c.l0_floor, 0);
}
END_TEST

/* Released for want of reads, the allowance the reader returns to keeps the floor too. */
START_TEST(test_l0_floor_under_release)
{
	uint32_t cap, chunk;

	start_and_miss(ADAPTIVE_LEVEL_FULL);
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.released, 1);
	ck_assert_uint_eq(c.cap, 0);
	feed_trigger = 20;
	feed_l0 = 16;
	feed(0, 0, ADAPTIVE_DEBT_NONE);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	adaptive_level_limits(8, &cap, &chunk);
	ck_assert_uint_eq(c.cap, cap);
	ck_assert_uint_eq(c.chunk, chunk);
	feed(BAD, 300, ADAPTIVE_DEBT_NONE); /* back, and missing: at the floor, not under */
	ck_assert_uint_eq(c.released, 0);
	ck_assert_uint_eq(c.level, 8);
}
END_TEST

/* With L0 one file short of the trigger, no probe holds the compaction. */
START_TEST(test_l0_at_trigger_defers_probe)
{
	start("read.p99<=2x");
	to_probe_measure();
	feed_trigger = 20;
	feed_l0 = 19;
	feed(400000, 500, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.baseline_ns, 0);
	ck_assert_uint_eq(c.level, ADAPTIVE_LEVEL_FULL);
	for (int i = 0; i < 200; i++) /* 20 s */
		feed(600000, 300, ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(c.phase, PHASE_RUN);
	ck_assert_uint_eq(c.probes, 1);
}
END_TEST

START_TEST(test_hist_helpers)
{
	static uint32_t hist[HIST_NR_BUCKETS];
	uint32_t b = hist_bucket(1000000);

	hist[hist_bucket(100000)] = 98;
	hist[b] = 2;
	ck_assert_uint_eq(adaptive_hist_count(hist), 100);
	ck_assert_uint_eq(adaptive_hist_over(hist, 2000000), 0);
	ck_assert_uint_eq(adaptive_hist_over(hist, 500000), 2);
	ck_assert_uint_eq(adaptive_hist_over(hist, hist_bucket_low(b)), 1); /* in proportion */
	ck_assert_uint_le(adaptive_hist_percentile(hist, 980), 107000);
	ck_assert_uint_ge(adaptive_hist_percentile(hist, 990), hist_bucket_low(b));
	ck_assert_uint_lt(adaptive_hist_percentile(hist, 990), hist_bucket_high(b));
	/* The time the reads took, each at its bucket's floor: at most the true 29.8 ms. */
	ck_assert_uint_le(adaptive_hist_time_floor(hist), 98 * 100000 + 2 * 1000000);
	ck_assert_uint_ge(adaptive_hist_time_floor(hist), (98 * 100000 + 2 * 1000000) * 15 / 16);
	hist[HIST_OVERFLOW] = UINT32_MAX; /* billions of reads past the last bucket: saturates */
	ck_assert_uint_eq(adaptive_hist_time_floor(hist), UINT64_MAX);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("adaptive");
	TCase *sim = tcase_create("simulated-device");
	TCase *rules = tcase_create("rules");

	tcase_add_checked_fixture(sim, setup, NULL);
	tcase_set_timeout(sim, 60);
	tcase_add_test(sim, test_engages_under_contention);
	tcase_add_test(sim, test_meets_target_in_steady_state);
	tcase_add_test(sim, test_releases_when_reader_stops);
	tcase_add_test(sim, test_open_loop_queue_held);
	tcase_add_test(sim, test_floor_is_kept);
	tcase_add_test(sim, test_held_without_floor_never_with);
	tcase_add_test(sim, test_outside_noise_not_blamed);
	tcase_add_test(sim, test_l0_floor_keeps_writer_running);
	tcase_add_test(sim, test_l0_floor_idle_while_l0_low);
	suite_add_tcase(s, sim);

	tcase_add_checked_fixture(rules, setup, NULL);
	tcase_add_test(rules, test_ladder);
	tcase_add_test(rules, test_cut_and_hysteresis);
	tcase_add_test(rules, test_cut_in_proportion);
	tcase_add_test(rules, test_deep_misses_search);
	tcase_add_test(rules, test_deep_miss_bisects_to_good_level);
	tcase_add_test(rules, test_lone_shallow_miss_at_bottom);
	tcase_add_test(rules, test_look_cuts_a_certain_miss);
	tcase_add_test(rules, test_first_probe_at_first_reads);
	tcase_add_test(rules, test_held_miss_is_outside);
	tcase_add_test(rules, test_queue_rules);
	tcase_add_test(rules, test_probe_measures_queue);
	tcase_add_test(rules, test_stopped_reader_not_waited_for);
	tcase_add_test(rules, test_min_samples_and_window);
	tcase_add_test(rules, test_idle_release_and_resume);
	tcase_add_test(rules, test_stray_reads_release);
	tcase_add_test(rules, test_starved_reader_is_judged);
	tcase_add_test(rules, test_starved_reader_gets_a_baseline);
	tcase_add_test(rules, test_debt_relaxes);
	tcase_add_test(rules, test_debt_stop_goes_full);
	tcase_add_test(rules, test_debt_then_resume);
	tcase_add_test(rules, test_debt_ends_probe);
	tcase_add_test(rules, test_baseline_survives_noise);
	tcase_add_test(rules, test_probe_needs_reads);
	tcase_add_test(rules, test_released_at_held_until_baseline);
	tcase_add_test(rules, test_probe_void_with_urgent_io);
	tcase_add_test(rules, test_l0_floor_curve);
	tcase_add_test(rules, test_l0_floor_holds_level);
	tcase_add_test(rules, test_l0_floor_under_release);
	tcase_add_test(rules, test_l0_at_trigger_defers_probe);
	tcase_add_test(rules, test_hist_helpers);
	suite_add_tcase(s, rules);
	return check_run_suite(s);
}
