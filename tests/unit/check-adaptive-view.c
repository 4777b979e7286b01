// SPDX-License-Identifier: MIT
/*
 * check-adaptive-view.c: unit tests of the seqlock reader of the adaptive region
 * (shim/adaptive/adaptive_view.c): it never keeps a copy taken while the sequence was odd or while
 * it moved, gives up rather than spin forever, and the stepper leaves the sequence even
 * and two further on after each step, with the controller's fields readable in between.
 * Issue 23's facts reach the view: the database's L0, its trigger and the floor they set,
 * the probes void and short, the baseline's reads, the slots taken back, the last step's
 * time and its age; and every number of the view is named for the state file.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adaptive/adaptive_region.h"
#include "adaptive/adaptive_view.h"
#include "check_main.h"

#define TORN 99u /* the level a copy shows when it was taken in the middle of a step */

/*
 * A region whose sequence follows @script, one entry per read of the sequence (the last
 * one repeats). While the sequence read last is odd, the fields are being written: the
 * level reads TORN; while it is even, the level is half the sequence.
 */
struct scripted {
	struct adaptive_region *r;
	const uint32_t *script;
	unsigned n, next;
	unsigned seq_reads;
};

static int scripted_copy(void *ctx, size_t off, void *dst, size_t len)
{
	struct scripted *s = ctx;

	if (off == offsetof(struct adaptive_region, seq)) {
		uint32_t seq = s->script[s->next < s->n ? s->next : s->n - 1];

		s->next++;
		s->seq_reads++;
		atomic_store(&s->r->seq, seq);
		s->r->ctl.level = seq & 1 ? TORN : seq / 2;
	}
	return adaptive_view_copy_local(s->r, off, dst, len);
}

static struct adaptive_region *fake_region(void)
{
	struct adaptive_region *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->creator_pid = 4242;
	r->ctl.windows = 7;
	r->ctl.target.permille = 990; /* in range, or no snapshot is kept */
	return r;
}

static int read_scripted(const uint32_t *script, unsigned n, struct adaptive_view *v,
			 unsigned *reads)
{
	struct adaptive_region *r = fake_region();
	struct scripted s = { .r = r, .script = script, .n = n };
	int ret;

	memset(v, 0, sizeof(*v));
	v->level = 12345; /* untouched unless a snapshot is kept */
	ret = adaptive_view_read(scripted_copy, &s, v);
	*reads = s.seq_reads;
	free(r);
	return ret;
}

START_TEST(test_odd_sequence_never_kept)
{
	/* Odd twice alike (one step still writing), odd, then 4: copied, but 5 after (a step
	 * began): retry; then 6 and 6. */
	static const uint32_t script[] = { 1, 1, 3, 4, 5, 6, 6 };
	struct adaptive_view v;
	unsigned reads;

	ck_assert_int_eq(read_scripted(script, 7, &v, &reads), 0);
	ck_assert_uint_ne(v.level, TORN);
	ck_assert_uint_eq(v.level, 3); /* the copy between the two reads of 6 */
	ck_assert_uint_eq(reads, 7);
	ck_assert_uint_eq(v.creator_pid, 4242);
	ck_assert_uint_eq(v.windows, 7);
}
END_TEST

START_TEST(test_moved_sequence_not_kept)
{
	/* Even both times but different: a whole step ran during the copy. */
	static const uint32_t script[] = { 2, 4, 8, 8 };
	struct adaptive_view v;
	unsigned reads;

	ck_assert_int_eq(read_scripted(script, 4, &v, &reads), 0);
	ck_assert_uint_eq(v.level, 4);
	ck_assert_uint_eq(reads, 4);
}
END_TEST

START_TEST(test_always_odd_gives_up)
{
	static const uint32_t script[] = { 7 };
	struct adaptive_view v;
	unsigned reads;

	ck_assert_int_eq(read_scripted(script, 1, &v, &reads), -EAGAIN);
	ck_assert_uint_eq(v.level, 12345); /* nothing kept */
	ck_assert_uint_eq(reads, ADAPTIVE_VIEW_TRIES);
}
END_TEST

static int failing_copy(void *ctx, size_t off, void *dst, size_t len)
{
	(void)ctx, (void)off, (void)dst, (void)len;
	return -EIO;
}

