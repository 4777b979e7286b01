// SPDX-License-Identifier: MIT
/*
 * check-adaptive-region-fast.c: unit tests of the adaptive tier's fast path per device and of
 * gap filling (docs/adaptive.md, "The fast path"). Each device has its slot in the region (the
 * first ADAPTIVE_FG_DEVICES, then one catch-all), found the same from any process; a read
 * of one device leaves another idle, and the gate lets a low piece to the idle one go at
 * full while one to the busy one waits. The low tier's service time is learnt per piece (a
 * fixed cost plus a cost per byte, or a bound above it when the sizes do not spread), and a
 * piece is admitted beyond the allowance only when twice its expected time fits what is left
 * of the reader's usual gap less max(1/4 of it, twice its spread), one such piece at a time
 * a device, never in a probe; in a probe the fast path waits for a reader gone.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptive/adaptive_region.h"
#include "check_main.h"
#include "region_fixture.h"

#define US 1000ull
#define MS 1000000ull
#define KIB 1024ull

static struct adaptive_region *r;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void setup(void)
{
	r = region_fixture("read.p99<=1ms", monotonic_ns());
}

static void teardown(void)
{
	adaptive_region_destroy(r);
}

/*
 * A reader of device slot @dev with a steady think time: @n reads of @read_ns every
 * @period_ns, the last ending at @last_end. Its usual gap converges to period - read.
 */
static void reads_until(uint32_t dev, uint64_t last_end, uint64_t period_ns, uint64_t read_ns,
			int n)
{
	for (int i = n - 1; i >= 0; i--) {
		uint64_t end = last_end - (uint64_t)i * period_ns;

		adaptive_region_fg_begin(r, dev, end - read_ns);
		adaptive_region_fg_end(r, dev, end);
	}
}

/* The first eight devices get slots of their own, for good and for every process. */
START_TEST(test_device_slots)
{
	uint32_t slots[ADAPTIVE_FG_DEVICES];
	pid_t child;
	int status;

	for (uint32_t i = 0; i < ADAPTIVE_FG_DEVICES; i++) {
		slots[i] = adaptive_region_dev_slot(r, adaptive_dev_key(7, i));
		ck_assert_uint_lt(slots[i], ADAPTIVE_FG_DEVICES);
		for (uint32_t j = 0; j < i; j++)
			ck_assert_uint_ne(slots[i], slots[j]);
	}
	ck_assert_uint_eq(adaptive_region_dev_slot(r, adaptive_dev_key(7, 3)), slots[3]);
	/* Full: every other device shares the catch-all. */
	ck_assert_uint_eq(adaptive_region_dev_slot(r, adaptive_dev_key(8, 0)), ADAPTIVE_FG_CATCHALL);
	ck_assert_uint_eq(adaptive_region_dev_slot(r, adaptive_dev_key(8, 16)), ADAPTIVE_FG_CATCHALL);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		_exit(adaptive_region_dev_slot(r, adaptive_dev_key(7, 5)) == slots[5] ? 0 : 1);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* A read of A keeps A active and leaves B idle; ADAPTIVE_DEV_ANY is active if any is. */
START_TEST(test_idle_per_device)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint32_t b = adaptive_region_dev_slot(r, adaptive_dev_key(7, 1));
	uint64_t t = monotonic_ns();

	/* No read anywhere yet, not released: the allowance stands for everyone. */
	ck_assert(!adaptive_region_fg_idle_on(r, a, t));
	ck_assert(!adaptive_region_fg_idle_on(r, b, t));
	ck_assert(!adaptive_region_fg_idle_on(r, ADAPTIVE_DEV_ANY, t));
	ck_assert_uint_eq(adaptive_region_fg_opens_in_on(r, b, t), UINT64_MAX);
	adaptive_region_fg_begin(r, a, t);
	ck_assert(!adaptive_region_fg_idle_on(r, a, t + 10 * MS));
	ck_assert(adaptive_region_fg_idle_on(r, b, t + 10 * MS)); /* never read, A is */
	ck_assert(!adaptive_region_fg_idle_on(r, ADAPTIVE_DEV_ANY, t + 10 * MS));
	ck_assert_uint_eq(adaptive_region_fg_opens_in_on(r, a, t + 10 * MS), ADAPTIVE_BUSY_POLL_NS);
	ck_assert_uint_eq(adaptive_region_fg_opens_in_on(r, b, t + 10 * MS), 0);
	adaptive_region_fg_end(r, a, t + 100 * US);
	/* A quiet for over 1 ms (no gap yet): idle; then B busy, A still idle. */
	ck_assert(adaptive_region_fg_idle_on(r, a, t + 2 * MS));
	ck_assert(adaptive_region_fg_idle_on(r, ADAPTIVE_DEV_ANY, t + 2 * MS));
	adaptive_region_fg_begin(r, b, t + 2 * MS);
	ck_assert(adaptive_region_fg_idle_on(r, a, t + 3 * MS));
	ck_assert(!adaptive_region_fg_idle_on(r, b, t + 3 * MS));
	ck_assert(!adaptive_region_fg_idle_on(r, ADAPTIVE_DEV_ANY, t + 3 * MS));
	ck_assert_uint_eq(adaptive_region_fg_opens_in_on(r, ADAPTIVE_DEV_ANY, t + 3 * MS),
			  ADAPTIVE_BUSY_POLL_NS);
	adaptive_region_fg_end(r, b, t + 2100 * US);
	/* A garbled slot number is the catch-all's, never out of the table. */
	adaptive_region_fg_begin(r, 12345, t + 4 * MS);
	ck_assert_uint_eq(atomic_load(&r->fg[ADAPTIVE_FG_CATCHALL].inflight), 1);
	ck_assert(!adaptive_region_fg_idle_on(r, ADAPTIVE_FG_CATCHALL, t + 5 * MS));
	adaptive_region_fg_end(r, 12345, 0);
}
END_TEST

