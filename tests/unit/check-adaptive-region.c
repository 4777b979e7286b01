// SPDX-License-Identifier: MIT
/*
 * check-adaptive-region.c: unit tests of the adaptive tier's shared state: reads noted in
 * a forked child count in the parent's window, whichever process steps sizes the one gate
 * for both, a step happens once per window (a try-lock, never a wait), the low tier's
 * bytes and waits reach the controller, every cap carries its lease, and threads held at
 * the gate step the controller themselves. The memfd cannot be truncated (issue 25), and an
 * unsealed handover is refused.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_region.h"
#include "check_main.h"
#include "region_fixture.h"

#define MS 1000000ull
#define SLOW (5 * MS) /* over the 1 ms target */

static struct adaptive_region *r;
static uint64_t t0;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void setup(void)
{
	t0 = monotonic_ns();
	r = region_fixture("read.p99<=1ms", t0);
}

static void teardown(void)
{
	adaptive_region_destroy(r);
}

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int step_at(uint64_t now)
{
	return adaptive_region_maybe_step(r, now, getpid(), self_tid());
}

static void note_reads(uint64_t ns, int n)
{
	for (int i = 0; i < n; i++)
		adaptive_region_note_read(r, ns);
}

/* In a child: note @n reads of @ns, step at the deadline if @step, exit 0 when it did. */
static void in_child(uint64_t ns, int n, bool step)
{
	pid_t child = fork();
	int status;

	ck_assert_int_ge(child, 0);
	if (child == 0) {
		note_reads(ns, n);
		_exit(step && !adaptive_region_maybe_step(r, atomic_load(&r->deadline_ns),
							 getpid(), self_tid()) ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}

/* The header a process after exec, or `iotier threads`, checks before trusting a mapping. */
START_TEST(test_header_identifies_region)
{
	ck_assert(adaptive_region_valid(r, sizeof(*r)));
	ck_assert_int_eq(r->creator_pid, getpid());
	ck_assert(!adaptive_region_valid(r, sizeof(*r) - 1)); /* a shorter mapping */
	r->layout++;                                           /* another build's layout */
	ck_assert(!adaptive_region_valid(r, sizeof(*r)));
	r->layout--;
	r->magic = 0;                                          /* not initialised */
	ck_assert(!adaptive_region_valid(r, sizeof(*r)));
	r->magic = ADAPTIVE_REGION_MAGIC;
}
END_TEST

START_TEST(test_shared_across_fork)
{
	uint64_t deadline = atomic_load(&r->deadline_ns);

	ck_assert_uint_eq(atomic_load(&r->gate.cap), LOW_GATE_UNLIMITED);
	in_child(SLOW, 300, false); /* the child's reads ... */
	ck_assert_int_eq(step_at(deadline), 1);
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL - 1); /* ... are the parent's miss */
	ck_assert_uint_eq(atomic_load(&r->gate.cap), 16);
	ck_assert_uint_eq(atomic_load(&r->chunk), 1u << 20);
	ck_assert_uint_eq(atomic_load(&r->gate.lease_ns), deadline + ADAPTIVE_LEASE_NS);
	in_child(SLOW, 300, true); /* and a child's step sizes the parent's gate */
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL - 2);
	ck_assert_uint_eq(atomic_load(&r->gate.cap), 8);
	ck_assert_uint_eq(atomic_load(&r->level_changes), 2);
	for (uint32_t s = 0; s < ADAPTIVE_HIST_SLOTS; s++)
		for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++) /* each window starts empty */
			ck_assert_uint_eq(atomic_load(&r->hist[s].count[i]), 0);
}
END_TEST

START_TEST(test_one_step_per_window)
{
	uint64_t deadline = atomic_load(&r->deadline_ns);

	note_reads(SLOW, 300);
	ck_assert_int_eq(step_at(deadline - 1), 0);
	atomic_store(&r->stepper, (uint64_t)getpid() << 32 | 12345); /* someone is stepping */
	ck_assert_int_eq(step_at(deadline), 0);
	atomic_store(&r->stepper, 0);
	ck_assert_uint_eq(r->ctl.windows, 0);
	ck_assert_int_eq(step_at(deadline), 1);
	ck_assert_int_eq(step_at(deadline), 0); /* done */
	ck_assert_uint_eq(r->ctl.windows, 1);
	ck_assert_uint_eq(atomic_load(&r->stepper), 0);
}
END_TEST

