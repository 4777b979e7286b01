// SPDX-License-Identifier: MIT
/*
 * Description: the adaptive tier end to end on a loop device. A worker runs under the shim
 * with IOTIER_LOW=bg-* and an unreachable target (read.p99<=10us): its main thread reads
 * 4 KiB with O_DIRECT (high, timed), its bg-writer thread writes 1 MiB with O_DIRECT (low).
 * While the reader reads, the controller must cut the low tier down to held: the writer's
 * requests are split and then wait at the gate. When the reader stops, the low tier must be
 * released (no cap, no split) and the writer must move again. Judged by the states and
 * counts in the shim's shared region, which the worker finds in its own /proc/self/maps;
 * no timing is asserted, every wait is bounded generously. The shim's state file (in a
 * directory of the test's own) must then show the controller's windows and misses too.
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

static _Atomic int stop_writer;
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
		reads++;
		if (atomic_load(&r->gate.cap) == 0 && atomic_load(&r->splits) > 0 &&
		    atomic_load(&r->gate.waits) > 0)
			break;
	}
	fprintf(stderr, "reads: %llu; level %u, cap %u, misses %llu, splits %llu, waits %llu\n",
		(unsigned long long)reads, r->ctl.level, atomic_load(&r->gate.cap),
		(unsigned long long)r->ctl.misses, (unsigned long long)atomic_load(&r->splits),
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

static int worker(const char *device)
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
	if (pthread_create(&t, NULL, writer, wbuf) != 0)
		return T_EXIT_FAIL;
	read_until_held(r, rbuf);
	expect_release(r);
	expect_published();
	atomic_store(&stop_writer, 1);
	pthread_join(t, NULL);
	close(dev_fd);
	return test_result();
}

/* ---- the orchestrator ------------------------------------------------------------- */

static struct loopdev dev = { .index = -1 };
static char state_dir[] = "/tmp/iotier-adaptive-state.XXXXXX";
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
		execl(self, self, "worker", dev.path, (char *)NULL);
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

	if (argc == 3 && !strcmp(argv[1], "worker"))
		return worker(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: adaptive-test SHIM_PRELOAD\n");
		return T_EXIT_FAIL;
	}
	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	if (test_cleanup_add(destroy_loopdev, &dev) < 0 || test_cleanup_add(kill_worker, NULL) < 0 ||
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
	return ret;
}
