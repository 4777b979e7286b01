// SPDX-License-Identifier: MIT
/*
 * Description: urgent background threads (IOTIER_URGENT; RocksDB's flush threads,
 * rocksdb:high*, by default) are neither the adaptive tier's signal nor held at its gate
 * (issue 23, item 2: only what users feel feeds the signal). Run under the shim with a
 * target; the program pins the shared region it finds in /proc/self/maps (the controller
 * stopped, so no step empties the window). Modes:
 *  - signal (IOTIER_LOW=bg-*, IOTIER_URGENT=rocksdb:high*,flusher*): the main thread's
 *    O_DIRECT reads each land in the window (the control); those of an untagged thread
 *    named rocksdb:high0 (prctl) or flusher1 (pthread_setname_np) land none.
 *  - gate (IOTIER_LOW=rocksdb:*,bg-*, IOTIER_URGENT unset: the default), the tier held
 *    (cap 0) with IOTIER_GATE_WAIT=60s: a rocksdb:low0 thread's O_DIRECT pread sleeps at
 *    the gate (the control), while rocksdb:high0, low by its rule too, does O_DIRECT
 *    preads and pwrites larger than the chunk, a buffered write and an fdatasync within
 *    5 s.
 * In both, each urgent thread's I/O calls are counted in the region (urgent_ios: a baseline
 * probe during them is void) and the others' are not.
 * Before the fix the urgent threads' reads land in the window (signal) and rocksdb:high0
 * waits out the 60 s bound at the gate (gate); before the count, urgent_ios stays 0.
 * Usage: adaptive-urgent MODE DIR (DIR: a scratch directory on a file system with O_DIRECT).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "test_env.h"

#define BLOCK 4096u
#define BIG (64u * 1024) /* larger than the chunk */
#define FILE_BYTES (1u << 20)
#define READS 32
#define CHUNK (16u * 1024)

static struct adaptive_region *region;
static char path[512], out_path[512];
static char *buf;

/* Urgent threads' I/O calls in the current window. */
static uint64_t urgent(void)
{
	return atomic_load(&region->urgent_ios);
}

/* The high reads noted in the current window, over every slot. */
static uint64_t noted(void)
{
	return adaptive_worker_noted(region);
}

/* READS O_DIRECT preads of @fd at distinct blocks, each checked. */
static void direct_reads(int fd)
{
	for (int i = 0; i < READS; i++)
		EXPECT(pread(fd, buf, BLOCK, (off_t)i * BLOCK) == BLOCK, "pread: %m");
}

static int open_direct(void)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	EXPECT(fd >= 0, "open %s O_DIRECT: %m", path);
	return fd;
}

/* ---- signal ---------------------------------------------------------------------- */

struct reader {
	const char *name;
	bool by_prctl;
	uint64_t added; /* what the window gained while it read */
	uint64_t urgent; /* ... and its count of urgent I/O */
};

static void *urgent_reader(void *arg)
{
	struct reader *r = arg;
	int fd;
	uint64_t before;

	if (r->by_prctl)
		prctl(PR_SET_NAME, r->name, 0, 0, 0);
	else
		pthread_setname_np(pthread_self(), r->name);
	fd = open_direct();
	if (fd < 0)
		return NULL;
	before = noted();
	r->urgent = urgent();
	direct_reads(fd);
	EXPECT(read(fd, buf, BLOCK) == BLOCK, "read: %m");
	r->added = noted() - before;
	r->urgent = urgent() - r->urgent;
	close(fd);
	return NULL;
}

static void signal_mode(void)
{
	struct reader readers[] = { { "rocksdb:high0", true, 0, 0 }, { "flusher1", false, 0, 0 } };
	int fd = open_direct();
	uint64_t before;

	if (fd < 0)
		return;
	uint64_t urgent_before = urgent();

	before = noted();
	direct_reads(fd);
	EXPECT(noted() - before == READS, "the foreground's %d O_DIRECT reads added %llu to the "
	       "window: the signal is not seen at all", READS,
	       (unsigned long long)(noted() - before));
	EXPECT(urgent() == urgent_before, "the foreground's reads counted as urgent I/O");
	close(fd);
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		pthread_t t;

		if (!EXPECT(pthread_create(&t, NULL, urgent_reader, &readers[i]) == 0, "thread"))
			continue;
		pthread_join(t, NULL);
		printf("%s: %llu of its %d reads in the window\n", readers[i].name,
		       (unsigned long long)readers[i].added, READS + 1);
		EXPECT(readers[i].added == 0, "the urgent thread %s fed the signal: %llu reads in "
		       "the window", readers[i].name, (unsigned long long)readers[i].added);
		EXPECT(readers[i].urgent == READS + 1, "the urgent thread %s's %d reads counted "
		       "%llu urgent I/Os", readers[i].name, READS + 1,
		       (unsigned long long)readers[i].urgent);
	}
}

