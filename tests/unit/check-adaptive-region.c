// SPDX-License-Identifier: MIT
/*
 * check-adaptive-region.c: unit tests of the adaptive tier's shared state: reads noted in
 * a forked child count in the parent's window, whichever process steps sizes the one gate
 * for both, a step happens once per window (a try-lock, never a wait), the low tier's
 * bytes and waits reach the controller, every cap carries its lease, and threads held at
 * the gate step the controller themselves. And no process can wedge the others through it
 * (issue 25): a stepper killed or stopped in the middle of a step loses it within
 * STEPPER_LEASE_NS and leaves the seqlock even; the memfd cannot be truncated; an unsealed
 * handover is refused; a region with garbage in its fields is "no target" with one warning,
 * and never hangs a low thread. The table of files the foreground writes is the tree's.
 * An urgent thread's I/O, counted in a child, voids the baseline probe under way. A read is
 * noted in its CPU's slot, errno kept.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptive/adaptive_hist.h"
#include "adaptive/adaptive_region.h"
#include "adaptive/adaptive_view.h"
#include "check_main.h"
#include "region_fixture.h"

#define MS 1000000ull
#define SLOW (3 * MS / 2) /* over the 1 ms target, by under 2x: a miss of one level */

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

/* As the shim does: the read's start and end for the fast path, its latency for the window. */
static void note_reads(uint64_t ns, int n)
{
	struct timespec ts;

	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		adaptive_region_fg_begin(r, 0, (uint64_t)ts.tv_sec * 1000000000ull +
					    (uint64_t)ts.tv_nsec);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		adaptive_region_fg_end(r, 0, (uint64_t)ts.tv_sec * 1000000000ull +
					  (uint64_t)ts.tv_nsec);
		adaptive_region_note_read(r, ns);
	}
}

