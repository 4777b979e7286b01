// SPDX-License-Identifier: MIT
/*
 * Description: the adaptive tier's fast path (docs/adaptive.md, "The fast path"): the low
 * tier is clamped within 1 ms of the foreground's first read after idle, not at the slow
 * loop's next window. A worker runs under the shim with IOTIER_LOW=bg-* and an unreachable
 * target (read.p99<=10us) on a loop device: bg-writer does 1 MiB O_DIRECT pwrites and logs
 * each one's start and whether it waited at the gate (the gate's waits counter moved during
 * it; it is the only low thread). The main thread reads 4 KiB O_DIRECT until the controller
 * holds the tier (level 0), stops until the controller has released it and the writer
 * moves at full, stays idle 300 ms more, then reads again for 300 ms, logging every read's
 * start and end. Every write that starts from 1 ms after that burst's first read on must be
 * clamped (wait at the gate), unless the reader itself was idle then (no read in flight,
 * its last one ended over 0.9 ms before: a reader preempted on a busy machine is idle for
 * the fast path too). Before the fast path the writer went at full until the controller
 * judged a window of the returning reader's (>= 10 ms of its reads, up to 100 ms more for the
 * window's deadline): many unexplained writes at full.
 * Usage: adaptive-fast-path SHIM_PRELOAD; the worker is this program with "worker DEVICE".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "cleanup.h"
#include "loopdev.h"
#include "test_env.h"

#define WRITE_SIZE (1u << 20)
#define READ_SIZE 4096u
#define READ_SPAN (64ull << 20)
#define WRITE_SPAN (64ull << 20)
#define PATIENCE_NS (60ull * 1000000000ull)
#define BURST_NS 300000000ull  /* the reader's burst after idle */
#define IDLE_NS 300000000ull   /* idle after the release, before it */
#define CLAMP_NS 1000000ull    /* the requirement: clamped within 1 ms of the first read */
#define QUIET_NS 900000ull     /* the reader idle this long explains a write at full */
#define MAX_READS 200000u
#define MAX_WRITES 100000u

struct span {
	uint64_t start, end;
};

static int dev_fd = -1;
static struct adaptive_region *region;
static _Atomic int stop_writer;
static _Atomic uint64_t writes_done;
static struct span *reads;
static uint64_t nreads;
static uint64_t *write_start;     /* per write: its start */
static unsigned char *write_waited; /* per write: waited at the gate */

/* One clock with the shim's stamps. */
#define now_ns adaptive_worker_now_ns

/* ---- the worker, under the shim ---------------------------------------------------- */

static uint64_t gate_waits(void)
{
	return atomic_load(&region->gate.waits) + atomic_load(&region->gate.cut_short);
}

static void *writer(void *arg)
{
	char *buf = arg;
	uint64_t off = 0;

	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	while (!atomic_load(&stop_writer)) {
		uint64_t i = atomic_load(&writes_done), waits = gate_waits(), start = now_ns();

		if (!EXPECT(pwrite(dev_fd, buf, WRITE_SIZE, (off_t)(READ_SPAN + off)) == WRITE_SIZE,
			    "bg-writer: pwrite: %m"))
			break;
		if (i < MAX_WRITES) {
			write_start[i] = start;
			write_waited[i] = gate_waits() != waits;
		}
		atomic_store(&writes_done, i + 1);
		off = (off + WRITE_SIZE) % WRITE_SPAN;
	}
	return NULL;
}

/* One random 4 KiB read, logged when @log. */
static bool read_one(char *buf, bool log)
{
	static uint64_t x = 1;
	uint64_t start;
	ssize_t n;

	x = x * 6364136223846793005ull + 1442695040888963407ull;
	start = now_ns();
	n = pread(dev_fd, buf, READ_SIZE, (off_t)((x >> 33) % (READ_SPAN / READ_SIZE) * READ_SIZE));
	if (log && nreads < MAX_READS)
		reads[nreads++] = (struct span){ start, now_ns() };
	return EXPECT(n == READ_SIZE, "reader: pread: %m");
}

static bool until(bool (*done)(void), bool reading, char *buf)
{
	uint64_t give_up = now_ns() + PATIENCE_NS;

	while (now_ns() < give_up) {
		for (int i = 0; i < 64; i++)
			if (reading ? !read_one(buf, false) : usleep(1000) != 0)
				return false;
		if (done())
			return true;
	}
	return false;
}

static bool is_held(void)
{
	return region->ctl.level == 0 && atomic_load(&region->gate.cap) == 0;
}

static uint64_t released_at_writes;

static bool is_released(void)
{
	if (region->ctl.level != ADAPTIVE_LEVEL_FULL)
		return false;
	if (!released_at_writes)
		released_at_writes = atomic_load(&writes_done) + 1;
	return atomic_load(&writes_done) >= released_at_writes + 8;
}

/* Was the reader idle (for the fast path) at @t: no read in flight, the last over QUIET ago? */
static bool reader_idle_at(uint64_t t)
{
	uint64_t last_end = 0;

	for (uint64_t i = 0; i < nreads; i++) {
		if (reads[i].start <= t && t <= reads[i].end)
			return false;
		if (reads[i].end < t && reads[i].end > last_end)
			last_end = reads[i].end;
	}
	return last_end && t - last_end > QUIET_NS;
}

