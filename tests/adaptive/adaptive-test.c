// SPDX-License-Identifier: MIT
/*
 * Description: the adaptive tier end to end on a loop device. A worker runs under the shim
 * with IOTIER_LOW=bg-* and an unreachable target (read.p99<=10us): its main thread reads
 * 4 KiB with O_DIRECT (high, timed); three low threads write: bg-writer 1 MiB with O_DIRECT,
 * by pwrite and write() in turn, bg-vec 1 MiB with O_DIRECT writev (two iovecs), bg-buf
 * 1 MiB buffered write()s to a file in /dev/shm, so that the shim's writeback push follows
 * each. While the reader reads, the controller must cut the low tier down to held: the
 * writer's requests are split, the pushes go through the gate, and then every low thread
 * waits at the gate (its thread is found asleep in futex). When the reader stops, the low
 * tier must be released (no cap, no split) and every low thread must move again. Judged by
 * the states and counts in the shim's shared region, which the worker finds in its own
 * /proc/self/maps; no timing is asserted, every wait is bounded generously. The shim's
 * state file (in a directory of the test's own) must then show the controller's windows and
 * misses too.
 * Usage: adaptive-test SHIM_PRELOAD; the worker is this program with "worker DEVICE".
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "cleanup.h"
#include "loopdev.h"
#include "test_env.h"

#define WRITE_SIZE (1u << 20)
#define READ_SIZE 4096u
#define READ_SPAN (64ull << 20)  /* reads in the first 64 MiB ... */
#define WRITE_SPAN (128ull << 20) /* ... writes in the next 128 */
#define PATIENCE_S 60             /* far longer than any state change here needs */

static _Atomic int stop_writer;
static int dev_fd = -1;

/* The low threads: what each has done, and its thread id, to see where it sleeps. */
enum { LOW_WRITER, LOW_VEC, LOW_BUF, LOW_THREADS };
static const char *const low_names[LOW_THREADS] = { "bg-writer", "bg-vec", "bg-buf" };
static _Atomic uint64_t low_ops[LOW_THREADS];
static _Atomic pid_t low_tids[LOW_THREADS];
static const char *dev_path, *buf_path;

/* ---- the worker, under the shim ---------------------------------------------------- */

static void low_thread_start(int which)
{
	prctl(PR_SET_NAME, low_names[which], 0, 0, 0);
	atomic_store(&low_tids[which], (pid_t)syscall(SYS_gettid));
}

/* O_DIRECT 1 MiB writes in the first half of the write span: pwrite and write() in turn. */
static void *writer(void *arg)
{
	char *buf = arg;
	uint64_t off = 0;
	ssize_t n;

	low_thread_start(LOW_WRITER);
	while (!atomic_load(&stop_writer)) {
		off_t at = (off_t)(READ_SPAN + off);

		if (atomic_load(&low_ops[LOW_WRITER]) % 2)
			n = lseek(dev_fd, at, SEEK_SET) == at ? write(dev_fd, buf, WRITE_SIZE) : -1;
		else
			n = pwrite(dev_fd, buf, WRITE_SIZE, at);
		if (!EXPECT(n == WRITE_SIZE, "bg-writer: write: %m"))
			break;
		low_ops[LOW_WRITER]++;
		off = (off + WRITE_SIZE) % (WRITE_SPAN / 2);
	}
	return NULL;
}