/* A stepper that died inside a step: its lock is taken over once its window is long over. */
START_TEST(test_dead_stepper_taken_over)
{
	uint64_t deadline = atomic_load(&r->deadline_ns);
	pid_t child = fork();
	int status;

	ck_assert_int_ge(child, 0);
	if (child == 0) {
		atomic_store(&r->stepper, (uint64_t)getpid() << 32 | (uint32_t)self_tid());
		_exit(0); /* killed in the middle of a step */
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_int_eq(step_at(deadline), 0); /* maybe just slow: wait */
	ck_assert_int_eq(step_at(deadline + STEPPER_STALE_NS - 1), 0);
	ck_assert_int_eq(step_at(deadline + STEPPER_STALE_NS), 1); /* gone: taken over */
	ck_assert_uint_eq(atomic_load(&r->stepper), 0);
	/* A live holder keeps it however late it is. */
	atomic_store(&r->stepper, (uint64_t)getpid() << 32 | (uint32_t)self_tid());
	ck_assert_int_eq(step_at(atomic_load(&r->deadline_ns) + 10 * STEPPER_STALE_NS), 0);
}
END_TEST

/* What the low tier did through the gate is the controller's rate and demand. */
START_TEST(test_low_counters_reach_controller)
{
	uint64_t deadline = atomic_load(&r->deadline_ns);
	uint32_t ticket;

	low_gate_set_cap(&r->gate, 0, monotonic_ns() - 1); /* an expired lease: passes */
	ticket = low_gate_enter(&r->gate, getpid(), self_tid(), UINT64_MAX);
	low_gate_exit(&r->gate, ticket, 10u << 20);
	atomic_fetch_add(&r->splits, 3);
	note_reads(100000, 300);
	ck_assert_int_eq(step_at(deadline), 1);
	/* 10 MiB in the 100 ms window. */
	ck_assert_uint_eq(r->ctl.rate, (10ull << 20) * 10);
	ck_assert_uint_eq(r->window.low_bytes, 10u << 20);
	ck_assert_uint_eq(r->window.low_limited, 3); /* split, and none waited */
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL);
}
END_TEST

/*
 * Reads noted on different CPUs land in different slots; the step sees them as one window:
 * 150 slow reads in each of two slots are a window of 300 with all of them over the target
 * (a miss), where either slot alone would be too few reads to judge.
 */
START_TEST(test_slots_summed_per_window)
{
	uint64_t deadline = atomic_load(&r->deadline_ns);

	for (int i = 0; i < 150; i++) {
		adaptive_region_note_read_at(r, 3, SLOW);
		adaptive_region_note_read_at(r, 3 + ADAPTIVE_HIST_SLOTS + 1, SLOW); /* wraps to 4 */
	}
	ck_assert_uint_eq(atomic_load(&r->hist[4].count[hist_bucket(SLOW)]), 150);
	ck_assert_int_eq(step_at(deadline), 1);
	ck_assert_uint_eq(adaptive_hist_count(r->window.hist), 300);
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL - 1);
	ck_assert_uint_eq(atomic_load(&r->hist[3].count[hist_bucket(SLOW)]), 0);
	ck_assert_uint_eq(atomic_load(&r->hist[4].count[hist_bucket(SLOW)]), 0);
}
END_TEST

/*
 * Wait for @child to exit, at most 20 s (a loaded machine; meson stops a test at 30 s),
 * then kill it. Its exit status, or -1.
 */