/* In a child: note @n reads of @ns, step at the deadline if @step, exit 0 when it did. */
static void in_child(uint64_t ns, int n, bool step)
{
	pid_t child = fork();
	int status;

	ck_assert_int_ge(child, 0);
	if (child == 0) {
		note_reads(ns, n);
		_exit(step && !adaptive_region_maybe_step(r, r->ctl.window_end_ns,
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
	uint64_t deadline = r->ctl.window_end_ns;

	ck_assert_uint_eq(atomic_load(&r->gate.cap), LOW_GATE_UNLIMITED);
	in_child(SLOW, 300, false); /* the child's reads ... */
	ck_assert_int_eq(step_at(deadline), 1);
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL - 1); /* ... are the parent's miss */
	ck_assert_uint_eq(atomic_load(&r->gate.cap), 16);
	ck_assert_uint_eq(atomic_load(&r->chunk), 1u << 20);
	/* the cap holds a lease past the next window's end */
	ck_assert_uint_eq(atomic_load(&r->gate.lease_ns),
			  atomic_load(&r->deadline_ns) + ADAPTIVE_LEASE_NS);
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
	uint64_t deadline = atomic_load(&r->deadline_ns); /* a look: a certain miss is judged */

	note_reads(SLOW, 300);
	ck_assert_int_eq(step_at(deadline - 1), 0);
	/* Someone began stepping at this very millisecond. */
	atomic_store(&r->stepper, (uint64_t)getpid() << 32 | (uint32_t)(deadline / MS));
	ck_assert_int_eq(step_at(deadline), 0);
	atomic_store(&r->stepper, 0);
	ck_assert_uint_eq(r->ctl.windows, 0);
	ck_assert_int_eq(step_at(deadline), 1);
	ck_assert_int_eq(step_at(deadline), 0); /* done */
	ck_assert_uint_eq(r->ctl.windows, 1);
	ck_assert_uint_eq(atomic_load(&r->stepper), 0);
}
END_TEST

/*
 * A window longer than the cap's lease (16 x a 100 ms target: 1.6 s): the cap must hold to
 * the window's end and past it, or the low tier would go at full mid-window while low
 * threads keep calling. Low threads step at every look (10 ms) until the window's end, and
 * each renews the lease to 1 s past the next look; with no low thread calling it lapses 1 s
 * after the last, and the next low call steps before it is admitted. Before: lease = step +
 * 1 s, and the next step only at the window's end.
 */
START_TEST(test_lease_outlasts_window)
{
	struct adaptive_region *slow = region_fixture("read.p99<=100ms", t0);
	uint64_t end = slow->ctl.window_end_ns, start = slow->ctl.window_start_ns, now, next;
	struct adaptive_view v;

	ck_assert_uint_ge(end - start, 1600 * MS);
	for (now = atomic_load(&slow->deadline_ns); now < end; now = next) {
		ck_assert_int_eq(adaptive_region_maybe_step(slow, now, getpid(), self_tid()), 1);
		next = atomic_load(&slow->deadline_ns);
		ck_assert_uint_gt(next, now);
		ck_assert_uint_le(next - now, slow->ctl.p.look_ns);
		ck_assert_uint_eq(atomic_load(&slow->gate.lease_ns), next + ADAPTIVE_LEASE_NS);
		ck_assert_uint_eq(slow->ctl.windows, 0); /* looked at, not judged */
	}
	ck_assert_int_eq(adaptive_region_maybe_step(slow, end, getpid(), self_tid()), 1);
	ck_assert_uint_eq(slow->ctl.windows, 1);
	/* the view is stale exactly when the gate applies no cap */
	next = atomic_load(&slow->deadline_ns);
	ck_assert_int_eq(adaptive_view_read(adaptive_view_copy_local, slow, &v), 0);
	ck_assert(!adaptive_view_stale(&v, end + 500 * MS, 0));
	ck_assert(!adaptive_view_stale(&v, next + ADAPTIVE_LEASE_NS - 1, 0));
	ck_assert(adaptive_view_stale(&v, next + ADAPTIVE_LEASE_NS, 0));
	adaptive_region_destroy(slow);
}
END_TEST

/* The lock word of a step that began at @ns: the pid and the millisecond. */
static uint64_t stepping_since(uint64_t ns)
{
	return (uint64_t)getpid() << 32 | (uint32_t)(ns / MS);
}

/* A step is a lease: taken over once it is STEPPER_LEASE_NS old, whoever holds it. */
START_TEST(test_stale_stepper_taken_over)
{
	uint64_t deadline = r->ctl.window_end_ns;

	atomic_store(&r->stepper, stepping_since(deadline)); /* a live holder, and our own pid */
	ck_assert_int_eq(step_at(deadline), 0);
	ck_assert_int_eq(step_at(deadline + STEPPER_LEASE_NS - MS), 0); /* maybe just slow */
	ck_assert_int_eq(step_at(deadline + STEPPER_LEASE_NS), 1);      /* past its lease */
	ck_assert_uint_eq(atomic_load(&r->stepper), 0);
	ck_assert_uint_eq(atomic_load(&r->seq) % 2, 0);
	/* A taker's clock a little behind the holder's (the coarse clock) is not a stale step. */
	deadline = r->ctl.window_end_ns;
	atomic_store(&r->stepper, stepping_since(deadline + 4 * MS));
	ck_assert_int_eq(step_at(deadline), 0);
}
END_TEST

/* What the low tier did through the gate is the controller's rate and demand. */
START_TEST(test_low_counters_reach_controller)
{
	uint64_t deadline = r->ctl.window_end_ns;
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
 * A flush (an urgent thread) in a child process does I/O while a probe holds the low tier:
 * the step collects its count, the probe gives no baseline and the counter starts again;
 * the next probe, without it, gives one.
 */
START_TEST(test_urgent_io_voids_probe)
{
	pid_t child;
	int status;

	adaptive_region_destroy(r);
	r = region_fixture("read.p99<=2x", t0);
	note_reads(400000, 300);
	ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1);
	ck_assert_int_eq(r->ctl.phase, PHASE_PROBE_DRAIN);
	note_reads(400000, 30); /* the reader at its pace again: drained */
	ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1);
	ck_assert_int_eq(r->ctl.phase, PHASE_PROBE_MEASURE);
	note_reads(400000, 300);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		adaptive_region_note_urgent(r);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1);
	ck_assert_int_eq(r->ctl.phase, PHASE_RUN);
	ck_assert_uint_eq(r->ctl.void_probes, 1);
	ck_assert_uint_eq(r->ctl.baseline_ns, 0);
	ck_assert_uint_eq(atomic_load(&r->urgent_ios), 0);
	/* The next probe, 5 s on, has no flush in it. */
	note_reads(400000, 300);
	ck_assert_int_eq(step_at(r->ctl.next_probe_ns), 1);
	ck_assert_int_eq(r->ctl.phase, PHASE_PROBE_DRAIN);
	note_reads(400000, 30);
	ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1);
	note_reads(400000, 300);
	ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1);
	ck_assert_int_eq(r->ctl.phase, PHASE_RUN);
	ck_assert_uint_gt(r->ctl.baseline_ns, 0);
	ck_assert_uint_eq(r->ctl.void_probes, 1);
}
END_TEST

