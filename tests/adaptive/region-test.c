// SPDX-License-Identifier: MIT
/*
 * Description: no process of a tree can wedge, crash or blind another through the adaptive
 * tier's shared region (issue 25, cases 3, 4, 5, 7 and 8; docs/adaptive.md, "Nothing in the
 * region can wedge a process"). A worker runs under the shim with an absolute target and
 * IOTIER_LOW=bg-* (all its own I/O is low), its state file in a directory of the test's, and
 * in MODE:
 *   killed     a child exec'd into the tree with IOTIER_TEST_STEP=exit dies inside its first
 *              controller step, the seqlock odd; the worker's next low I/O must take the
 *              step over within the step lease, and the controller's view and the state
 *              file's adaptive_* lines must be there again.
 *   stopped    the child stops itself (SIGSTOP) inside its step; the worker, noting slow
 *              reads, must take the step over within the lease and go on to hold the low
 *              tier (cap 0, its lease renewed); the child, resumed, must leave the seqlock
 *              and the gate as they are.
 *   truncated  truncating the region's memfd through /proc/self/fd must fail (EPERM), and
 *              the next low I/O must not die of SIGBUS.
 *   garbled    random bytes over the region after its header (eight seeds, one forked child
 *              each): every low I/O must come through within the gate's bound and the shim
 *              must warn once, never hang.
 *   bound      the gate pinned at cap 0 for ever: a low write and a low pread must each be
 *              held no longer than IOTIER_GATE_WAIT's default, 20 ms (with scheduling slack).
 * Every wait is bounded; the worker has an alarm, so a hang fails rather than stalls.
 * Usage: region-test SHIM_PRELOAD MODE; the worker is this program with "worker MODE DIR".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adaptive/adaptive_view.h"
#include "adaptive_worker.h"
#include "cleanup.h"
#include "test_env.h"

#define MS 1000000ull
#define BOUND_NS (20 * MS)   /* IOTIER_GATE_WAIT's default */
#define SLACK_NS (250 * MS)  /* scheduling on a loaded machine */
#define PATIENCE_NS (10000 * MS)
#define ALARM_S 60
#define TEST_STEP_EXIT 70    /* adaptive_tree.c: a child that left inside its step */
#define SEEDS 8

static struct adaptive_region *region;
static const char *dir;
static int io_fd = -1;
static char block[4096];

/* One clock with the shim's stamps. */
#define now_ns adaptive_worker_now_ns

/* One low I/O: through the shim's gate, and a step when the window is due. */
static bool low_io(void)
{
	return pwrite(io_fd, block, sizeof(block), 0) == (ssize_t)sizeof(block);
}

/* Can another process's copy of the view be read (the seqlock even, the fields sane)? */
#define view_readable() adaptive_worker_view_readable(region)

