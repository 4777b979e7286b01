// SPDX-License-Identifier: MIT
/*
 * check-low-gate.c: unit tests of the low tier's cross-process gate: the cap is never
 * exceeded by racing threads, a forked child blocks while the low tier is held and goes
 * once the cap opens (woken, not by the wait slice running out), a dead or stopped holder's
 * slot is taken back (and a live one's is not; a resumed one's release changes nothing), an
 * expired lease lifts the cap, and a thread's nested I/O does not wait for itself. Every
 * wait is on a state (a counter, a pipe byte), never on a sleep's length, except in the
 * one test of the wait's own bound (a call held at most that long, then let through).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptive/low_gate.h"
#include "check_main.h"

#define GENEROUS_MS 30000 /* a loaded CI machine: far longer than any of these waits */

static struct low_gate *g;

static void setup(void)
{
	g = low_gate_create();
	ck_assert_ptr_nonnull(g);
}

static void teardown(void)
{
	low_gate_destroy(g);
}

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static uint32_t enter_self(void)
{
	return low_gate_enter(g, getpid(), self_tid(), UINT64_MAX);
}

/* Wait for @cond, polling; fail the test after GENEROUS_MS. */
#define WAIT_FOR(cond)                                                                     \
	do {                                                                               \
		int waited_ms = 0;                                                         \
		while (!(cond)) {                                                          \
			ck_assert_msg(waited_ms < GENEROUS_MS, "timed out: %s", #cond);    \
			usleep(1000);                                                      \
			waited_ms++;                                                       \
		}                                                                          \
	} while (0)

static char read_byte(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;

	ck_assert_int_eq(poll(&p, 1, GENEROUS_MS), 1);
	ck_assert_int_eq(read(fd, &c, 1), 1);
	return c;
}

static bool byte_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

START_TEST(test_unlimited_passes)
{
	ck_assert_uint_eq(atomic_load(&g->cap), LOW_GATE_UNLIMITED);
	ck_assert_uint_eq(enter_self(), 0);
	low_gate_exit(g, 0, 4096);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
	ck_assert_uint_eq(atomic_load(&g->bytes), 4096);
}
END_TEST

START_TEST(test_nested_does_not_wait)
{
	uint32_t outer, inner;

	low_gate_set_cap(g, 1, 0);
	outer = enter_self();
	ck_assert_uint_ne(outer, 0);
	inner = enter_self(); /* a signal handler's I/O in the middle of ours */
	ck_assert_uint_eq(inner, 0);
	low_gate_exit(g, inner, 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 1);
	low_gate_exit(g, outer, 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
}
END_TEST

START_TEST(test_expired_lease_lifts_cap)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	low_gate_set_cap(g, 0, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	ck_assert_uint_eq(enter_self(), 0);
	ck_assert_uint_eq(atomic_load(&g->waits), 0);
}
END_TEST

START_TEST(test_fork_child_held_then_released)
{
	int to_parent[2];
	pid_t child;
	int status;

	ck_assert_int_eq(pipe(to_parent), 0);
	atomic_store(&g->wait_slice_ns, 3600 * 1000000000ull); /* only a wake-up lets it go */
	low_gate_set_cap(g, 0, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		uint32_t ticket = low_gate_enter(g, getpid(), self_tid(), UINT64_MAX);

		if (write(to_parent[1], "e", 1) != 1)
			_exit(3);
		low_gate_exit(g, ticket, 1000);
		_exit(ticket ? 0 : 2);
	}
	WAIT_FOR(atomic_load(&g->waiters) == 1);
	ck_assert(!byte_ready(to_parent[0])); /* held: still at the gate */
	ck_assert_uint_eq(atomic_load(&g->waits), 1);
	low_gate_set_cap(g, 1, 0);
	ck_assert_int_eq(read_byte(to_parent[0]), 'e');
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
	ck_assert_uint_eq(atomic_load(&g->bytes), 1000);
	close(to_parent[0]);
	close(to_parent[1]);
}
END_TEST

START_TEST(test_dead_holder_reclaimed)
{
	int to_parent[2], to_child[2];
	uint32_t ticket;
	pid_t child;
	int status;

	ck_assert_int_eq(pipe(to_parent), 0);
	ck_assert_int_eq(pipe(to_child), 0);
	low_gate_set_cap(g, 1, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		char c;

		low_gate_enter(g, getpid(), self_tid(), UINT64_MAX);
		if (write(to_parent[1], "h", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(3);
		_exit(0); /* dies holding its slot */
	}
	ck_assert_int_eq(read_byte(to_parent[0]), 'h');
	ck_assert_uint_eq(low_gate_reclaim_dead(g), 0); /* alive: its slot stays */
	ck_assert_uint_eq(atomic_load(&g->inflight), 1);
	ck_assert_int_eq(write(to_child[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ticket = enter_self(); /* waits one slice, finds the dead holder, goes */
	ck_assert_uint_ne(ticket, 0);
	ck_assert_uint_eq(atomic_load(&g->reclaimed), 1);
	ck_assert_uint_eq(atomic_load(&g->inflight), 1);
	low_gate_exit(g, ticket, 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
}
END_TEST

/*
 * A holder stopped (SIGSTOP) with its slot is taken back by a waiter, and once resumed its
 * release leaves the slot and the count in flight alone: the slot is no longer its own.
 */
START_TEST(test_stopped_holder_reclaimed)
{
	int to_parent[2], status;
	uint32_t ticket, own;
	pid_t child;

	ck_assert_int_eq(pipe(to_parent), 0);
	low_gate_set_cap(g, 1, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		uint32_t t = low_gate_enter(g, getpid(), self_tid(), UINT64_MAX);

		if (write(to_parent[1], "h", 1) != 1)
			_exit(3);
		raise(SIGSTOP);
		low_gate_exit(g, t, 0); /* taken back while stopped: must change nothing */
		_exit(t ? 0 : 2);
	}
	ck_assert_int_eq(read_byte(to_parent[0]), 'h');
	ck_assert_int_eq(waitpid(child, &status, WUNTRACED), child);
	ck_assert(WIFSTOPPED(status));
	/* Waits one slice, finds the stopped holder, goes; not at the bound, without a slot. */
	ticket = low_gate_enter(g, getpid(), self_tid(), 2000000000ull);
	ck_assert_uint_ne(ticket, 0);
	ck_assert_uint_eq(atomic_load(&g->reclaimed), 1);
	own = ticket;
	ck_assert_int_eq(kill(child, SIGCONT), 0);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 1); /* ours, still */
	low_gate_exit(g, own, 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
	close(to_parent[0]);
	close(to_parent[1]);
}
END_TEST

#define THREADS 8
#define ROUNDS 300

/* Shared by the hammering threads or processes: how many were inside at once. */
struct shared_counts {
	_Atomic int concurrent, max_concurrent, passed;
};

static void hammer_rounds(struct shared_counts *n)
{
	for (int i = 0; i < ROUNDS; i++) {
		uint32_t ticket = enter_self();
		int now = atomic_fetch_add(&n->concurrent, 1) + 1;
		int seen = atomic_load(&n->max_concurrent);

		while (now > seen && !atomic_compare_exchange_weak(&n->max_concurrent, &seen, now))
			;
		if (i % 16 == 0)
			sched_yield();
		atomic_fetch_sub(&n->concurrent, 1);
		atomic_fetch_add(&n->passed, 1);
		low_gate_exit(g, ticket, 1);
	}
}

static void *hammer_thread(void *arg)
{
	hammer_rounds(arg);
	return NULL;
}

static struct shared_counts *start_hammering(void)
{
	struct shared_counts *n = shared_map_create("iotier-test-counts", sizeof(*n));

	ck_assert_ptr_nonnull(n);
	atomic_store(&g->wait_slice_ns, 3600 * 1000000000ull); /* a lost wake-up hangs */
	low_gate_set_cap(g, 2, 0);
	return n;
}

static void expect_cap_held(struct shared_counts *n)
{
	ck_assert_int_le(atomic_load(&n->max_concurrent), 2);
	ck_assert_int_eq(atomic_load(&n->passed), THREADS * ROUNDS);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
	ck_assert_uint_eq(atomic_load(&g->bytes), THREADS * ROUNDS);
	ck_assert_uint_eq(atomic_load(&g->reclaimed), 0);
	for (int i = 0; i < LOW_GATE_HOLDERS; i++)
		ck_assert_uint_eq(atomic_load(&g->holders[i]), 0);
	munmap(n, sizeof(*n));
}

START_TEST(test_cap_holds_under_races)
{
	struct shared_counts *n = start_hammering();
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer_thread, n), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	expect_cap_held(n);
}
END_TEST

/* The same across processes: forked children share the gate and the counters. */
START_TEST(test_cap_holds_across_processes)
{
	struct shared_counts *n = start_hammering();
	pid_t children[THREADS];
	int status;

	for (int i = 0; i < THREADS; i++) {
		children[i] = fork();
		ck_assert_int_ge(children[i], 0);
		if (children[i] == 0) {
			hammer_rounds(n);
			_exit(0);
		}
	}
	for (int i = 0; i < THREADS; i++) {
		ck_assert_int_eq(waitpid(children[i], &status, 0), children[i]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	expect_cap_held(n);
}
END_TEST

#define BOUND_NS 20000000ull     /* the default IOTIER_GATE_WAIT */
#define SLACK_NS 250000000ull     /* scheduling on a loaded machine */
#define LIFT_AFTER_NS 3000000000ull /* lifts the cap if the bound does not let the call go */

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static _Atomic bool lifter_done;
static _Atomic pid_t lifter_tid;

/* Opens the gate LIFT_AFTER_NS from now, unless told it is over: no test hangs. */
static void *lifter(void *arg)
{
	uint64_t until = monotonic_ns() + LIFT_AFTER_NS;

	(void)arg;
	atomic_store(&lifter_tid, self_tid());
	while (!atomic_load(&lifter_done) && monotonic_ns() < until)
		usleep(1000);
	low_gate_set_cap(g, LOW_GATE_UNLIMITED, 0);
	return NULL;
}

/* One call's wait at a gate that would hold it for ever: how long, and its ticket. */
static uint64_t timed_enter(uint32_t *ticket)
{
	uint64_t start = monotonic_ns();

	*ticket = low_gate_enter(g, getpid(), self_tid(), BOUND_NS);
	return monotonic_ns() - start;
}

/*
 * Issue 25, case 8: single low calls were held for up to 12 s. A call never waits longer
 * than its bound, held (cap 0 for ever) or with every slot taken, and no wait slice is
 * needed to end it: it then goes without a slot.
 */
START_TEST(test_wait_bounded)
{
	uint32_t ticket, held_slot;
	pthread_t t;
	uint64_t waited;

	atomic_store(&g->wait_slice_ns, 3600 * 1000000000ull);
	low_gate_set_cap(g, 0, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, lifter, NULL), 0);
	waited = timed_enter(&ticket);
	ck_assert_msg(waited >= BOUND_NS && waited < BOUND_NS + SLACK_NS,
		      "a held call waited %llu ms, its bound is %llu ms",
		      (unsigned long long)(waited / 1000000), (unsigned long long)(BOUND_NS / 1000000));
	ck_assert_uint_eq(ticket, 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
	/* Every slot taken (by a live thread that keeps it) rather than held. */
	low_gate_set_cap(g, 1, 0);
	while (!atomic_load(&lifter_tid))
		usleep(1000);
	held_slot = low_gate_enter(g, getpid(), atomic_load(&lifter_tid), 0);
	ck_assert_uint_ne(held_slot, 0);
	waited = timed_enter(&ticket);
	ck_assert_msg(waited < BOUND_NS + SLACK_NS, "a call waited %llu ms for a slot",
		      (unsigned long long)(waited / 1000000));
	ck_assert_uint_eq(ticket, 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 1); /* only the holder's */
	low_gate_exit(g, held_slot, 0);
	atomic_store(&lifter_done, true);
	pthread_join(t, NULL);
}
END_TEST

/*
 * A slot table that garbage filled (another process wrote the mapping) while the count in
 * flight admits the call: it goes without a slot, and gives its count back, rather than
 * search the table for ever.
 */
START_TEST(test_full_slot_table_no_spin)
{
	uint64_t live = (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)getpid();

	for (int i = 0; i < LOW_GATE_HOLDERS; i++)
		atomic_store(&g->holders[i], live); /* the main thread: alive */
	low_gate_set_cap(g, 1, 0);
	ck_assert_uint_eq(low_gate_enter(g, getpid(), self_tid(), BOUND_NS), 0);
	ck_assert_uint_eq(atomic_load(&g->inflight), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("low-gate");
	TCase *tc = tcase_create("gate");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_unlimited_passes);
	tcase_add_test(tc, test_nested_does_not_wait);
	tcase_add_test(tc, test_expired_lease_lifts_cap);
	tcase_add_test(tc, test_fork_child_held_then_released);
	tcase_add_test(tc, test_dead_holder_reclaimed);
	tcase_add_test(tc, test_stopped_holder_reclaimed);
	tcase_add_test(tc, test_cap_holds_under_races);
	tcase_add_test(tc, test_cap_holds_across_processes);
	tcase_add_test(tc, test_wait_bounded);
	tcase_add_test(tc, test_full_slot_table_no_spin);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