/* The gate: with the tier held, a piece to the idle device goes at once, one to the busy waits. */
START_TEST(test_gate_per_device)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint32_t b = adaptive_region_dev_slot(r, adaptive_dev_key(7, 1));
	uint64_t full, waits;

	low_gate_set_cap(&r->gate, 0, 0);
	atomic_store(&r->deadline_ns, UINT64_MAX); /* no step: the cap stays as set */
	adaptive_region_fg_begin(r, a, monotonic_ns()); /* a read of A, in flight throughout */
	full = atomic_load(&r->fast_full);
	waits = atomic_load(&r->gate.waits);
	ck_assert_uint_eq(adaptive_region_gate_enter_on(r, getpid(), self_tid(), 20 * MS, b, 0), 0);
	ck_assert_uint_eq(atomic_load(&r->fast_full), full + 1);
	ck_assert_uint_eq(atomic_load(&r->gate.waits), waits);
	/* Its own device's read holds it to the bound; so does a piece of no known device. */
	adaptive_region_gate_enter_on(r, getpid(), self_tid(), 20 * MS, a, 0);
	ck_assert_uint_eq(atomic_load(&r->gate.waits), waits + 1);
	ck_assert_uint_eq(atomic_load(&r->gate.cut_short), 1);
	adaptive_region_gate_enter(r, getpid(), self_tid(), 20 * MS);
	ck_assert_uint_eq(atomic_load(&r->gate.cut_short), 2);
	ck_assert_uint_eq(atomic_load(&r->fast_full), full + 1);
	adaptive_region_fg_end(r, a, 0);
}
END_TEST

/*
 * A relative target starts released at held (adaptive_init): before any read the low tier
 * goes at full (nothing read is idle), and from the reader's first read it is held, before
 * any step or look of the controller.
 */
