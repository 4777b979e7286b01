// SPDX-License-Identifier: MIT
/*
 * Description: nothing heavy on the foreground's path, and no stepper or holder that is
 * stopped or killed wedges the others (issue 23, item 6; docs/adaptive.md, "One tree"). A
 * worker runs under the shim with an absolute target and IOTIER_LOW=bg-*, and in MODE:
 *   foreground  a high reader reads a file without pause while a low writer writes every
 *               2 ms, for 1.5 s, with IOTIER_TEST_STEP=no-high: a step run by a thread the
 *               gate does not hold ends the worker with status 71. The controller must step
 *               (windows advance) and the reader never. Before, the reader's read stepped
 *               whenever it found the window due first: nearly every window.
 *   takeover    a child of the tree stops itself (SIGSTOP) inside its first step, a second
 *               dies inside its own (after taking the step over from the first); the worker
 *               then notes slow reads and does low I/O while a high thread of its own reads
 *               (IOTIER_TEST_STEP=no-high, as above): its level must change within 1 s of
 *               the second child's death and three times more, each within 1 s, and the
 *               first child, resumed, must leave the seqlock even. (The takeover itself
 *               predates issue 23; before it, this failed on the reader's steps.)
 *   lapsed      the worker's slow reads drive the tier to held (cap 0), then nothing calls
 *               for longer than the cap's lease; with the reader back (slow, a read in
 *               flight), the first low write must wait at the gate: the step that renews the
 *               cap runs before its admission. Before, it went at full on the lapsed lease,
 *               and the step came after it.
 *   holder-stopped  under cap 1 (the controller stopped), a child holding the one slot stops
 *               itself; a low write of the worker must be admitted with a slot (not at its
 *               5 s bound) within HOLDER_BOUND_NS; the child, resumed, must release
 *               nothing it no longer holds (the count in flight back at 0, not wrapped).
 *               Before, a stopped holder exists for tgkill, so its slot was never taken back.
 *   holder-killed   the same with the holder killed (SIGKILL) and left unreaped: a zombie.
 *   idle        the tier pinned at cap 0; over TRIALS trials a low writer is held while a
 *               high reader reads, then the reader stops: the median time from its last
 *               read to the writer going at full must be under IDLE_BOUND_NS. Before, a held
 *               waiter noticed the idle reader at the end of a 50 ms wait slice (median ~40 ms here).
 * Every wait is bounded; the worker has an alarm, so a hang fails rather than stalls.
 * Usage: stepper-test SHIM_PRELOAD MODE; the worker is this program with "worker MODE DIR".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adaptive/adaptive_view.h"
#include "adaptive_worker.h"
#include "cleanup.h"
#include "test_env.h"

#define MS 1000000ull
#define ALARM_S 60
#define TEST_STEP_EXIT 70     /* adaptive_tree.c: a child that left inside its step */
#define TEST_STEP_HIGH 71     /* adaptive_tree.c: a high thread ran a step */
#define PATIENCE_NS (10000 * MS)
#define FOREGROUND_NS (2000 * MS)
#define CHANGE_BOUND_NS (1000 * MS)
#define HOLDER_BOUND_NS (500 * MS) /* a wait slice (50 ms) and a loaded machine's slack */
#define GATE_WAIT "5s"             /* the workers' bound: far above HOLDER_BOUND_NS */
#define IDLE_BOUND_NS (5 * MS)
#define TRIALS 9

static struct adaptive_region *region;
static const char *dir;
static int io_fd = -1;
static char block[4096];

/* One clock with the shim's stamps. */
#define now_ns adaptive_worker_now_ns

static bool low_io(void)
{
	return pwrite(io_fd, block, sizeof(block), 0) == (ssize_t)sizeof(block);
}

/* Can another process's copy of the view be read (the seqlock even, the fields sane)? */
#define view_readable() adaptive_worker_view_readable(region)

/* ---- foreground: the reader never steps ---------------------------------------------- */

static _Atomic bool stop_threads;