static int wait_child(pid_t child)
{
	int status;

	for (int ms = 0; ms < 20000; ms++) {
		if (waitpid(child, &status, WNOHANG) == child)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(1000);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return -1;
}

/*
 * The reader gone and the low tier held: its threads wait at the gate, and nobody else
 * does I/O. The waiters step the controller themselves: two windows without reads, and it
 * releases the tier and lets them go. The lease is made endless here, so only their steps
 * can open the gate (without them the child waits until it is killed).
 */
START_TEST(test_held_waiters_step)
{
	pid_t child;

	for (int i = 0; i < ADAPTIVE_LEVEL_FULL; i++) {
		note_reads(SLOW, 300);
		ck_assert_int_eq(step_at(atomic_load(&r->deadline_ns)), 1);
	}
	ck_assert_uint_eq(r->ctl.level, 0);
	low_gate_set_cap(&r->gate, 0, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		for (int i = 0; i < 100 && r->ctl.level != ADAPTIVE_LEVEL_FULL; i++)
			low_gate_exit(&r->gate, adaptive_region_gate_enter(r, getpid(), self_tid(), UINT64_MAX), 0);
		_exit(r->ctl.level == ADAPTIVE_LEVEL_FULL ? 0 : 1);
	}
	ck_assert_int_eq(wait_child(child), 0);
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(atomic_load(&r->gate.cap), LOW_GATE_UNLIMITED);
	ck_assert_uint_ge(r->ctl.windows, ADAPTIVE_LEVEL_FULL + r->ctl.p.idle_windows);
}
END_TEST

static struct adaptive_region *region_with_fd(int *fd)
{
	struct adaptive_params p;
	struct adaptive_target t;
	char err[128];

	adaptive_params_default(&p);
	ck_assert_int_eq(adaptive_target_parse("read.p99<=1ms", &t, err, sizeof(err)), 0);
	return adaptive_region_create_fd(&p, &t, t0, fd);
}

/*
 * Issue 25, case 5: any process of the tree could truncate the region's memfd through
 * /proc/PID/fd, and every process died of SIGBUS at its next access. It is sealed now.
 */
START_TEST(test_truncate_refused)
{
	struct adaptive_region *own;
	char path[64];
	int fd, other;

	own = region_with_fd(&fd);
	ck_assert_ptr_nonnull(own);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", getpid(), fd);
	other = open(path, O_RDWR);
	ck_assert_int_ge(other, 0);
	ck_assert_int_eq(ftruncate(other, 0), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(ftruncate(other, 2 * sizeof(*own)), -1);
	ck_assert_int_eq(fcntl(other, F_ADD_SEALS, F_SEAL_WRITE), -1); /* and for good */
	/* Still mapped whole: a low I/O and a step touch it end to end. */
	low_gate_set_cap(&own->gate, 1, 0);
	low_gate_exit(&own->gate, low_gate_enter(&own->gate, getpid(), self_tid(), UINT64_MAX), 1);
	ck_assert_int_eq(adaptive_region_maybe_step(own, atomic_load(&own->deadline_ns), getpid(),
						    self_tid()), 1);
	ck_assert_uint_eq(atomic_load(&own->seq) % 2, 0);
	close(other);
	close(fd);
	adaptive_region_destroy(own);
}
END_TEST

/* A region handed across exec must be sealed; an unsealed copy of a good one is refused. */
START_TEST(test_unsealed_handover_refused)
{
	int fd = memfd_create(ADAPTIVE_REGION_NAME, MFD_CLOEXEC), sealed;
	struct adaptive_region *own, *adopted;
	const char *why = NULL;
	bool ours;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, r, sizeof(*r), 0), (ssize_t)sizeof(*r));
	ck_assert_ptr_null(adaptive_region_adopt(fd, &why, &ours));
	ck_assert(ours);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strstr(why, "sealed"), "%s", why);
	close(fd);
	own = region_with_fd(&sealed);
	ck_assert_ptr_nonnull(own);
	adopted = adaptive_region_adopt(sealed, &why, &ours);
	ck_assert_ptr_nonnull(adopted);
	adaptive_region_destroy(adopted);
	adaptive_region_destroy(own);
	close(sealed);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("adaptive-region");
	TCase *tc = tcase_create("region");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_header_identifies_region);
	tcase_add_test(tc, test_shared_across_fork);
	tcase_add_test(tc, test_one_step_per_window);
	tcase_add_test(tc, test_low_counters_reach_controller);
	tcase_add_test(tc, test_dead_stepper_taken_over);
	tcase_add_test(tc, test_slots_summed_per_window);
	tcase_add_test(tc, test_held_waiters_step);
	tcase_add_test(tc, test_truncate_refused);
	tcase_add_test(tc, test_unsealed_handover_refused);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