START_TEST(test_held_from_first_read)
{
	struct adaptive_region *rel = region_fixture("read.p99<=2x", monotonic_ns());
	uint32_t a = adaptive_region_dev_slot(rel, adaptive_dev_key(7, 0));
	uint64_t full = atomic_load(&rel->fast_full), cut = atomic_load(&rel->gate.cut_short);

	ck_assert_uint_eq(atomic_load(&rel->gate.cap), 0);
	ck_assert(adaptive_region_fg_idle_on(rel, a, monotonic_ns()));
	ck_assert(adaptive_region_fg_idle_on(rel, ADAPTIVE_DEV_ANY, monotonic_ns()));
	ck_assert_uint_eq(adaptive_region_fg_opens_in_on(rel, ADAPTIVE_DEV_ANY, monotonic_ns()), 0);
	atomic_store(&rel->deadline_ns, UINT64_MAX); /* no step: the cap stays as it starts */
	ck_assert_uint_eq(adaptive_region_gate_enter_on(rel, getpid(), self_tid(), 10 * MS, a, 0),
			  0);
	ck_assert_uint_eq(atomic_load(&rel->fast_full), full + 1);
	adaptive_region_fg_begin(rel, a, monotonic_ns());
	adaptive_region_gate_enter_on(rel, getpid(), self_tid(), 10 * MS, a, 0);
	ck_assert_uint_eq(atomic_load(&rel->gate.cut_short), cut + 1);
	ck_assert_uint_eq(atomic_load(&rel->fast_full), full + 1);
	adaptive_region_fg_end(rel, a, 0);
	adaptive_region_destroy(rel);
}
END_TEST

/*
 * The quiet that makes a reader idle grows with the spread of its gaps: one of regular 5 ms
 * gaps is idle after 2 x 5 ms, one of random arrivals (exponential gaps, 650 us on average:
 * an open-loop reader) not before about 8 x its mean, where one gap in 2700 lasts that long.
 */
START_TEST(test_quiet_grows_with_spread)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint32_t b = adaptive_region_dev_slot(r, adaptive_dev_key(7, 1));
	uint64_t t = monotonic_ns(), end = t - 2 * ADAPTIVE_GAP_MAX_NS, seed = 42, false_idle = 0;

	reads_until(a, t, 5100 * US, 100 * US, 60);
	ck_assert(!adaptive_region_fg_idle_on(r, a, t + 9 * MS));
	ck_assert(adaptive_region_fg_idle_on(r, a, t + 11 * MS));
	for (int i = 0; i < 2000; i++) {
		double u;
		uint64_t gap;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		u = (double)(seed >> 11) / 9007199254740992.0;
		gap = (uint64_t)(-log(1.0 - u) * 650e3);
		/* Idle at the arrival: a piece would have gone at full in this gap. */
		false_idle += i > 200 && adaptive_region_fg_idle_on(r, b, end + gap);
		adaptive_region_fg_begin(r, b, end + gap);
		end += gap + 300 * US;
		adaptive_region_fg_end(r, b, end);
	}
	ck_assert_uint_le(false_idle, 5); /* 2 x the mean alone: 1 in 7.4, about 240 of 1800 */
	ck_assert(!adaptive_region_fg_idle_on(r, b, end + 4 * MS));
	ck_assert(adaptive_region_fg_idle_on(r, b, end + 2 * ADAPTIVE_GAP_MAX_NS + 1 * MS));
}
END_TEST

/*
 * A probe measures the reads alone: while one is under way the fast path waits for a reader
 * gone (ADAPTIVE_GAP_MAX_NS quiet), not one between two reads; the gate holds a piece that
 * the same quiet lets go at full outside a probe.
 */