/* The burst's writes: each from 1 ms after the first read on must be clamped or explained. */
static void judge_burst(uint64_t t0, uint64_t t_end, uint64_t from, uint64_t to)
{
	uint64_t clamped = 0, full = 0, explained = 0, first_clamp = 0, last_full = 0;

	for (uint64_t i = from; i < to && i < MAX_WRITES; i++) {
		uint64_t s = write_start[i];

		if (s < t0 || s > t_end)
			continue;
		if (write_waited[i]) {
			clamped++;
			if (!first_clamp)
				first_clamp = s - t0;
		} else if (s < t0 + CLAMP_NS) {
			continue; /* the allowed reaction */
		} else if (reader_idle_at(s)) {
			explained++;
		} else {
			full++;
			last_full = s - t0;
		}
	}
	for (uint64_t i = from > 2 ? from - 2 : 0; i < to && i < MAX_WRITES && i < from + 8; i++)
		fprintf(stderr, "write %llu: start %+lld us, %s\n", (unsigned long long)i,
			((long long)write_start[i] - (long long)t0) / 1000,
			write_waited[i] ? "waited" : "at full");
	fprintf(stderr, "burst: %llu reads; writes: %llu clamped (first at +%llu us), "
		"%llu at full with the reader busy (last at +%llu us), %llu at full with it idle\n",
		(unsigned long long)nreads, (unsigned long long)clamped,
		(unsigned long long)(first_clamp / 1000), (unsigned long long)full,
		(unsigned long long)(last_full / 1000), (unsigned long long)explained);
	EXPECT(clamped > 0, "no write was clamped during the reader's burst");
	EXPECT(full == 0, "%llu writes went at full while the reader read, the last %llu us after "
	       "its first read after idle (the bound: 1 ms)", (unsigned long long)full,
	       (unsigned long long)(last_full / 1000));
}

static int worker(const char *dev_path)
{
	pthread_t t;
	char *rbuf, *wbuf;
	uint64_t t0, t_end, from;

	region = adaptive_worker_region();
	if (!region) {
		fprintf(stderr, "FAIL: no %s mapping: is the shim preloaded with a target?\n",
			ADAPTIVE_REGION_NAME);
		return T_EXIT_FAIL;
	}
	dev_fd = open(dev_path, O_RDWR | O_DIRECT);
	reads = calloc(MAX_READS, sizeof(*reads));
	write_start = calloc(MAX_WRITES, sizeof(*write_start));
	write_waited = calloc(MAX_WRITES, 1);
	if (dev_fd < 0 || !reads || !write_start || !write_waited ||
	    posix_memalign((void **)&rbuf, 4096, READ_SIZE) ||
	    posix_memalign((void **)&wbuf, 4096, WRITE_SIZE)) {
		perror(dev_path);
		return T_EXIT_FAIL;
	}
	memset(wbuf, 0x5a, WRITE_SIZE);
	if (pthread_create(&t, NULL, writer, wbuf) != 0)
		return T_EXIT_FAIL;
	EXPECT(until(is_held, true, rbuf), "not held while the reader read: level %u, cap %u",
	       region->ctl.level, atomic_load(&region->gate.cap));
	EXPECT(until(is_released, false, rbuf), "not released once the reader stopped: level %u",
	       region->ctl.level);
	usleep(IDLE_NS / 1000);
	if (test_result() == T_EXIT_PASS) {
		from = atomic_load(&writes_done);
		t0 = now_ns();
		t_end = t0 + BURST_NS;
		while (now_ns() < t_end && read_one(rbuf, true))
			;
		atomic_store(&stop_writer, 1);
		pthread_join(t, NULL);
		judge_burst(reads[0].start, t_end, from, atomic_load(&writes_done));
	} else {
		atomic_store(&stop_writer, 1);
		pthread_join(t, NULL);
	}
	close(dev_fd);
	return test_result();
}

/* ---- the orchestrator ------------------------------------------------------------- */

static struct loopdev dev = { .index = -1 };

static void destroy_loopdev(void *arg)
{
	loopdev_destroy(arg);
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 3 && !strcmp(argv[1], "worker"))
		return worker(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: adaptive-fast-path SHIM_PRELOAD\n");
		return T_EXIT_FAIL;
	}
	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	if (test_cleanup_add(destroy_loopdev, &dev) < 0 || adaptive_worker_kill_on_exit() < 0)
		return T_EXIT_FAIL;
	/*
	 * A shallow queue, as in issue 12's rig: reads wait behind the writes in flight. Over
	 * tmpfs: on the host's disk, under another job's I/O, the tier was now and then never
	 * held (level 12 for 60 s), most likely the reader falling under the 20 reads/s a
	 * window needs to be judged; tmpfs keeps the test to the loop driver's queue.
	 */
	ret = loopdev_create(&dev, "/dev/shm", READ_SPAN + WRITE_SPAN, "mq-deadline", 4);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO)
		return test_skip("cannot create a loop device");
	if (ret < 0) {
		fprintf(stderr, "loop device: %s\n", strerror(-ret));
		return T_EXIT_FAIL;
	}
	/*
	 * Requests of 1 MiB (a loop device of 4 KiB blocks takes 128 KiB), so that each write
	 * is one piece: the shim cuts a piece to the device's request size, and a write cut
	 * into 16 KiB pieces held at the gate one bound each would span the whole burst.
	 */
	ret = loopdev_queue_set(&dev, "max_sectors_kb", "1024");
	if (ret < 0) {
		fprintf(stderr, "%s: queue/max_sectors_kb = 1024: %s\n", dev.name, strerror(-ret));
		return T_EXIT_FAIL;
	}
	ret = adaptive_worker_run(argv[0], argv[1], "read.p99<=10us", NULL,
				  (const char *const[]){ dev.path, NULL });
	loopdev_destroy(&dev);
	return ret;
}