/* O_DIRECT 1 MiB writevs of two halves, on an fd of its own, in the second half. */
static void *vec_writer(void *arg)
{
	char *buf = arg;
	struct iovec iov[2] = { { buf, WRITE_SIZE / 2 }, { buf + WRITE_SIZE / 2, WRITE_SIZE / 2 } };
	int fd = open(dev_path, O_WRONLY | O_DIRECT);
	uint64_t off = 0;

	low_thread_start(LOW_VEC);
	while (EXPECT(fd >= 0, "bg-vec: open %s: %m", dev_path) && !atomic_load(&stop_writer)) {
		off_t at = (off_t)(READ_SPAN + WRITE_SPAN / 2 + off);

		if (!EXPECT(lseek(fd, at, SEEK_SET) == at && writev(fd, iov, 2) == WRITE_SIZE,
			    "bg-vec: writev: %m"))
			break;
		low_ops[LOW_VEC]++;
		off = (off + WRITE_SIZE) % (WRITE_SPAN / 2);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Buffered 1 MiB write()s to a file in memory, rewound every 16 MiB: each one is pushed. */
static void *buf_writer(void *arg)
{
	char *buf = arg;
	int fd = open(buf_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	low_thread_start(LOW_BUF);
	while (EXPECT(fd >= 0, "bg-buf: open %s: %m", buf_path) && !atomic_load(&stop_writer)) {
		if (!EXPECT(write(fd, buf, WRITE_SIZE) == WRITE_SIZE, "bg-buf: write: %m"))
			break;
		if (++low_ops[LOW_BUF] % 16 == 0)
			lseek(fd, 0, SEEK_SET);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Is thread @tid of this process asleep in futex (a low thread waiting at the gate)? */
static bool all_low_waiting(void)
{
	for (int i = 0; i < LOW_THREADS; i++)
		if (!adaptive_worker_in_futex(atomic_load(&low_tids[i])))
			return false;
	return true;
}

/* The whole tier is held: cap 0, after splits, pushes and waits, every low thread asleep. */
static bool held(struct adaptive_region *r)
{
	return atomic_load(&r->gate.cap) == 0 && atomic_load(&r->splits) > 0 &&
	       atomic_load(&r->pushes) > 0 && atomic_load(&r->gate.waits) > 0 &&
	       all_low_waiting();
}

static uint64_t elapsed_s(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec);
}

/* Read until the low tier is held (cap 0) after splits and waits, or PATIENCE_S. */
static void read_until_held(struct adaptive_region *r, char *buf)
{
	struct timespec start;
	uint64_t reads = 0, x = 1;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_s(&start) < PATIENCE_S) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (!EXPECT(pread(dev_fd, buf, READ_SIZE, (off_t)((x >> 33) %
				(READ_SPAN / READ_SIZE) * READ_SIZE)) == READ_SIZE, "reader: pread: %m"))
			return;
		/* /proc is read only once the cap is 0, and then every 64 reads. */
		if (++reads % 64 == 0 && held(r))
			break;
	}
	fprintf(stderr, "reads: %llu; level %u, cap %u, misses %llu, splits %llu, pushes %llu, "
		"waits %llu\n", (unsigned long long)reads, r->ctl.level, atomic_load(&r->gate.cap),
		(unsigned long long)r->ctl.misses, (unsigned long long)atomic_load(&r->splits),
		(unsigned long long)atomic_load(&r->pushes),
		(unsigned long long)atomic_load(&r->gate.waits));
	EXPECT(atomic_load(&r->gate.cap) == 0, "the low tier was not held under an unreachable "
	       "target (cap %u)", atomic_load(&r->gate.cap));
	EXPECT(atomic_load(&r->splits) > 0, "no low write was split");
	EXPECT(atomic_load(&r->pushes) > 0, "no writeback push went through the gate");
	EXPECT(atomic_load(&r->gate.waits) > 0, "no low write waited at the gate");
	for (int i = 0; i < LOW_THREADS; i++)
		EXPECT(adaptive_worker_in_futex(atomic_load(&low_tids[i])), "%s is not waiting at the gate while "
		       "the low tier is held", low_names[i]);
	EXPECT(r->ctl.misses > 0, "no window missed");
}

static bool all_moved(const uint64_t *before)
{
	for (int i = 0; i < LOW_THREADS; i++)
		if (atomic_load(&low_ops[i]) < before[i] + 8)
			return false;
	return true;
}

/* Reader stopped: the cap must go and the writer must move again. */
static void expect_release(struct adaptive_region *r)
{
	struct timespec start;
	uint64_t before[LOW_THREADS];

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_s(&start) < PATIENCE_S &&
	       !(atomic_load(&r->gate.cap) == LOW_GATE_UNLIMITED &&
		 r->ctl.level == ADAPTIVE_LEVEL_FULL))
		usleep(10000);
	EXPECT(r->ctl.level == ADAPTIVE_LEVEL_FULL, "not released after the reader stopped: "
	       "level %u", r->ctl.level);
	EXPECT(atomic_load(&r->gate.cap) == LOW_GATE_UNLIMITED, "the gate still has cap %u",
	       atomic_load(&r->gate.cap));
	EXPECT(atomic_load(&r->chunk) == ADAPTIVE_UNLIMITED, "writes still split at %u",
	       atomic_load(&r->chunk));
	for (int i = 0; i < LOW_THREADS; i++)
		before[i] = atomic_load(&low_ops[i]);
	while (elapsed_s(&start) < 2 * PATIENCE_S && !all_moved(before))
		usleep(10000);
	for (int i = 0; i < LOW_THREADS; i++)
		EXPECT(atomic_load(&low_ops[i]) >= before[i] + 8, "%s did not move after the "
		       "release", low_names[i]);
	fprintf(stderr, "released: level %u, windows %llu, held %llu ms, writes %llu/%llu/%llu\n",
		r->ctl.level, (unsigned long long)r->ctl.windows,
		(unsigned long long)(r->ctl.held_ns / 1000000),
		(unsigned long long)atomic_load(&low_ops[0]),
		(unsigned long long)atomic_load(&low_ops[1]),
		(unsigned long long)atomic_load(&low_ops[2]));
}

/* The stepper republishes its state file: the misses must reach it (docs/operations.md). */
static void expect_published(void)
{
	char path[PATH_MAX], line[128];
	unsigned long long windows = 0, misses = 0;
	struct timespec start;

	snprintf(path, sizeof(path), "%s/%d.state", getenv("IOTIER_STATE_DIR"), (int)getpid());
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_s(&start) < PATIENCE_S && !(windows && misses)) {
		FILE *f = fopen(path, "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "adaptive_windows %llu", &windows) != 1)
				sscanf(line, "adaptive_misses %llu", &misses);
		if (f)
			fclose(f);
		usleep(10000);
	}
	EXPECT(windows > 0 && misses > 0, "%s does not show the controller's windows (%llu) and "
	       "misses (%llu)", path, windows, misses);
}

static int worker(void)
{
	void *(*const bodies[LOW_THREADS])(void *) = { writer, vec_writer, buf_writer };
	struct adaptive_region *r = adaptive_worker_region();
	pthread_t t[LOW_THREADS];
	char *rbuf, *wbuf;

	if (!r) {
		fprintf(stderr, "FAIL: no %s mapping: is the shim preloaded with a target?\n",
			ADAPTIVE_REGION_NAME);
		return T_EXIT_FAIL;
	}
	dev_fd = open(dev_path, O_RDWR | O_DIRECT);
	if (dev_fd < 0 || posix_memalign((void **)&rbuf, 4096, READ_SIZE) ||
	    posix_memalign((void **)&wbuf, 4096, WRITE_SIZE)) {
		perror(dev_path);
		return T_EXIT_FAIL;
	}
	memset(wbuf, 0x5a, WRITE_SIZE);
	for (int i = 0; i < LOW_THREADS; i++)
		if (pthread_create(&t[i], NULL, bodies[i], wbuf) != 0)
			return T_EXIT_FAIL;
	read_until_held(r, rbuf);
	expect_release(r);
	expect_published();
	atomic_store(&stop_writer, 1);
	for (int i = 0; i < LOW_THREADS; i++)
		pthread_join(t[i], NULL);
	close(dev_fd);
	return test_result();
}

/* ---- the orchestrator ------------------------------------------------------------- */

static struct loopdev dev = { .index = -1 };
static char state_dir[] = "/tmp/iotier-adaptive-state.XXXXXX";
static volatile pid_t child;
static char scratch_path[64]; /* bg-buf's file: in memory, not on a shared disk */

/* However the test ends (a failure, meson's timeout): no worker left, no loop device. */
static void kill_worker(void *arg)
{
	(void)arg;
	if (child > 0)
		kill(child, SIGKILL);
}

static void destroy_loopdev(void *arg)
{
	loopdev_destroy(arg);
}

static void remove_scratch(void *arg)
{
	(void)arg;
	if (scratch_path[0])
		unlink(scratch_path);
}

/* An empty file for bg-buf, in /dev/shm where there is one. 0, or -1 with errno. */
static int make_scratch(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	int fd;

	snprintf(scratch_path, sizeof(scratch_path), "%s/iotier-adaptive-XXXXXX", dir);
	fd = mkstemp(scratch_path);
	if (fd < 0) {
		scratch_path[0] = '\0';
		return -1;
	}
	close(fd);
	return 0;
}

static int run_worker(const char *self, const char *preload)
{
	int status;

	child = fork();
	if (child < 0)
		return T_EXIT_FAIL;
	if (child == 0) {
		setenv("LD_PRELOAD", preload, 1);
		setenv("IOTIER_LOW", "bg-*", 1);
		setenv("IOTIER_TARGET", "read.p99<=10us", 1);
		setenv("IOTIER_LOG", "warn", 1);
		setenv("IOTIER_STATE_DIR", state_dir, 1);
		execl(self, self, "worker", dev.path, scratch_path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return T_EXIT_FAIL;
	child = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : T_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 4 && !strcmp(argv[1], "worker")) {
		dev_path = argv[2];
		buf_path = argv[3];
		return worker();
	}
	if (argc != 2) {
		fprintf(stderr, "usage: adaptive-test SHIM_PRELOAD\n");
		return T_EXIT_FAIL;
	}
	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	if (test_cleanup_add(destroy_loopdev, &dev) < 0 || test_cleanup_add(kill_worker, NULL) < 0 ||
	    test_cleanup_add(remove_scratch, NULL) < 0 || make_scratch() < 0 ||
	    test_tmpdir(state_dir) < 0)
		return T_EXIT_FAIL;
	/* A shallow queue, as in issue 12's rig: reads wait behind the writes in flight. */
	ret = loopdev_create(&dev, NULL, READ_SPAN + WRITE_SPAN, "mq-deadline", 4);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO)
		return test_skip("cannot create a loop device");
	if (ret < 0) {
		fprintf(stderr, "loop device: %s\n", strerror(-ret));
		return T_EXIT_FAIL;
	}
	ret = run_worker(argv[0], argv[1]);
	loopdev_destroy(&dev);
	remove_scratch(NULL);
	return ret;
}