START_TEST(test_probe_waits_for_a_reader_gone)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint64_t t = monotonic_ns(), full, cut;

	adaptive_region_fg_begin(r, a, t - 100 * US);
	adaptive_region_fg_end(r, a, t);
	ck_assert(adaptive_region_fg_idle_on(r, a, t + 2 * MS));
	r->ctl.phase = PHASE_PROBE_DRAIN;
	ck_assert(!adaptive_region_fg_idle_on(r, a, t + 2 * MS));
	ck_assert(!adaptive_region_fg_idle_on(r, ADAPTIVE_DEV_ANY, t + 2 * MS));
	ck_assert(!adaptive_region_fg_idle_on(r, a, t + ADAPTIVE_GAP_MAX_NS));
	ck_assert(adaptive_region_fg_idle_on(r, a, t + ADAPTIVE_GAP_MAX_NS + 1 * MS));
	ck_assert_uint_eq(adaptive_region_fg_opens_in_on(r, a, t + 2 * MS),
			  ADAPTIVE_GAP_MAX_NS + 1 - 2 * MS);
	r->ctl.phase = PHASE_PROBE_MEASURE;
	ck_assert(!adaptive_region_fg_idle_on(r, a, t + 2 * MS));
	/* The gate, on the real clock: a reader 2 ms quiet, the piece waits out its bound. */
	low_gate_set_cap(&r->gate, 0, 0);
	atomic_store(&r->deadline_ns, UINT64_MAX); /* no step: the cap and phase stay as set */
	full = atomic_load(&r->fast_full);
	cut = atomic_load(&r->gate.cut_short);
	t = monotonic_ns();
	adaptive_region_fg_begin(r, a, t - 2100 * US);
	adaptive_region_fg_end(r, a, t - 2 * MS);
	adaptive_region_gate_enter_on(r, getpid(), self_tid(), 10 * MS, a, 0);
	ck_assert_uint_eq(atomic_load(&r->fast_full), full);
	ck_assert_uint_eq(atomic_load(&r->gate.cut_short), cut + 1);
	r->ctl.phase = PHASE_RUN;
	t = monotonic_ns();
	adaptive_region_fg_begin(r, a, t - 2100 * US);
	adaptive_region_fg_end(r, a, t - 2 * MS);
	ck_assert_uint_eq(adaptive_region_gate_enter_on(r, getpid(), self_tid(), 10 * MS, a, 0), 0);
	ck_assert_uint_eq(atomic_load(&r->fast_full), full + 1);
}
END_TEST

/*
 * In a probe, a held low thread still goes when its wait is up (paced, never parked): a read
 * beside its piece is not alone and stays out of the probe's baseline
 * (adaptive_region_fg_alone), a read that starts after the piece is expected done counts,
 * and outside a probe nothing is left out. Before, every read counted: on the issue12 disk
 * a paced 16 KiB piece every 20 ms put the baseline at 368-500 us for a reader at 355-365.
 */
START_TEST(test_probe_leaves_out_paced_pieces)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint32_t b = adaptive_region_dev_slot(r, adaptive_dev_key(8, 0));
	uint64_t before, after, svc;

	low_gate_set_cap(&r->gate, 0, 0);
	atomic_store(&r->deadline_ns, UINT64_MAX); /* no step: the cap and phase stay as set */
	adaptive_region_fg_begin(r, a, monotonic_ns()); /* a reader on a: not idle */
	r->ctl.phase = PHASE_PROBE_MEASURE;
	before = monotonic_ns();
	adaptive_region_gate_enter_on(r, getpid(), self_tid(), 5 * MS, a, 16 * KIB);
	after = monotonic_ns();
	ck_assert(!adaptive_region_fg_alone(r, a, before)); /* begun before it went */
	ck_assert(!adaptive_region_fg_alone(r, a, after));  /* begun while it is on the device */
	ck_assert(adaptive_region_fg_alone(r, a, after + 2 * MS + 1)); /* none learnt: 2 ms */
	ck_assert(adaptive_region_fg_alone(r, b, before));  /* another device's reads */
	/* A piece of known service time: twice it. */
	adaptive_svc_note(&r->fg[b].svc, 16 * KIB, 200 * US);
	svc = adaptive_svc_predict(&r->fg[b].svc, 16 * KIB);
	ck_assert_uint_ge(svc, 200 * US);
	before = monotonic_ns();
	adaptive_region_gate_enter_on(r, getpid(), self_tid(), 5 * MS, b, 16 * KIB);
	after = monotonic_ns();
	ck_assert(!adaptive_region_fg_alone(r, b, after));
	ck_assert(adaptive_region_fg_alone(r, b, after + 2 * svc + 1)); /* twice its time */
	/* A garbled mark far ahead blinds nothing. */
	atomic_store(&r->fg[b].probe_low_until_ns, UINT64_MAX - 1);
	ck_assert(adaptive_region_fg_alone(r, b, monotonic_ns()));
	atomic_store(&r->fg[b].probe_low_until_ns, 0);
	/* Outside a probe the piece leaves nothing out. */
	r->ctl.phase = PHASE_RUN;
	adaptive_region_gate_enter_on(r, getpid(), self_tid(), 5 * MS, a, 16 * KIB);
	ck_assert(adaptive_region_fg_alone(r, a, before + 3 * MS));
	adaptive_region_fg_end(r, a, monotonic_ns());
}
END_TEST