/* ---- gate ------------------------------------------------------------------------ */

struct worker {
	const char *name;
	_Atomic pid_t tid;
	_Atomic int done;
};

static void *control_reader(void *arg)
{
	struct worker *w = arg;
	int fd;

	prctl(PR_SET_NAME, w->name, 0, 0, 0);
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	fd = open_direct();
	if (fd >= 0) {
		EXPECT(pread(fd, buf + BIG, BLOCK, 0) == BLOCK, "the control's pread: %m");
		close(fd);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

static void *urgent_io(void *arg)
{
	struct worker *w = arg;
	int fd, dout, out;

	prctl(PR_SET_NAME, w->name, 0, 0, 0);
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	fd = open_direct();
	dout = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
	out = open(out_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0 && EXPECT(dout >= 0 && out >= 0, "open %s: %m", out_path)) {
		direct_reads(fd);
		EXPECT(pread(fd, buf, BIG, 0) == BIG, "a large pread: %m");
		EXPECT(pwrite(dout, buf, BIG, 0) == BIG, "a large O_DIRECT pwrite: %m");
		EXPECT(write(out, buf, BLOCK) == BLOCK && fdatasync(out) == 0,
		       "a buffered write and fdatasync: %m");
	}
	if (fd >= 0)
		close(fd);
	if (dout >= 0)
		close(dout);
	if (out >= 0)
		close(out);
	atomic_store(&w->done, 1);
	return NULL;
}

static void gate_mode(void)
{
	struct worker control = { .name = "rocksdb:low0" }, urgent = { .name = "rocksdb:high0" };
	uint64_t urgent_before = atomic_load(&region->urgent_ios);
	pthread_t tc, tu;
	int i;

	low_gate_set_cap(&region->gate, 0, 0);
	if (!EXPECT(pthread_create(&tc, NULL, control_reader, &control) == 0, "thread"))
		return;
	for (i = 0; i < 100 && !(atomic_load(&control.tid) &&
				 adaptive_worker_in_futex(atomic_load(&control.tid))); i++)
		usleep(10000);
	EXPECT(!atomic_load(&control.done) && adaptive_worker_in_futex(atomic_load(&control.tid)),
	       "rocksdb:low0's pread was not held: holding is not forced");
	if (!EXPECT(pthread_create(&tu, NULL, urgent_io, &urgent) == 0, "thread"))
		goto release;
	for (i = 0; i < 500 && !atomic_load(&urgent.done); i++) /* 5 s: a loaded machine's sync */
		usleep(10000);
	EXPECT(atomic_load(&urgent.done), "the urgent thread rocksdb:high0 was held at the gate "
	       "(in futex: %d)", atomic_load(&urgent.tid) &&
	       adaptive_worker_in_futex(atomic_load(&urgent.tid)));
	EXPECT(!atomic_load(&control.done), "rocksdb:low0 was let go while the tier was held");
	/* 33 preads, an O_DIRECT pwrite, a buffered write and an fdatasync; none of the control's. */
	EXPECT(atomic_load(&region->urgent_ios) - urgent_before == READS + 4,
	       "rocksdb:high0's %d calls counted %llu urgent I/Os", READS + 4,
	       (unsigned long long)(atomic_load(&region->urgent_ios) - urgent_before));
release:
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	pthread_join(tc, NULL);
	if (atomic_load(&urgent.tid))
		pthread_join(tu, NULL);
}

int main(int argc, char **argv)
{
	bool gate;

	if (argc != 3 || (strcmp(argv[1], "signal") && strcmp(argv[1], "gate"))) {
		fprintf(stderr, "usage: adaptive-urgent signal|gate DIR\n");
		return T_EXIT_FAIL;
	}
	gate = !strcmp(argv[1], "gate");
	region = adaptive_worker_region_or_fail();
	if (!region)
		return T_EXIT_FAIL;
	snprintf(path, sizeof(path), "%s/adaptive-urgent-%s", argv[2], argv[1]);
	snprintf(out_path, sizeof(out_path), "%s/adaptive-urgent-%s-out", argv[2], argv[1]);
	if (posix_memalign((void **)&buf, 4096, BIG + BLOCK) ||
	    adaptive_worker_write_file(path, FILE_BYTES))
		return T_EXIT_FAIL;
	/* The controller stopped: the window keeps what it is given. */
	atomic_store(&region->deadline_ns, UINT64_MAX);
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	atomic_store(&region->chunk, CHUNK);
	if (gate)
		gate_mode();
	else
		signal_mode();
	unlink(path);
	unlink(out_path);
	return test_result();
}