/* Does this process's state file show the controller? */
static bool state_file_has_adaptive(void)
{
	char path[300], text[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d.state", dir, getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return strstr(text, "\nadaptive_windows ") != NULL;
}

/* ---- the modes ----------------------------------------------------------------------- */

/* Low I/O until @cond or PATIENCE_NS; the time it took, or 0 if it never held. */
#define IO_UNTIL(cond)                                                                     \
	({                                                                                 \
		uint64_t start_ = now_ns(), took_ = 0;                                     \
		while (!took_ && now_ns() - start_ < PATIENCE_NS) {                        \
			low_io();                                                          \
			if (cond)                                                          \
				took_ = now_ns() - start_ + 1;                             \
			usleep(1000);                                                      \
		}                                                                          \
		took_;                                                                     \
	})

static void mode_killed(const char *self)
{
	int stop[2], status;
	uint64_t took;
	pid_t child;

	if (!EXPECT(pipe(stop) == 0, "pipe: %m"))
		return;
	child = adaptive_worker_start_child(self, "exit", dir, stop[0]);
	EXPECT(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       WEXITSTATUS(status) == TEST_STEP_EXIT, "the child did not leave inside its step "
	       "(status %#x)", status);
	EXPECT(atomic_load(&region->seq) % 2 == 1, "the killed step left the seqlock even");
	took = IO_UNTIL(view_readable() && state_file_has_adaptive());
	EXPECT(took && took < STEPPER_LEASE_NS + ADAPTIVE_LEASE_NS + SLACK_NS,
	       "the controller's view (or the state file's adaptive_* lines) did not come back "
	       "after a stepper died inside its step (%llu ms; 0: not in 10 s; seq %u)",
	       (unsigned long long)(took / MS), atomic_load(&region->seq));
}

/* Slow reads for the window, then a low I/O: a held tier is where this must go. */
static bool slow_reads_and_io(void)
{
	for (int i = 0; i < 300; i++)
		adaptive_region_note_read_at(region, 0, 5 * MS);
	return low_io();
}

static void mode_stopped(const char *self)
{
	uint64_t windows, took, seq;
	int stop[2], status;
	pid_t child;

	if (!EXPECT(pipe(stop) == 0, "pipe: %m"))
		return;
	child = adaptive_worker_start_child(self, "stop", dir, stop[0]);
	if (!EXPECT(waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status),
		    "the child did not stop inside its step (status %#x)", status))
		return;
	windows = region->ctl.windows;
	took = IO_UNTIL(slow_reads_and_io() && region->ctl.windows > windows);
	EXPECT(took && took < STEPPER_LEASE_NS + SLACK_NS + 200 * MS,
	       "no other process took the step over from a stopped stepper (%llu ms; 0: not in "
	       "10 s)",
	       (unsigned long long)(took / MS));
	took = IO_UNTIL(slow_reads_and_io() && atomic_load(&region->gate.cap) == 0);
	EXPECT(took && atomic_load(&region->gate.lease_ns) > now_ns(),
	       "the tree did not go on to hold the low tier: cap %u, level %u",
	       atomic_load(&region->gate.cap), region->ctl.level);
	kill(child, SIGCONT);
	for (uint64_t until = now_ns() + 500 * MS; now_ns() < until; usleep(1000))
		slow_reads_and_io(); /* the child runs again meanwhile, and finds its step lost */
	EXPECT(write(stop[1], "x", 1) == 1, "write: %m");
	EXPECT(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0, "the resumed child: status %#x", status);
	seq = atomic_load(&region->seq);
	EXPECT(seq % 2 == 0 && view_readable(), "the seqlock is %llu after the stopped stepper "
	       "resumed", (unsigned long long)seq);
	EXPECT(atomic_load(&region->gate.cap) == 0, "the resumed stepper published its cap (%u)",
	       atomic_load(&region->gate.cap));
}

static int region_fd(void)
{
	for (int fd = 0; fd < 1024; fd++) {
		char path[64], link[128];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', !strncmp(link, ADAPTIVE_REGION_LINK,
						       strlen(ADAPTIVE_REGION_LINK))))
			return fd;
	}
	return -1;
}

static void mode_truncated(void)
{
	char path[64];
	int fd = region_fd(), other;

	if (!EXPECT(fd >= 0, "no descriptor on the region"))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	other = open(path, O_RDWR | O_CLOEXEC);
	if (!EXPECT(other >= 0, "open %s: %m", path))
		return;
	EXPECT(ftruncate(other, 0) == -1 && errno == EPERM, "the region's memfd could be "
	       "truncated (%m)");
	close(other);
	EXPECT(low_io() && low_io(), "a low I/O after the truncation: %m"); /* SIGBUS before */
	EXPECT(__atomic_load_n(&region->magic, __ATOMIC_RELAXED) == ADAPTIVE_REGION_MAGIC,
	       "the region is gone");
}

static void garble(unsigned seed)
{
	srandom(seed);
	for (size_t i = offsetof(struct adaptive_region, gate); i < sizeof(*region); i++)
		((unsigned char *)region)[i] = (unsigned char)random();
}

/* In a forked child: garble, then low I/O that must come through, each within its bound. */
static int garbled_child(unsigned seed)
{
	uint64_t start;

	alarm(ALARM_S / 4); /* a hang ends this child, not only its parent */
	garble(seed);
	start = now_ns();
	for (int i = 0; i < 20; i++)
		if (!low_io())
			return 2;
	return now_ns() - start < 20 * BOUND_NS + SLACK_NS ? 0 : 3;
}