/* Within @pct % of @want. */
static void ck_near(uint64_t got, uint64_t want, uint64_t pct)
{
	uint64_t d = got > want ? got - want : want - got;

	ck_assert_msg(d * 100 <= want * pct, "%llu ns, not within %llu%% of %llu ns",
		      (unsigned long long)got, (unsigned long long)pct, (unsigned long long)want);
}

/* Learnt service times: one size, then two, then garbage. */
START_TEST(test_service_time)
{
	struct adaptive_svc s = { 0 };

	ck_assert_uint_eq(adaptive_svc_predict(&s, 64 * KIB), 0); /* nothing learnt */
	for (int i = 0; i < 20; i++)
		adaptive_svc_note(&s, 64 * KIB, 200 * US);
	ck_near(adaptive_svc_predict(&s, 64 * KIB), 200 * US, 1);
	/* One size says nothing of the split between fixed cost and bytes: the bound above. */
	ck_near(adaptive_svc_predict(&s, 16 * KIB), 200 * US, 1);
	ck_near(adaptive_svc_predict(&s, 256 * KIB), 800 * US, 1);
	ck_assert_uint_eq(adaptive_svc_predict(&s, 0), 0);
	/* Two sizes, 50 us + 2 ns a byte: the fit finds both. */
	s = (struct adaptive_svc){ 0 };
	for (int i = 0; i < 64; i++) {
		uint64_t bytes = i % 2 ? 16 * KIB : 1024 * KIB;

		adaptive_svc_note(&s, bytes, 50 * US + 2 * bytes);
	}
	ck_near(adaptive_svc_predict(&s, 16 * KIB), 50 * US + 32 * KIB, 5);
	ck_near(adaptive_svc_predict(&s, 256 * KIB), 50 * US + 512 * KIB, 5);
	/* Garbage (another process's, or root's): an answer in range, no trap. */
	srandom(7);
	for (int i = 0; i < 1000; i++) {
		atomic_store(&s.b, (uint64_t)random() << 33 ^ (uint64_t)random());
		atomic_store(&s.t, (uint64_t)random() << (i % 40));
		atomic_store(&s.bb, (uint64_t)random() << (i % 33));
		atomic_store(&s.bt, (uint64_t)random() << 31 ^ (uint64_t)random());
		ck_assert_uint_le(adaptive_svc_predict(&s, 64 * KIB), ADAPTIVE_SVC_MAX_NS);
	}
}
END_TEST

/*
 * The arithmetic of the margin: done before the gap's end less max(1/4 of the gap, twice
 * its spread), at twice the expected time.
 */