START_TEST(test_copy_error_returned)
{
	struct adaptive_view v;

	ck_assert_int_eq(adaptive_view_read(failing_copy, NULL, &v), -EIO);
}
END_TEST

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The writer's side: each step moves the sequence by two and leaves it even. */
START_TEST(test_step_bumps_sequence)
{
	struct adaptive_params p;
	struct adaptive_target t;
	struct adaptive_region *r;
	struct adaptive_view v;
	char err[128];
	uint32_t seq;

	adaptive_params_default(&p);
	ck_assert_int_eq(adaptive_target_parse("read.p99<=1500us", &t, err, sizeof(err)), 0);
	r = adaptive_region_create(&p, &t, monotonic_ns());
	ck_assert_ptr_nonnull(r);
	seq = atomic_load(&r->seq);
	ck_assert_uint_eq(seq % 2, 0);
	for (int i = 1; i <= 3; i++) {
		ck_assert_int_eq(adaptive_region_maybe_step(r, atomic_load(&r->deadline_ns), getpid(),
							    (pid_t)syscall(SYS_gettid)), 1);
		ck_assert_uint_eq(atomic_load(&r->seq), seq + 2u * (unsigned)i);
	}
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), 0);
	ck_assert_uint_eq(v.creator_pid, (uint64_t)getpid());
	ck_assert(v.target.set && !v.target.relative);
	ck_assert_uint_eq(v.target.latency_ns, 1500000);
	ck_assert_uint_eq(v.bound_ns, 1500000);
	ck_assert_uint_eq(v.windows, r->ctl.windows);
	ck_assert_uint_eq(v.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(v.level_full, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(v.cap, ADAPTIVE_UNLIMITED);
	/* A level or a phase no controller writes: a garbled region, shown as nothing. */
	r->ctl.level = ADAPTIVE_LEVEL_FULL + 1;
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), -ERANGE);
	r->ctl.level = 0;
	r->ctl.phase = (enum adaptive_phase)7;
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), -ERANGE);
	r->ctl.phase = PHASE_PROBE_MEASURE;
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), 0);
	ck_assert_uint_eq(v.probing, 1);
	adaptive_region_destroy(r);
}
END_TEST

/* A region whose controller holds issue 23's facts, each a distinct number. */
static struct adaptive_region *issue23_region(void)
{
	struct adaptive_region *r = fake_region();

	r->ctl.l0_files = 15;
	r->ctl.l0_trigger = 20;
	r->ctl.l0_floor = 7;
	r->ctl.l0_lifts = 3;
	r->ctl.void_probes = 2;
	r->ctl.short_probes = 1;
	r->ctl.valid_probes = 4;
	r->ctl.probe_reads[0] = 412; /* the latest valid probe's */
	r->ctl.probe_reads[1] = 999;
	r->ctl.last_step_ns = 5000000000ull;
	atomic_store(&r->gate.reclaimed, 5);
	atomic_store(&r->takeovers, 6);
	r->ctl.early_misses = 7;
	r->ctl.outside_restores = 8;
	r->ctl.slow_start = 1;
	r->ctl.queued_alone_permille = 612;
	r->ctl.queue_misses = 9;
	return r;
}

START_TEST(test_issue23_fields)
{
	struct adaptive_region *r = issue23_region();
	struct adaptive_view v;

	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), 0);
	ck_assert_uint_eq(v.l0_files, 15);
	ck_assert_uint_eq(v.l0_trigger, 20);
	ck_assert_uint_eq(v.l0_floor, 7);
	ck_assert_uint_eq(v.l0_lifts, 3);
	ck_assert_uint_eq(v.void_probes, 2);
	ck_assert_uint_eq(v.short_probes, 1);
	ck_assert_uint_eq(v.valid_probes, 4);
	ck_assert_uint_eq(v.baseline_reads, 412);
	ck_assert_uint_eq(v.last_step_ns, 5000000000ull);
	ck_assert_uint_eq(v.slots_taken_back, 5);
	ck_assert_uint_eq(v.step_takeovers, 6);
	ck_assert_uint_eq(v.early_misses, 7);
	ck_assert_uint_eq(v.outside_restores, 8);
	ck_assert_uint_eq(v.slow_start, 1);
	ck_assert_uint_eq(v.queued_alone_permille, 612);
	ck_assert_uint_eq(v.queue_misses, 9);
	/* A floor no controller sets: a garbled region, shown as nothing. */
	r->ctl.l0_floor = ADAPTIVE_LEVEL_FULL + 1;
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), -ERANGE);
	free(r);
}
END_TEST

