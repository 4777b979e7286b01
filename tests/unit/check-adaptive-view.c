// SPDX-License-Identifier: MIT
/*
 * check-adaptive-view.c: unit tests of the seqlock reader of the adaptive region
 * (shim/adaptive/adaptive_view.c): it never keeps a copy taken while the sequence was odd or while
 * it moved, gives up rather than spin forever, and the stepper leaves the sequence even
 * and two further on after each step, with the controller's fields readable in between.
 */
#include <check.h>
#include <errno.h>
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

int main(void)
{
	return check_run_case("adaptive-view", "core", (const TTest *const[]){
		test_odd_sequence_never_kept, test_moved_sequence_not_kept,
		test_always_odd_gives_up, test_copy_error_returned, test_step_bumps_sequence,
		NULL });
}
