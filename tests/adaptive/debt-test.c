// SPDX-License-Identifier: MIT
/*
 * Description: the adaptive tier end to end on a loop device. A worker runs under the shim
 * with IOTIER_LOW=bg-* and an unreachable target (read.p99<=10us): its main thread reads
 * 4 KiB with O_DIRECT (high, timed), its bg-writer thread writes 1 MiB with O_DIRECT (low).
 * While the reader reads, the controller must cut the low tier down to held: the writer's
 * requests are split and then wait at the gate. When the reader stops, the low tier must be
 * released (no cap, no split) and the writer must move again. Judged by the states and
 * counts in the shim's shared region, which the worker finds in its own /proc/self/maps;
 * no timing is asserted, every wait is bounded generously.
 *
 * The debt guard (MODE debt*): once the low tier is held, a "database" thread appends lines
 * to a LOG file the worker opened for writing. With IOTIER_DEBT_LOG='*' + '/LOG' and RocksDB's
 * "Stalling writes" lines, the controller must count debt lifts, lift the cap and let the
 * writer move, and hold again once the lines stop; without the glob (debt-no-glob) or with
 * other lines (debt-no-line) nothing changes: no debt lift, the low tier stays held.
 * Usage: adaptive-test SHIM_PRELOAD [MODE]; the worker is this program with
 * "worker DEVICE MODE [LOGDIR]".
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
#include <time.h>
#include <unistd.h>

#include "adaptive_region.h"
#include "cleanup.h"
#include "loopdev.h"
#include "test_env.h"

#define WRITE_SIZE (1u << 20)
#define READ_SIZE 4096u
#define READ_SPAN (64ull << 20)  /* reads in the first 64 MiB ... */
#define WRITE_SPAN (128ull << 20) /* ... writes in the next 128 */
#define PATIENCE_S 60             /* far longer than any state change here needs */

static _Atomic int stop_writer, stop_db;
static _Atomic uint64_t writes;
static int dev_fd = -1;

/* ---- the worker, under the shim ---------------------------------------------------- */

static struct adaptive_region *find_region(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	void *found = NULL;

	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "/memfd:" ADAPTIVE_REGION_NAME)) {
			found = (void *)strtoull(line, NULL, 16);
			break;
		}
	if (maps)
		fclose(maps);
	return found;
}

static void *writer(void *arg)
{
	char *buf = arg;
	uint64_t off = 0;

	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	while (!atomic_load(&stop_writer)) {
		if (!EXPECT(pwrite(dev_fd, buf, WRITE_SIZE, (off_t)(READ_SPAN + off)) == WRITE_SIZE,
			    "bg-writer: pwrite: %m"))
			break;
		writes++;
		off = (off + WRITE_SIZE) % WRITE_SPAN;
	}
	return NULL;
}

static uint64_t elapsed_s(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec);
}

/* Keep reading until @done(r) or PATIENCE_S; returns whether @done came true. */
static bool read_while(struct adaptive_region *r, char *buf,
		       bool (*done)(struct adaptive_region *r, uint64_t arg), uint64_t arg)
{
	struct timespec start;
	uint64_t x = 7;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_s(&start) < PATIENCE_S && !done(r, arg)) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (!EXPECT(pread(dev_fd, buf, READ_SIZE, (off_t)((x >> 33) %
				(READ_SPAN / READ_SIZE) * READ_SIZE)) == READ_SIZE, "reader: pread: %m"))
			return false;
	}
	return done(r, arg);
}

static bool held_after_splits(struct adaptive_region *r, uint64_t unused)
{
	(void)unused;
	return atomic_load(&r->gate.cap) == 0 && atomic_load(&r->splits) > 0 &&
	       atomic_load(&r->gate.waits) > 0;
}

/* Read until the low tier is held (cap 0) after splits and waits, or PATIENCE_S. */
static void read_until_held(struct adaptive_region *r, char *buf)
{
	read_while(r, buf, held_after_splits, 0);
	fprintf(stderr, "held: level %u, cap %u, misses %llu, splits %llu, waits %llu\n",
		r->ctl.level, atomic_load(&r->gate.cap), (unsigned long long)r->ctl.misses,
		(unsigned long long)atomic_load(&r->splits),
		(unsigned long long)atomic_load(&r->gate.waits));
	EXPECT(atomic_load(&r->gate.cap) == 0, "the low tier was not held under an unreachable "
	       "target (cap %u)", atomic_load(&r->gate.cap));
	EXPECT(atomic_load(&r->splits) > 0, "no low write was split");
	EXPECT(atomic_load(&r->gate.waits) > 0, "no low write waited at the gate");
	EXPECT(r->ctl.misses > 0, "no window missed");
}