static void mode_garbled(void)
{
	FILE *err = tmpfile();
	int saved = dup(2), lines = 0, status;
	char line[512];

	if (!EXPECT(err && saved >= 0 && dup2(fileno(err), 2) == 2, "stderr to a file: %m"))
		return;
	for (unsigned seed = 1; seed <= SEEDS; seed++) {
		pid_t child = fork();

		if (child == 0)
			_exit(garbled_child(seed));
		EXPECT(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		       WEXITSTATUS(status) == 0, "seed %u: status %#x", seed, status);
	}
	dup2(saved, 2);
	rewind(err);
	while (fgets(line, sizeof(line), err)) {
		fputs(line, stderr);
		lines += strstr(line, "corrupt") != NULL; /* not the cgroup's, say */
	}
	EXPECT(lines == 1, "%d warnings from the shim on garbled regions, not one", lines);
}

static _Atomic bool lift_done;

/* Opens the pinned gate after three seconds, so that a gate without a bound fails, not hangs. */
static void *lifter(void *arg)
{
	uint64_t until = now_ns() + 3000 * MS;

	(void)arg;
	while (!atomic_load(&lift_done) && now_ns() < until)
		usleep(1000);
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	return NULL;
}

static void mode_bound(void)
{
	uint64_t start, write_ns, read_ns;
	pthread_t t;

	atomic_store(&region->deadline_ns, UINT64_MAX); /* the controller stopped */
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	low_gate_set_cap(&region->gate, 0, 0);           /* held, for ever */
	if (!EXPECT(pthread_create(&t, NULL, lifter, NULL) == 0, "pthread_create"))
		return;
	start = now_ns();
	EXPECT(low_io(), "pwrite: %m");
	write_ns = now_ns() - start;
	start = now_ns();
	EXPECT(pread(io_fd, block, sizeof(block), 0) == (ssize_t)sizeof(block), "pread: %m");
	read_ns = now_ns() - start;
	atomic_store(&lift_done, true);
	pthread_join(t, NULL);
	EXPECT(write_ns >= BOUND_NS && write_ns < BOUND_NS + SLACK_NS &&
	       read_ns >= BOUND_NS && read_ns < BOUND_NS + SLACK_NS,
	       "held low calls waited %llu and %llu ms; the bound is %llu ms",
	       (unsigned long long)(write_ns / MS), (unsigned long long)(read_ns / MS),
	       (unsigned long long)(BOUND_NS / MS));
	EXPECT(atomic_load(&region->gate.cut_short) >= 2, "no call went at its bound");
}

static int worker(const char *self, const char *mode, const char *const *rest)
{
	char path[300];

	alarm(ALARM_S);
	prctl(PR_SET_NAME, "bg-worker", 0, 0, 0); /* every I/O of ours is low */
	region = adaptive_worker_region();
	if (!region)
		return test_fail("no %s mapping: is the shim preloaded?", ADAPTIVE_REGION_NAME);
	snprintf(path, sizeof(path), "%s/io-%d", dir, getpid());
	io_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (io_fd < 0)
		return test_fail("open %s: %m", path);
	if (!strcmp(mode, "child"))
		return adaptive_worker_child_loop(rest[0] ? atoi(rest[0]) : -1, low_io);
	if (!strcmp(mode, "killed"))
		mode_killed(self);
	else if (!strcmp(mode, "stopped"))
		mode_stopped(self);
	else if (!strcmp(mode, "truncated"))
		mode_truncated();
	else if (!strcmp(mode, "garbled"))
		mode_garbled();
	else if (!strcmp(mode, "bound"))
		mode_bound();
	else
		return test_fail("unknown mode %s", mode);
	return test_result();
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/iotier-region.XXXXXX", state_env[64];
	char *env[] = { state_env, NULL };
	const char *args[3];

	if (argc >= 4 && !strcmp(argv[1], "worker")) {
		dir = argv[3];
		return worker(argv[0], argv[2], (const char *const *)argv + 4);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: region-test SHIM_PRELOAD MODE\n");
		return T_EXIT_FAIL;
	}
	if (test_tmpdir(tmp) < 0 || adaptive_worker_kill_on_exit() < 0)
		return test_fail("setup: %m");
	snprintf(state_env, sizeof(state_env), "IOTIER_STATE_DIR=%s", tmp);
	args[0] = argv[2];
	args[1] = tmp;
	args[2] = NULL;
	return adaptive_worker_run(argv[0], argv[1], "read.p99<=1ms", env, args);
}