START_TEST(test_gap_fits)
{
	/* A steady 5 ms gap: room until 3.75 ms; a 500 us piece costs 1 ms of it. */
	ck_assert(adaptive_gap_fits(0, 5 * MS, 0, 500 * US));
	ck_assert(adaptive_gap_fits(2750 * US, 5 * MS, 100 * US, 500 * US));
	ck_assert(!adaptive_gap_fits(2751 * US, 5 * MS, 100 * US, 500 * US));
	ck_assert(!adaptive_gap_fits(3750 * US, 5 * MS, 0, 1));
	ck_assert(!adaptive_gap_fits(4 * MS, 5 * MS, 0, 1));
	ck_assert(!adaptive_gap_fits(0, 5 * MS, 0, 1876 * US)); /* too slow for the whole room */
	ck_assert(adaptive_gap_fits(0, 5 * MS, 0, 1875 * US));
	/* A spread of 1 ms: the read may come 2 ms early, room until 3 ms. */
	ck_assert(adaptive_gap_fits(1999 * US, 5 * MS, 1 * MS, 500 * US));
	ck_assert(!adaptive_gap_fits(2001 * US, 5 * MS, 1 * MS, 500 * US));
	/* Random arrivals (a spread of 3/4 of the mean): nothing fits, however quick. */
	ck_assert(!adaptive_gap_fits(0, 5 * MS, 3750 * US, 1));
	ck_assert(!adaptive_gap_fits(0, 5 * MS, 0, 0));          /* nothing learnt */
	ck_assert(!adaptive_gap_fits(0, 0, 0, 1));               /* back-to-back: no gap */
	ck_assert(!adaptive_gap_fits(0, UINT64_MAX, 0, 1));      /* garbage: no overflow */
	ck_assert(!adaptive_gap_fits(0, 5 * MS, UINT64_MAX, 1));
	ck_assert(!adaptive_gap_fits(0, 5 * MS, 0, UINT64_MAX));
}
END_TEST

/* Admission in a reader's gap, on the region: when, how often, and when not. */
START_TEST(test_gap_admit)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint32_t b = adaptive_region_dev_slot(r, adaptive_dev_key(7, 1));
	uint64_t last = monotonic_ns();

	/* A reader of 100 us reads every 5.1 ms: its usual gap about 5 ms. */
	reads_until(a, last, 5100 * US, 100 * US, 60);
	ck_near(atomic_load(&r->fg[a].gap_ns), 5 * MS, 2);
	ck_assert_uint_lt(atomic_load(&r->fg[a].gap_dev_ns), 100 * US);
	/* Nothing learnt of the low tier on A: no piece is promised a time. */
	ck_assert(!adaptive_region_gap_admit(r, a, 64 * KIB, last + 500 * US));
	for (int i = 0; i < 20; i++)
		adaptive_region_low_done(r, a, 64 * KIB, 300 * US);
	ck_assert(adaptive_region_gap_admit(r, a, 64 * KIB, last + 500 * US));
	/* One at a time: the one before is expected done at +800 us. */
	ck_assert(!adaptive_region_gap_admit(r, a, 64 * KIB, last + 700 * US));
	ck_assert(adaptive_region_gap_admit(r, a, 64 * KIB, last + 900 * US));
	/* Late in the gap: 3.75 ms - 3.2 ms leaves less than twice 300 us. */
	ck_assert(!adaptive_region_gap_admit(r, a, 64 * KIB, last + 3200 * US));
	/* Too large (by the bound, 4 MiB takes 19 ms), of no size, no device, B never read. */
	ck_assert(!adaptive_region_gap_admit(r, a, 4096 * KIB, last + 1300 * US));
	ck_assert(!adaptive_region_gap_admit(r, a, 0, last + 1300 * US));
	ck_assert(!adaptive_region_gap_admit(r, ADAPTIVE_DEV_ANY, 64 * KIB, last + 1300 * US));
	ck_assert(!adaptive_region_gap_admit(r, b, 64 * KIB, last + 1300 * US));
	/* A probe measures the reads alone. */
	r->ctl.phase = PHASE_PROBE_MEASURE;
	ck_assert(!adaptive_region_gap_admit(r, a, 64 * KIB, last + 1300 * US));
	r->ctl.phase = PHASE_RUN;
	/* A read in flight: no gap. */
	adaptive_region_fg_begin(r, a, last + 1300 * US);
	ck_assert(!adaptive_region_gap_admit(r, a, 64 * KIB, last + 1400 * US));
	adaptive_region_fg_end(r, a, 0);
	ck_assert_uint_eq(atomic_load(&r->gap_fills), 2);
	/* A reader of irregular gaps (1 and 9 ms in turn, 5 ms on average): none is filled. */
	last += 2 * ADAPTIVE_GAP_MAX_NS;
	for (int i = 0; i < 60; i++) {
		uint64_t end = last - (uint64_t)(59 - i) / 2 * 10200 * US - (i % 2 ? 0 : 2 * MS);

		adaptive_region_fg_begin(r, a, end - 100 * US);
		adaptive_region_fg_end(r, a, end);
	}
	ck_assert_uint_gt(atomic_load(&r->fg[a].gap_dev_ns), 2 * MS);
	ck_assert(!adaptive_region_gap_admit(r, a, 64 * KIB, last + 100 * US));
	ck_assert_uint_eq(atomic_load(&r->gap_fills), 2);
}
END_TEST