/*
 * Reads noted on different CPUs land in different slots; the step sees them as one window:
 * 150 slow reads in each of two slots are a window of 300 with all of them over the target
 * (a miss), where either slot alone would be too few reads to judge.
 */
START_TEST(test_slots_summed_per_window)
{
	uint64_t deadline = r->ctl.window_end_ns;

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
 * A read is noted in the slot of the CPU its thread runs on, read from the rseq area where
 * glibc has one (adaptive_this_cpu), and errno is kept: pinned to each CPU it may use in
 * turn, this thread's reads land in that CPU's slot. A wrong field of the rseq area (or a
 * constant) would put the reads of every CPU but one in the wrong slot.
 */
START_TEST(test_noted_on_own_cpu)
{
	cpu_set_t allowed, one;
	int tried = 0;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	for (int cpu = 0; cpu < CPU_SETSIZE && tried < 4; cpu++) {
		uint32_t slot = (uint32_t)cpu % ADAPTIVE_HIST_SLOTS, before;

		if (!CPU_ISSET(cpu, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
		ck_assert_int_eq(sched_getcpu(), cpu);
		ck_assert_uint_eq(adaptive_this_cpu(), (uint32_t)cpu);
		before = atomic_load(&r->hist[slot].count[hist_bucket(SLOW)]);
		errno = EXDEV;
		adaptive_region_note_read(r, SLOW);
		ck_assert_int_eq(errno, EXDEV);
		ck_assert_uint_eq(atomic_load(&r->hist[slot].count[hist_bucket(SLOW)]), before + 1);
		tried++;
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
	ck_assert_int_gt(tried, 0);
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
 * does I/O. The waiters step the controller themselves and, the reader idle, go at full
 * (the fast path); their steps after each I/O release the controller after two windows
 * without reads, its cap staying held for the reader's return. The lease is made endless
 * here, so only the fast path can open the gate (without it the child waits until killed).
 */
START_TEST(test_held_waiters_step)
{
	pid_t child;

	for (int i = 0; i < ADAPTIVE_LEVEL_FULL; i++) {
		note_reads(SLOW, 300);
		ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1);
	}
	ck_assert_uint_eq(r->ctl.level, 0);
	low_gate_set_cap(&r->gate, 0, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		/*
		 * The first call waits (the reader's last read just ended) and steps in its
		 * ticks; once the reader is idle the fast path lets the calls go at full, and
		 * each steps after its I/O, as adaptive_low_end does.
		 */
		for (int i = 0; i < 10000 && r->ctl.level != ADAPTIVE_LEVEL_FULL; i++) {
			struct timespec ts;

			low_gate_exit(&r->gate, adaptive_region_gate_enter(r, getpid(), self_tid(),
									   UINT64_MAX), 0);
			clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
			step_at((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
			usleep(1000);
		}
		_exit(r->ctl.level == ADAPTIVE_LEVEL_FULL ? 0 : 1);
	}
	ck_assert_int_eq(wait_child(child), 0);
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL);
	ck_assert_uint_eq(r->ctl.released, 1);
	/* The cap stays held for the reader's return; the reader idle, the waiter went at full. */
	ck_assert_uint_eq(atomic_load(&r->gate.cap), 0);
	ck_assert_uint_gt(atomic_load(&r->fast_full), 0);
	ck_assert_uint_ge(r->ctl.windows, ADAPTIVE_LEVEL_FULL + r->ctl.p.idle_windows);
}
END_TEST

/* Is the controller's view readable (the seqlock even and still)? */
static bool view_readable(void)
{
	struct adaptive_view v;

	return adaptive_view_read(adaptive_view_copy_local, r, &v) == 0;
}

static void exit_mid_step(void)
{
	_exit(0);
}

/*
 * Issue 25, case 3: a process killed inside a step left the seqlock odd for good, so that
 * `iotier threads` and the state file could never read the controller again. Now the
 * next process to find the window due takes the step over once its lease is out, and
 * leaves the count even.
 */
START_TEST(test_killed_mid_step)
{
	uint64_t deadline = r->ctl.window_end_ns;
	pid_t child;

	note_reads(SLOW, 300);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		adaptive_region_mid_step = exit_mid_step;
		adaptive_region_maybe_step(r, deadline, getpid(), self_tid());
		_exit(1); /* the hook did not run */
	}
	ck_assert_int_eq(wait_child(child), 0);
	ck_assert_uint_eq(atomic_load(&r->seq) % 2, 1); /* died with the count odd */
	ck_assert(!view_readable());
	ck_assert_int_eq(step_at(deadline + STEPPER_LEASE_NS - MS), 0); /* within its lease */
	ck_assert_int_eq(step_at(deadline + STEPPER_LEASE_NS), 1);
	ck_assert_uint_eq(atomic_load(&r->seq) % 2, 0);
	ck_assert(view_readable());
	ck_assert_uint_eq(atomic_load(&r->stepper), 0);
	ck_assert_int_eq(step_at(r->ctl.window_end_ns), 1); /* and on it goes */
	ck_assert(view_readable());
}
END_TEST

static void stop_mid_step(void)
{
	static int stopped;

	if (!stopped++)
		raise(SIGSTOP);
}

/*
 * Issue 25, case 4: a stepper stopped (SIGSTOP, a debugger) in the middle of a step froze
 * the windows until the cap's lease ran out and the low tier went free for the whole tree.
 * Now another process takes the step over within STEPPER_LEASE_NS and keeps holding; when
 * the stopped one resumes, it finds its step taken, and neither publishes its cap, nor
 * frees its taker's lock, nor touches the seqlock.
 */
START_TEST(test_stopped_mid_step)
{
	uint64_t deadline = r->ctl.window_end_ns, now = deadline + STEPPER_LEASE_NS, lease;
	uint32_t seq;
	pid_t child;
	int status;

	note_reads(SLOW, 300);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		adaptive_region_mid_step = stop_mid_step;
		_exit(adaptive_region_maybe_step(r, deadline, getpid(), self_tid()) ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(child, &status, WUNTRACED), child);
	ck_assert(WIFSTOPPED(status));
	ck_assert_int_eq(step_at(now), 1); /* taken over */
	for (int i = 0; i < 2 * ADAPTIVE_LEVEL_FULL && r->ctl.cap; i++) {
		note_reads(SLOW, 300);
		now = r->ctl.window_end_ns;
		ck_assert_int_eq(step_at(now), 1);
	}
	ck_assert_uint_eq(r->ctl.level, 0); /* the tree kept adapting: held */
	ck_assert_uint_eq(atomic_load(&r->gate.cap), 0);
	lease = atomic_load(&r->gate.lease_ns);
	ck_assert_uint_eq(lease, atomic_load(&r->deadline_ns) + ADAPTIVE_LEASE_NS);
	/* The stopped stepper resumes while another holds the lock. */
	seq = atomic_load(&r->seq);
	atomic_store(&r->stepper, stepping_since(now));
	ck_assert_int_eq(kill(child, SIGCONT), 0);
	ck_assert_int_eq(wait_child(child), 0); /* it did not count a step of its own */
	ck_assert_uint_eq(atomic_load(&r->stepper), stepping_since(now));
	ck_assert_uint_eq(atomic_load(&r->seq), seq);
	ck_assert_uint_eq(atomic_load(&r->gate.cap), 0);
	ck_assert_uint_eq(atomic_load(&r->gate.lease_ns), lease); /* nothing published */
	ck_assert(view_readable());
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
	ck_assert_int_eq(adaptive_region_maybe_step(own, own->ctl.window_end_ns, getpid(),
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

#define GARBLE_BOUND (20 * MS)
#define GARBLE_CALLS 20

/* Random bytes over [@from, @to) of the region, from the seed. */
static void garble(size_t from, size_t to, unsigned seed)
{
	srandom(seed);
	for (size_t i = from; i < to; i++)
		((unsigned char *)r)[i] = (unsigned char)random();
}

/*
 * The child's run on a garbled region: GARBLE_CALLS low I/Os through the gate and steps.
 * Exit 0 when they all came through, within their bounds, the region was found bad and
 * the warning said once (stderr goes to a file to count it).
 */
static void garbled_child(unsigned seed)
{
	FILE *err = tmpfile();
	uint64_t start = monotonic_ns();
	char line[512];
	int lines = 0;

	if (!err || dup2(fileno(err), 2) < 0)
		_exit(3);
	if (seed % 2) { /* the whole region after its header */
		garble(offsetof(struct adaptive_region, gate), sizeof(*r), seed);
	} else {        /* only the controller, and its window due, so that a step reads it */
		garble(offsetof(struct adaptive_region, ctl),
		       offsetof(struct adaptive_region, debt), seed);
		atomic_store(&r->deadline_ns, 0);
		atomic_store(&r->stepper, 0);
		low_gate_set_cap(&r->gate, 0, 0);
	}
	for (int i = 0; i < GARBLE_CALLS; i++) {
		uint32_t ticket = adaptive_region_gate_enter(r, getpid(), self_tid(), GARBLE_BOUND);

		low_gate_exit(&r->gate, ticket, 4096);
		adaptive_region_maybe_step(r, monotonic_ns(), getpid(), self_tid());
	}
	if (monotonic_ns() - start > GARBLE_CALLS * GARBLE_BOUND + 2000 * MS)
		_exit(4);
	rewind(err);
	while (fgets(line, sizeof(line), err))
		lines++;
	_exit(!adaptive_region_bad(r) ? 5 : lines != 1 ? 6 : 0);
}

/*
 * Issue 25, case 7: a region with a valid header and random fields left low threads waiting
 * in low_gate_enter_ticking for ever. Now every field is checked before use: such a region
 * is no target, with one warning, and every call comes through. Eight seeds; the odd ones
 * garble the whole region (the gate first of all), the even ones only the controller.
 */
/*
 * The shared-files table (a lock holder is never held): a noted key is found, in a forked
 * child too; a key never noted is not; a key noted twice counts once; a full probe window
 * takes the newest key into its home slot; a garbled table answers without crashing.
 */
START_TEST(test_shared_files)
{
	uint64_t home = 7, key = home;
	pid_t child;

	ck_assert(!adaptive_region_file_shared(r, 12345));
	adaptive_region_note_shared(r, 12345);
	adaptive_region_note_shared(r, 12345);
	ck_assert(adaptive_region_file_shared(r, 12345));
	ck_assert_uint_eq(atomic_load(&r->shared_notes), 1);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		adaptive_region_note_shared(r, 999);
		_exit(adaptive_region_file_shared(r, 12345) ? 0 : 1);
	}
	ck_assert_int_eq(wait_child(child), 0);
	ck_assert(adaptive_region_file_shared(r, 999)); /* a child's note is the parent's */
	/* Fill key 7's probe window with keys of the same home slot, then one more. */
	for (uint32_t i = 0; i < ADAPTIVE_SHARED_PROBE; i++, key += ADAPTIVE_SHARED_FILES)
		adaptive_region_note_shared(r, key);
	for (uint64_t k = home; k < key; k += ADAPTIVE_SHARED_FILES)
		ck_assert(adaptive_region_file_shared(r, k));
	adaptive_region_note_shared(r, key);
	ck_assert(adaptive_region_file_shared(r, key));
	ck_assert(!adaptive_region_file_shared(r, home)); /* replaced in its home slot */
	for (uint32_t i = 0; i < ADAPTIVE_SHARED_FILES; i++)
		atomic_store(&r->shared_files[i], 0x5a5a5a5a5a5a5a5aull * (i + 1));
	ck_assert(!adaptive_region_file_shared(r, 3));
	adaptive_region_note_shared(r, 3); /* a full table: replaces the home slot */
	ck_assert(adaptive_region_file_shared(r, 3));
}
END_TEST

START_TEST(test_garbled_region)
{
	for (unsigned seed = 1; seed <= 8; seed++) {
		pid_t child = fork();

		ck_assert_int_ge(child, 0);
		if (child == 0)
			garbled_child(seed);
		ck_assert_msg(wait_child(child) == 0, "seed %u: the garbled region's run failed",
			      seed);
	}
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
	tcase_add_test(tc, test_lease_outlasts_window);
	tcase_add_test(tc, test_low_counters_reach_controller);
	tcase_add_test(tc, test_stale_stepper_taken_over);
	tcase_add_test(tc, test_slots_summed_per_window);
	tcase_add_test(tc, test_noted_on_own_cpu);
	tcase_add_test(tc, test_held_waiters_step);
	tcase_add_test(tc, test_killed_mid_step);
	tcase_add_test(tc, test_stopped_mid_step);
	tcase_add_test(tc, test_truncate_refused);
	tcase_add_test(tc, test_unsealed_handover_refused);
	tcase_add_test(tc, test_garbled_region);
	tcase_add_test(tc, test_shared_files);
	tcase_add_test(tc, test_urgent_io_voids_probe);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