static void *steady_reader(void *arg)
{
	char buf[4096];

	(void)arg;
	prctl(PR_SET_NAME, "fg-reader", 0, 0, 0);
	while (!atomic_load(&stop_threads))
		if (pread(io_fd, buf, sizeof(buf), 0) < 0)
			break;
	return NULL;
}

static void *paced_writer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	while (!atomic_load(&stop_threads) && low_io())
		usleep(2000);
	return NULL;
}

static void mode_foreground(void)
{
	uint64_t windows = region->ctl.windows, until = now_ns() + FOREGROUND_NS;
	pthread_t r, w;

	if (!EXPECT(pthread_create(&r, NULL, steady_reader, NULL) == 0, "pthread_create"))
		return;
	if (!EXPECT(pthread_create(&w, NULL, paced_writer, NULL) == 0, "pthread_create"))
		return;
	while (now_ns() < until)
		usleep(10000);
	atomic_store(&stop_threads, true);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	/* Reaching here is the point: a step by the reader would have ended the process. */
	EXPECT(region->ctl.windows >= windows + 3, "the controller stepped %llu times in %llu ms",
	       (unsigned long long)(region->ctl.windows - windows),
	       (unsigned long long)(FOREGROUND_NS / MS));
}

/* ---- takeover: a stopped and a killed stepper --------------------------------------- */

/* Slow reads for the window, then a low I/O: the level goes down, window by window. */
static void slow_reads_and_io(void)
{
	for (int i = 0; i < 300; i++)
		adaptive_region_note_read_at(region, 0, 5 * MS);
	low_io();
	usleep(1000);
}

/* The time until level_changes passes @from, doing slow_reads_and_io; 0: not in @bound. */
static uint64_t until_change(uint64_t from, uint64_t bound)
{
	uint64_t start = now_ns();

	while (now_ns() - start < bound) {
		slow_reads_and_io();
		if (atomic_load(&region->level_changes) > from)
			return now_ns() - start + 1;
	}
	return 0;
}