/*
 * The gate's side, on the real clock: held, a piece that fits the reader's gap goes at once
 * (without a slot, counted in gap_fills), and one whose time does not fit waits. Tried a
 * few times: a preemption of 3 ms between the reader's stamp and the call would leave no
 * room in the gap.
 */
START_TEST(test_gap_fill_at_gate)
{
	uint32_t a = adaptive_region_dev_slot(r, adaptive_dev_key(7, 0));
	uint64_t fills = 0;

	low_gate_set_cap(&r->gate, 0, 0);
	atomic_store(&r->deadline_ns, UINT64_MAX); /* no step: the cap stays as set */
	for (int i = 0; i < 20; i++)
		adaptive_region_low_done(r, a, 64 * KIB, 300 * US);
	for (int attempt = 0; attempt < 5 && !fills; attempt++) {
		uint64_t before = atomic_load(&r->gap_fills), cut = atomic_load(&r->gate.cut_short);

		reads_until(a, monotonic_ns(), 5100 * US, 100 * US, 60);
		ck_assert_uint_eq(adaptive_region_gate_enter_on(r, getpid(), self_tid(), 50 * MS, a,
								64 * KIB), 0);
		if (atomic_load(&r->gate.cut_short) == cut)
			fills = atomic_load(&r->gap_fills) - before;
	}
	ck_assert_uint_eq(fills, 1);
	/* 4 MiB does not fit a 5 ms gap: it waits (until the reader is idle, here). */
	reads_until(a, monotonic_ns(), 5100 * US, 100 * US, 60);
	adaptive_region_gate_enter_on(r, getpid(), self_tid(), 20 * MS, a, 4096 * KIB);
	ck_assert_uint_eq(atomic_load(&r->gap_fills), fills);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("adaptive-region-fast");
	TCase *tc = tcase_create("fast");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_device_slots);
	tcase_add_test(tc, test_idle_per_device);
	tcase_add_test(tc, test_gate_per_device);
	tcase_add_test(tc, test_quiet_grows_with_spread);
	tcase_add_test(tc, test_held_from_first_read);
	tcase_add_test(tc, test_probe_waits_for_a_reader_gone);
	tcase_add_test(tc, test_service_time);
	tcase_add_test(tc, test_gap_fits);
	tcase_add_test(tc, test_gap_admit);
	tcase_add_test(tc, test_gap_fill_at_gate);
	tcase_add_test(tc, test_probe_leaves_out_paced_pieces);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