/* The age is the reader's clock minus the step's, never negative; stale past the lease. */
START_TEST(test_step_age)
{
	struct adaptive_view v = { .last_step_ns = 5000000000ull };
	struct adaptive_params p;
	struct adaptive_target t;
	struct adaptive_region *r;
	char err[128];
	uint64_t due;

	ck_assert_uint_eq(adaptive_view_step_age_ns(&v, 8200000000ull), 3200000000ull);
	ck_assert_uint_eq(adaptive_view_step_age_ns(&v, 4990000000ull), 0);
	ck_assert_uint_eq(ADAPTIVE_VIEW_STALE_NS, ADAPTIVE_LEASE_NS);
	/* A real step stamps its own time: the view shows the step's now, not the start's. */
	adaptive_params_default(&p);
	ck_assert_int_eq(adaptive_target_parse("read.p99<=1500us", &t, err, sizeof(err)), 0);
	r = adaptive_region_create(&p, &t, monotonic_ns());
	ck_assert_ptr_nonnull(r);
	due = atomic_load(&r->deadline_ns) + 7;
	ck_assert_int_eq(adaptive_region_maybe_step(r, due, getpid(), (pid_t)syscall(SYS_gettid)), 1);
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, r, &v), 0);
	ck_assert_uint_eq(v.last_step_ns, due);
	ck_assert_uint_eq(adaptive_view_step_age_ns(&v, due + ADAPTIVE_VIEW_STALE_NS),
			  ADAPTIVE_VIEW_STALE_NS);
	adaptive_region_destroy(r);
}
END_TEST

/*
 * Every number of the view has a name, once, for the state file's lines and the exporter's
 * parser: a field added to the struct but not to the table would be lost on the way.
 */
START_TEST(test_every_field_named)
{
	size_t first = offsetof(struct adaptive_view, creator_pid);
	bool seen[ADAPTIVE_VIEW_NFIELDS] = { false };
	static const char *const issue23[] = {
		"l0_files", "l0_trigger", "l0_floor", "l0_lifts", "void_probes", "short_probes",
		"valid_probes", "baseline_reads", "last_step_ns", "slots_taken_back",
		"step_takeovers", "early_misses", "outside_restores", "slow_start",
		"queued_alone_permille", "queue_misses",
	};

	ck_assert_uint_eq((sizeof(struct adaptive_view) - first) / sizeof(uint64_t),
			  ADAPTIVE_VIEW_NFIELDS);
	for (unsigned i = 0; i < ADAPTIVE_VIEW_NFIELDS; i++) {
		size_t slot = (adaptive_view_fields[i].offset - first) / sizeof(uint64_t);

		ck_assert_uint_ge(adaptive_view_fields[i].offset, first);
		ck_assert_uint_lt(slot, ADAPTIVE_VIEW_NFIELDS);
		ck_assert_msg(!seen[slot], "%s named twice", adaptive_view_fields[i].name);
		seen[slot] = true;
	}
	for (unsigned k = 0; k < sizeof(issue23) / sizeof(issue23[0]); k++) {
		unsigned i = 0;

		while (i < ADAPTIVE_VIEW_NFIELDS && strcmp(adaptive_view_fields[i].name, issue23[k]))
			i++;
		ck_assert_msg(i < ADAPTIVE_VIEW_NFIELDS, "%s has no name", issue23[k]);
	}
	/* Appended: the older names keep their places, as the state file's readers expect. */
	ck_assert_str_eq(adaptive_view_fields[0].name, "creator_pid");
	ck_assert_str_eq(adaptive_view_fields[15].name, "debt_lifts");
}
END_TEST

int main(void)
{
	return check_run_case("adaptive-view", "core", (const TTest *const[]){
		test_odd_sequence_never_kept, test_moved_sequence_not_kept,
		test_always_odd_gives_up, test_copy_error_returned, test_step_bumps_sequence,
		test_issue23_fields, test_step_age, test_every_field_named, NULL });
}