static void mode_takeover(const char *self)
{
	int stop[2], status;
	pid_t stopped, killed, got;
	uint64_t took, changes;
	pthread_t reader;

	if (!EXPECT(pipe(stop) == 0, "pipe: %m"))
		return;
	stopped = adaptive_worker_start_child(self, "stop", dir, stop[0]);
	if (!EXPECT(waitpid(stopped, &status, WUNTRACED) == stopped && WIFSTOPPED(status),
		    "the first child did not stop inside its step (status %#x)", status))
		return;
	killed = adaptive_worker_start_child(self, "exit", dir, stop[0]);
	EXPECT(waitpid(killed, &status, 0) == killed && WIFEXITED(status) &&
	       WEXITSTATUS(status) == TEST_STEP_EXIT, "the second child did not die inside its "
	       "step (status %#x)", status);
	EXPECT(atomic_load(&region->seq) % 2 == 1, "the killed step left the seqlock even");
	/* The worker's own foreground reads on: its low thread (this one) must do the steps. */
	if (!EXPECT(pthread_create(&reader, NULL, steady_reader, NULL) == 0, "pthread_create"))
		return;
	changes = atomic_load(&region->level_changes);
	took = until_change(changes, CHANGE_BOUND_NS);
	EXPECT(took, "no level change within %llu ms after a stepper stopped and another died "
	       "inside their steps (windows %llu, seq %u)",
	       (unsigned long long)(CHANGE_BOUND_NS / MS),
	       (unsigned long long)region->ctl.windows, atomic_load(&region->seq));
	for (int i = 0; took && i < 3; i++) {
		changes = atomic_load(&region->level_changes);
		took = until_change(changes, CHANGE_BOUND_NS);
		EXPECT(took, "the level stopped changing after %d more changes (level %u)", i,
		       region->ctl.level);
	}
	kill(stopped, SIGCONT);
	for (uint64_t until = now_ns() + 300 * MS; now_ns() < until;)
		slow_reads_and_io(); /* the first child runs again, and finds its step lost */
	atomic_store(&stop_threads, true);
	pthread_join(reader, NULL);
	EXPECT(write(stop[1], "x", 1) == 1, "write: %m");
	status = 0;
	got = waitpid(stopped, &status, 0);
	EXPECT(got == stopped && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the resumed child: waitpid %d (%m), status %#x", (int)got, status);
	EXPECT(atomic_load(&region->seq) % 2 == 0 && view_readable(),
	       "the seqlock is %u after the stopped stepper resumed", atomic_load(&region->seq));
}

/* ---- lapsed: the step comes before the admission ------------------------------------ */

static void mode_lapsed(void)
{
	uint64_t until = now_ns() + PATIENCE_NS, waits;

	while (atomic_load(&region->gate.cap) != 0 && now_ns() < until)
		slow_reads_and_io();
	if (!EXPECT(atomic_load(&region->gate.cap) == 0, "the controller did not hold the tier"))
		return;
	usleep(ADAPTIVE_LEASE_NS / 1000 + 200000); /* a quiet spell: the cap's lease lapses */
	if (!EXPECT(atomic_load(&region->gate.lease_ns) < now_ns(), "the lease did not lapse"))
		return;
	/* The reader is back, slow (a read in flight): the burst's first write must be held. */
	for (int i = 0; i < 300; i++)
		adaptive_region_note_read_at(region, 0, 5 * MS);
	for (uint32_t d = 0; d < ADAPTIVE_FG_SLOTS; d++) /* on whichever device it writes */
		adaptive_region_fg_begin(region, d, now_ns());
	waits = atomic_load(&region->gate.waits);
	EXPECT(low_io(), "pwrite: %m");
	for (uint32_t d = 0; d < ADAPTIVE_FG_SLOTS; d++)
		adaptive_region_fg_end(region, d, 0);
	EXPECT(atomic_load(&region->gate.waits) == waits + 1, "the first low write after the "
	       "cap's lease lapsed went at full: the step that renews the cap came after it");
}

/* ---- holders: a stopped or killed holder of the only slot ---------------------------- */

/* The state letter of process @pid (/proc/PID/stat); 0 if unreadable. */
static char proc_state(pid_t pid)
{
	char path[64], text[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strrchr(text, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* A forked child: take the one slot, say so, stop (or wait to be killed), then release. */
static void holder_child(int report_fd)
{
	uint32_t ticket = low_gate_enter(&region->gate, getpid(), (pid_t)syscall(SYS_gettid),
					 UINT64_MAX);

	if (write(report_fd, &ticket, sizeof(ticket)) != sizeof(ticket))
		_exit(3);
	raise(SIGSTOP);
	low_gate_exit(&region->gate, ticket, 0); /* taken back meanwhile: must change nothing */
	_exit(0);
}

static void mode_holder(bool killed)
{
	uint64_t start, took, reclaimed, cut_short;
	int report[2], status;
	uint32_t ticket = 0;
	pid_t child;

	atomic_store(&region->deadline_ns, UINT64_MAX); /* the controller stopped: cap stays */
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	low_gate_set_cap(&region->gate, 1, 0);
	if (!EXPECT(pipe(report) == 0, "pipe: %m"))
		return;
	child = fork();
	if (child == 0)
		holder_child(report[1]);
	EXPECT(read(report[0], &ticket, sizeof(ticket)) == sizeof(ticket) && ticket,
	       "the holder got no slot");
	EXPECT(waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status),
	       "the holder did not stop (status %#x)", status);
	if (killed)
		kill(child, SIGKILL); /* and not reaped: a zombie holds the slot */
	for (uint64_t until = now_ns() + 1000 * MS; killed && now_ns() < until; usleep(1000))
		if (proc_state(child) == 'Z')
			break;
	EXPECT(atomic_load(&region->gate.inflight) == 1, "the holder's slot is not taken");
	reclaimed = atomic_load(&region->gate.reclaimed);
	cut_short = atomic_load(&region->gate.cut_short);
	start = now_ns();
	EXPECT(low_io(), "pwrite: %m");
	took = now_ns() - start;
	EXPECT(took < HOLDER_BOUND_NS && atomic_load(&region->gate.cut_short) == cut_short &&
	       atomic_load(&region->gate.reclaimed) == reclaimed + 1,
	       "a low write waited %llu ms behind a %s holder of the only slot (bound %llu ms; "
	       "%llu went at their wait's bound, %llu slots taken back)",
	       (unsigned long long)(took / MS), killed ? "killed, unreaped" : "stopped",
	       (unsigned long long)(HOLDER_BOUND_NS / MS),
	       (unsigned long long)(atomic_load(&region->gate.cut_short) - cut_short),
	       (unsigned long long)(atomic_load(&region->gate.reclaimed) - reclaimed));
	if (!killed)
		kill(child, SIGCONT);
	EXPECT(waitpid(child, &status, 0) == child && (killed || (WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0)), "the holder: status %#x", status);
	EXPECT(atomic_load(&region->gate.inflight) == 0, "%u in flight after the holder left "
	       "(a resumed holder released a slot taken back from it)",
	       atomic_load(&region->gate.inflight));
}

/* ---- idle: a held writer goes at full within a few ms of the reader's last read ------ */

static _Atomic bool reading;
static _Atomic uint64_t last_read_end;
static _Atomic pid_t writer_tid;
static _Atomic uint64_t write_done;

static void *trial_reader(void *arg)
{
	char buf[4096];

	(void)arg;
	prctl(PR_SET_NAME, "fg-reader", 0, 0, 0);
	while (!atomic_load(&stop_threads)) {
		if (!atomic_load(&reading)) {
			usleep(200);
			continue;
		}
		if (pread(io_fd, buf, sizeof(buf), 0) < 0)
			break;
		atomic_store(&last_read_end, now_ns());
		usleep(100);
	}
	return NULL;
}

/* One held write per trial: the worker starts it by zeroing write_done. */
static void *trial_writer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	atomic_store(&writer_tid, (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&stop_threads)) {
		if (atomic_load(&write_done)) {
			usleep(200);
			continue;
		}
		low_io();
		atomic_store(&write_done, now_ns());
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One trial: the latency from the reader's last read to the held write going; 0: failed;
 * UINT64_MAX: the write was not held (the reader fell idle under it), to be tried again.
 */
static uint64_t idle_trial(unsigned i)
{
	uint64_t until, stopped, stop_at;

	atomic_store(&reading, true);
	usleep(30000); /* the reader's gap settles: max(2 x gap, 1 ms) is 1 ms */
	atomic_store(&write_done, 0);
	for (until = now_ns() + 1000 * MS; now_ns() < until; usleep(500))
		if (adaptive_worker_in_futex(atomic_load(&writer_tid)))
			break;
	/* The reader preempted for over 1 ms is idle too (a loaded machine): try again. */
	if (atomic_load(&write_done))
		return UINT64_MAX;
	usleep(1000 * (i * 7 % 20)); /* the reader stops at some point of a wait */
	atomic_store(&reading, false);
	stop_at = now_ns();
	usleep(1000); /* its last read has returned by now */
	stopped = atomic_load(&last_read_end);
	for (until = now_ns() + 1000 * MS; now_ns() < until && !atomic_load(&write_done);)
		usleep(100);
	if (atomic_load(&write_done) && atomic_load(&write_done) < stop_at)
		return UINT64_MAX; /* it went while the reader was preempted: idle then too */
	if (!EXPECT(atomic_load(&write_done) > stopped, "trial %u: the held write did not go "
		    "within 1 s of the reader's last read", i))
		return 0;
	return atomic_load(&write_done) - stopped;
}

static void mode_idle(void)
{
	uint64_t took[TRIALS], full = atomic_load(&region->fast_full);
	pthread_t r, w;
	unsigned n = 0;

	atomic_store(&region->deadline_ns, UINT64_MAX); /* the controller stopped: cap stays */
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	low_gate_set_cap(&region->gate, 0, 0);
	atomic_store(&write_done, 1);
	if (!EXPECT(pthread_create(&r, NULL, trial_reader, NULL) == 0, "pthread_create") ||
	    !EXPECT(pthread_create(&w, NULL, trial_writer, NULL) == 0, "pthread_create"))
		return;
	while (!atomic_load(&writer_tid))
		usleep(100);
	for (unsigned i = 0, tries = 0; n < TRIALS && tries < 4 * TRIALS; i++, tries++) {
		uint64_t t = idle_trial(i);

		if (!t)
			break;
		if (t != UINT64_MAX)
			took[n++] = t;
	}
	EXPECT(n == TRIALS, "%u of %u trials found the writer held", n, TRIALS);
	atomic_store(&stop_threads, true);
	atomic_store(&write_done, 1);
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	if (n < TRIALS)
		return;
	qsort(took, n, sizeof(took[0]), cmp_u64);
	fprintf(stderr, "held writer at full after the reader's last read: median %.2f ms, "
		"min %.2f, max %.2f\n", (double)took[n / 2] / MS, (double)took[0] / MS,
		(double)took[n - 1] / MS);
	EXPECT(took[n / 2] < IDLE_BOUND_NS, "the median is %.2f ms, not under %llu ms",
	       (double)took[n / 2] / MS, (unsigned long long)(IDLE_BOUND_NS / MS));
	EXPECT(atomic_load(&region->fast_full) >= full + n, "the writes did not go by the "
	       "fast path");
}

/* ---- the worker and the driver ------------------------------------------------------- */

static int worker(const char *self, const char *mode, const char *const *rest)
{
	char path[300];

	alarm(ALARM_S);
	region = adaptive_worker_region();
	if (!region)
		return test_fail("no %s mapping: is the shim preloaded?", ADAPTIVE_REGION_NAME);
	snprintf(path, sizeof(path), "%s/io-%d", dir, getpid());
	io_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	/* Sized, not written: a high thread's write would make it a shared file, never held. */
	if (io_fd < 0 || ftruncate(io_fd, sizeof(block)) != 0)
		return test_fail("open %s: %m", path);
	if (!strcmp(mode, "child"))
		return adaptive_worker_child_loop(rest[0] ? atoi(rest[0]) : -1, low_io);
	/* The main thread is low, but for the modes whose reader is a thread of its own. */
	if (strcmp(mode, "foreground") && strcmp(mode, "idle"))
		prctl(PR_SET_NAME, "bg-worker", 0, 0, 0);
	if (!strcmp(mode, "foreground"))
		mode_foreground();
	else if (!strcmp(mode, "takeover"))
		mode_takeover(self);
	else if (!strcmp(mode, "holder-stopped"))
		mode_holder(false);
	else if (!strcmp(mode, "holder-killed"))
		mode_holder(true);
	else if (!strcmp(mode, "idle"))
		mode_idle();
	else if (!strcmp(mode, "lapsed"))
		mode_lapsed();
	else
		return test_fail("unknown mode %s", mode);
	return test_result();
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/iotier-stepper.XXXXXX", state_env[64];
	char hook_env[] = "IOTIER_TEST_STEP=no-high", wait_env[] = "IOTIER_GATE_WAIT=" GATE_WAIT;
	char *env[] = { state_env, wait_env, NULL, NULL };
	const char *args[3];
	int status;

	if (argc >= 4 && !strcmp(argv[1], "worker")) {
		dir = argv[3];
		return worker(argv[0], argv[2], (const char *const *)argv + 4);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: stepper-test SHIM_PRELOAD MODE\n");
		return T_EXIT_FAIL;
	}
	if (test_tmpdir(tmp) < 0 || adaptive_worker_kill_on_exit() < 0)
		return test_fail("setup: %m");
	snprintf(state_env, sizeof(state_env), "IOTIER_STATE_DIR=%s", tmp);
	if (!strcmp(argv[2], "foreground") || !strcmp(argv[2], "takeover"))
		env[2] = hook_env;
	args[0] = argv[2];
	args[1] = tmp;
	args[2] = NULL;
	status = adaptive_worker_run(argv[0], argv[1], "read.p99<=1ms", env, args);
	if (status == TEST_STEP_HIGH)
		return test_fail("a thread that is not low ran a controller step (status %d)",
				 status);
	return status;
}