/* Reader stopped: the cap must go and the writer must move again. */
static void expect_release(struct adaptive_region *r)
{
	struct timespec start;
	uint64_t before;

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
	before = atomic_load(&writes);
	while (elapsed_s(&start) < 2 * PATIENCE_S && atomic_load(&writes) < before + 8)
		usleep(10000);
	EXPECT(atomic_load(&writes) >= before + 8, "the writer did not move after the release");
	fprintf(stderr, "released: level %u, windows %llu, held %llu ms, writes %llu\n",
		r->ctl.level, (unsigned long long)r->ctl.windows,
		(unsigned long long)(r->ctl.held_ns / 1000000),
		(unsigned long long)atomic_load(&writes));
}

/* ---- the debt guard: a "database" that writes its LOG ------------------------------ */

/* What RocksDB 7.8 writes when it slows its writes down (db_bench, tight L0 triggers). */
#define STALL_LINE "2026/12/03-20:47:26.171727 28390 [WARN] [db/column_family.cc:1001] " \
	"[default] Stalling writes because we have 2 level-0 files rate 8388608\n"
#define INFO_LINE "2026/12/03-20:47:26.170001 28390 [db/flush_job.cc:1007] [default] " \
	"[JOB 7] Level-0 flush table #12: 1058003 bytes OK\n"

static int log_fd = -1;
static const char *log_line;
static _Atomic uint64_t log_lines;

static void *database(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "db-log", 0, 0, 0);
	while (!atomic_load(&stop_db)) {
		if (!EXPECT(write(log_fd, log_line, strlen(log_line)) == (ssize_t)strlen(log_line),
			    "db-log: write: %m"))
			break;
		log_lines++;
		usleep(20000);
	}
	return NULL;
}

static bool lifted_and_moved(struct adaptive_region *r, uint64_t writes_before)
{
	return r->ctl.debt_lifts > 0 && atomic_load(&r->gate.cap) != 0 &&
	       atomic_load(&writes) >= writes_before + 4;
}

static bool held_again(struct adaptive_region *r, uint64_t unused)
{
	(void)unused;
	return atomic_load(&r->gate.cap) == 0;
}

static bool windows_past(struct adaptive_region *r, uint64_t windows)
{
	return r->ctl.windows >= windows && atomic_load(&log_lines) >= 100;
}

static void report(const char *when, struct adaptive_region *r)
{
	fprintf(stderr, "%s: level %u, cap %u, windows %llu, debt lifts %llu, stall lines %llu, "
		"log lines written %llu, writes %llu, log '%s'\n", when, r->ctl.level,
		atomic_load(&r->gate.cap), (unsigned long long)r->ctl.windows,
		(unsigned long long)r->ctl.debt_lifts, (unsigned long long)r->debt.slow_lines,
		(unsigned long long)atomic_load(&log_lines), (unsigned long long)atomic_load(&writes),
		r->debt.path);
}

/*
 * Held under the target, the database starts logging. "debt": its stall lines lift the cap
 * and the writer moves; once they stop, the target holds the low tier again. The others:
 * 4 s of windows (and 100 lines) change nothing.
 */
static void debt_phase(struct adaptive_region *r, const char *mode, char *buf)
{
	bool debt = !strcmp(mode, "debt");
	pthread_t t;

	log_line = strcmp(mode, "debt-no-line") ? STALL_LINE : INFO_LINE;
	if (!EXPECT(pthread_create(&t, NULL, database, NULL) == 0, "pthread_create"))
		return;
	if (debt) {
		EXPECT(read_while(r, buf, lifted_and_moved, atomic_load(&writes)),
		       "the stall lines did not lift the cap and let the writer move");
		report("debt", r);
		atomic_store(&stop_db, 1);
		EXPECT(read_while(r, buf, held_again, 0), "not held again after the lines stopped");
		EXPECT(r->debt.slow_lines > 0, "no stall line counted");
	} else {
		read_while(r, buf, windows_past, r->ctl.windows + 40);
		EXPECT(r->ctl.windows >= 40 && atomic_load(&log_lines) >= 100, "too few windows");
		EXPECT(r->ctl.debt_lifts == 0, "%s: %llu debt lifts", mode,
		       (unsigned long long)r->ctl.debt_lifts);
		EXPECT(atomic_load(&r->gate.cap) == 0, "%s: the cap relaxed to %u", mode,
		       atomic_load(&r->gate.cap));
		EXPECT(r->debt.slow_lines == 0, "%s: stall lines counted", mode);
		EXPECT(!strcmp(mode, "debt-no-glob") == !r->debt.path[0], "%s: log path '%s'", mode,
		       r->debt.path);
	}
	report(mode, r);
	atomic_store(&stop_db, 1);
	pthread_join(t, NULL);
}

static int open_log(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/LOG", dir);
	log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0)
		perror(path);
	return log_fd;
}

static int worker(const char *device, const char *mode, const char *log_dir)
{
	struct adaptive_region *r = find_region();
	char *rbuf, *wbuf;
	pthread_t t;

	if (!r) {
		fprintf(stderr, "FAIL: no %s mapping: is the shim preloaded with a target?\n",
			ADAPTIVE_REGION_NAME);
		return T_EXIT_FAIL;
	}
	dev_fd = open(device, O_RDWR | O_DIRECT);
	if (dev_fd < 0 || posix_memalign((void **)&rbuf, 4096, READ_SIZE) ||
	    posix_memalign((void **)&wbuf, 4096, WRITE_SIZE)) {
		perror(device);
		return T_EXIT_FAIL;
	}
	memset(wbuf, 0x5a, WRITE_SIZE);
	if ((log_dir && open_log(log_dir) < 0) || pthread_create(&t, NULL, writer, wbuf) != 0)
		return T_EXIT_FAIL;
	read_until_held(r, rbuf);
	if (log_dir && test_result() == T_EXIT_PASS)
		debt_phase(r, mode, rbuf);
	expect_release(r);
	atomic_store(&stop_writer, 1);
	pthread_join(t, NULL);
	close(dev_fd);
	return test_result();
}

/* ---- the orchestrator ------------------------------------------------------------- */

static struct loopdev dev = { .index = -1 };
static volatile pid_t child;

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

static int run_worker(const char *self, const char *preload, const char *mode,
		      const char *log_dir)
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
		if (log_dir && strcmp(mode, "debt-no-glob"))
			setenv("IOTIER_DEBT_LOG", "*/LOG", 1);
		execl(self, self, "worker", dev.path, mode, log_dir, (char *)NULL);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return T_EXIT_FAIL;
	child = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : T_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	char log_dir[] = "/tmp/iotier-adaptive-debt.XXXXXX";
	const char *mode = argc == 3 ? argv[2] : "release";
	bool debt = !strncmp(mode, "debt", 4);
	int ret;

	if (argc >= 4 && !strcmp(argv[1], "worker"))
		return worker(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	if (argc < 2 || argc > 3 || (strcmp(mode, "release") && strcmp(mode, "debt") &&
				     strcmp(mode, "debt-no-glob") && strcmp(mode, "debt-no-line"))) {
		fprintf(stderr, "usage: adaptive-test SHIM_PRELOAD [release|debt|debt-no-glob|"
			"debt-no-line]\n");
		return T_EXIT_FAIL;
	}
	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	if (test_cleanup_add(destroy_loopdev, &dev) < 0 || test_cleanup_add(kill_worker, NULL) < 0)
		return T_EXIT_FAIL;
	/* A shallow queue, as in issue 12's rig: reads wait behind the writes in flight. */
	ret = loopdev_create(&dev, NULL, READ_SPAN + WRITE_SPAN, "mq-deadline", 4);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO)
		return test_skip("cannot create a loop device");
	if (ret < 0) {
		fprintf(stderr, "loop device: %s\n", strerror(-ret));
		return T_EXIT_FAIL;
	}
	if (debt && test_tmpdir(log_dir) < 0)
		return T_EXIT_FAIL;
	ret = run_worker(argv[0], argv[1], mode, debt ? log_dir : NULL);
	loopdev_destroy(&dev);
	return ret;
}
