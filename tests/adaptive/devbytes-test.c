// SPDX-License-Identifier: MIT
/*
 * Description: the adaptive tier's allowance counts what the low tier puts on the device
 * (issue 23, item 5). Run under the shim with IOTIER_LOW=bg-*, a target and
 * IOTIER_GATE_WAIT=60s; the program pins the shared region it finds in /proc/self/maps at
 * cap 1, chunk 1 MiB (the controller stopped, no lease). Modes:
 *  push:    a low writer's buffered 1 MiB write is pushed to a device throttled to 1 MiB/s
 *           for that thread alone (a blkio v1 cgroup on an ext4 loop device of the test's),
 *           so the push waits about a second for its completion. That wait must hold no
 *           slot: a second low thread's read of a cached page, begun while the writer
 *           waits, must pass the gate at once, not after the push. Before the fix the
 *           push held its slot through the wait and the read waited most of a second.
 *  request: the loop device's queue takes at most 128 KiB a request (max_sectors_kb); a
 *           low thread's O_DIRECT preads of 1 MiB are cut to the device's request, not the
 *           1 MiB chunk, so at cap 1 the device never has more than one of its requests in
 *           flight (sampled in /sys/block/loopN/inflight), and every byte read is the device's.
 *           Before the fix each 1 MiB piece was up to eight requests in flight under one slot
 *           (4 seen at once).
 *  request-idle: the same with the foreground idle on every device (its last read 1 s
 *           ago): the fast path holds no slot, and a 1 MiB piece goes whole, its requests
 *           together, as untagged's would (more than one in flight). Before, idle pieces
 *           were cut to one request too, sent one after another: on a disk of several
 *           channels the low tier ran at a third of untagged while the reader was off.
 *  readahead: a low thread's sequential 64 KiB buffered preads of a file on such a device
 *           (ext4, read_ahead_kb 4096) at cap 1 read what they ask: at most one request in
 *           flight. Before the fix the kernel's readahead put whole windows (MiBs) on the
 *           device outside every slot. So do they at full, and on an fd the program advised
 *           itself (POSIX_FADV_NORMAL): a readahead queue at full is what a returning reader
 *           waits behind (0.4-0.7 s under mq-deadline in the matrix), and the program's
 *           advice let the matrix's sequential reader keep it.
 *  bufwrite: a low thread's 1 MiB buffered pwrites of a file on such a device (ext4) at
 *           cap 1, new pages and then the same pages cached: at most one write in flight,
 *           and the file reads back as written. The kernel writes back whole folios, and a
 *           1 MiB pwrite makes (or dirties all of) a 1 MiB folio: before the fix the call
 *           went whole and its push's first piece put all of it on the device under one
 *           slot. Now it is cut, and each piece is pushed and waited for as it is copied.
 *  locks:   the program holds a POSIX write lock on a file that a low thread writes (2 MiB
 *           through the same fd) at cap 1: the push's waits use a description of the
 *           shim's own, and closing it must not release the program's lock (POSIX drops a
 *           process's locks on a file at the close of any of its descriptors). Checked by
 *           F_GETLK from a child. Before the fix the lock was gone after the write.
 *  async:   at cap 2 with one slot taken (by the test, as a low I/O in flight would) and a
 *           read in flight on every device, a low thread's io_submit of one iocb goes at
 *           once and one of two waits at the gate until the slot is released, then returns
 *           2; no slot stays taken. Before the fix
 *           a submission passed whenever one slot was free and held none.
 * Usage: adaptive-devbytes MODE, or adaptive-devbytes locks|async DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "cleanup.h"
#include "loopdev.h"
#include "scratch_fs.h"
#include "test_env.h"

#define CHUNK (1u << 20)
#define PUSH_BYTES (1u << 20)
#define THROTTLE_BPS 1048576u  /* the writer's pushes take about a second */
#define LACKS_THROTTLE (-2) /* make_cgroup: blkio v1 without blk-throttle */
#define PUSH_MIN_NS 400000000ull /* or the throttle did not hold the push */
#define CGROUP_ROOT "/sys/fs/cgroup/blkio"

static struct adaptive_region *region;
static const char *lock_dir; /* locks, async: a scratch directory */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define thread_syscall adaptive_worker_thread_syscall

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Cap 1 at a 1 MiB chunk, for good: no step, no lease, and the foreground never seen (the
 * fast path would let every piece go at full once the reads of the test's mkfs, a program
 * of the tree, are over 1 ms old).
 */
static void pin_cap_one(void)
{
	atomic_store(&region->deadline_ns, UINT64_MAX);
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	for (uint32_t d = 0; d < ADAPTIVE_FG_SLOTS; d++)
		atomic_store(&region->fg[d].last_ns, 0);
	atomic_store(&region->chunk, CHUNK);
	low_gate_set_cap(&region->gate, 1, 0);
}

/* ---- push: the completion wait holds no slot --------------------------------------------- */

static char cgroup_dir[80];
static struct scratch_fs fs;
static char data_path[128], cached_path[128];
static sem_t in_cgroup;
static _Atomic pid_t writer_tid;
static _Atomic uint64_t push_ns; /* the writer's write and push, 0 until it returned */

static void remove_cgroup(void *arg)
{
	char tasks[128];
	pid_t tid = atomic_load(&writer_tid);

	(void)arg;
	if (!cgroup_dir[0])
		return;
	if (tid) { /* back to the root, if it still runs */
		char text[16];

		snprintf(text, sizeof(text), "%d", (int)tid);
		snprintf(tasks, sizeof(tasks), "%s/tasks", CGROUP_ROOT);
		write_text(tasks, text);
	}
	rmdir(cgroup_dir);
	cgroup_dir[0] = 0;
}

/* A blkio v1 cgroup throttling writes to the scratch device: 0, or the exit status. */
static int make_cgroup(void)
{
	char path[160], rule[64];

	snprintf(cgroup_dir, sizeof(cgroup_dir), "%s/iotier-devbytes.%d", CGROUP_ROOT,
		 (int)getpid());
	if (mkdir(cgroup_dir, 0755) < 0) {
		int err = errno;

		cgroup_dir[0] = 0;
		return err == ENOENT || err == EROFS || err == EACCES
			       ? test_skip("no writable cgroup v1 blkio hierarchy")
			       : test_fail("mkdir %s: %s", cgroup_dir, strerror(err));
	}
	if (test_cleanup_add(remove_cgroup, NULL) < 0)
		return T_EXIT_FAIL;
	snprintf(path, sizeof(path), "%s/blkio.throttle.write_bps_device", cgroup_dir);
	snprintf(rule, sizeof(rule), "%u:%u %u", fs.dev.major, fs.dev.minor, THROTTLE_BPS);
	if (access(path, F_OK) < 0)
		return LACKS_THROTTLE; /* a kernel without it is no failed setup (issue 26) */
	if (write_text(path, rule) < 0)
		return test_fail("write %s to %s: %m", rule, path);
	return 0;
}

/* The low writer: in the throttled cgroup, one buffered write, which the shim pushes. */
static void *writer(void *arg)
{
	char *buf = arg;
	uint64_t t0;
	int fd;

	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	atomic_store(&writer_tid, (pid_t)syscall(SYS_gettid));
	sem_wait(&in_cgroup);
	fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	t0 = now_ns();
	EXPECT(fd >= 0 && write(fd, buf, PUSH_BYTES) == PUSH_BYTES, "the low write: %m");
	atomic_store(&push_ns, now_ns() - t0);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static _Atomic uint64_t read_ns;

/* The second low thread: one read of a cached page, which passes the gate. */
static void *reader(void *arg)
{
	char page[4096];
	int fd = open(cached_path, O_RDONLY | O_CLOEXEC);
	uint64_t t0;

	(void)arg;
	prctl(PR_SET_NAME, "bg-reader", 0, 0, 0);
	t0 = now_ns();
	EXPECT(fd >= 0 && pread(fd, page, sizeof(page), 0) == (ssize_t)sizeof(page),
	       "the low read: %m");
	atomic_store(&read_ns, now_ns() - t0);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* A small file, written by this (high) thread, so its page is in the cache. */
static int make_cached(void)
{
	char page[4096];
	int fd = open(cached_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ok;

	memset(page, 'c', sizeof(page));
	ok = fd >= 0 && write(fd, page, sizeof(page)) == (ssize_t)sizeof(page) && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : test_fail("write %s: %m", cached_path);
}

/* Move the writer into the cgroup, and wait until it is in the push's completion wait. */
static bool writer_waiting(void)
{
	char tasks[128], text[16];
	pid_t tid;
	int i;

	for (i = 0; i < 500 && !(tid = atomic_load(&writer_tid)); i++)
		usleep(1000);
	snprintf(text, sizeof(text), "%d", (int)tid);
	snprintf(tasks, sizeof(tasks), "%s/tasks", cgroup_dir);
	if (!EXPECT(tid && write_text(tasks, text) == 0, "move the writer to %s: %m", cgroup_dir))
		return false;
	sem_post(&in_cgroup);
	for (i = 0; i < 5000 && thread_syscall(tid) != SYS_sync_file_range; i++)
		usleep(1000);
	if (!EXPECT(thread_syscall(tid) == SYS_sync_file_range,
		    "the low writer never pushed its write (sync_file_range)"))
		return false;
	usleep(100000); /* past the submission, into the wait for the throttled device */
	return EXPECT(!atomic_load(&push_ns), "the push ended within 100 ms: not throttled");
}

static int push_mode(void)
{
	static const char *const mkfs_args[] = { "-E", "lazy_itable_init=0,lazy_journal_init=0",
						 NULL };
	const struct scratch_fs_opts opts = {
		.bytes = 64u << 20, .scheduler = "none", .type = "ext4",
		.mkfs_args = mkfs_args, .mnt = "/tmp/iotier-devbytes.XXXXXX",
	};
	pthread_t w, r;
	char *buf = malloc(PUSH_BYTES);
	uint64_t pushes;
	int ret;

	if (geteuid() != 0)
		return test_skip("needs root for a loop device and a cgroup");
	if (!buf)
		return test_fail("memory");
	memset(buf, 'p', PUSH_BYTES);
	ret = scratch_fs_create(&fs, &opts);
	if (ret)
		return ret;
	snprintf(data_path, sizeof(data_path), "%s/pushed", fs.mnt);
	snprintf(cached_path, sizeof(cached_path), "%s/cached", fs.mnt);
	ret = make_cgroup();
	if (ret == LACKS_THROTTLE) {
		/* Nothing to judge here without a slow device: the request, readahead and async
		 * modes still run; the push's own slot is unit-tested (check-low-gate). */
		test_kernel_lacks("blk-throttle", "blkio v1 has no throttle files: the push's wait "
				  "cannot be made long enough to look inside it");
		scratch_fs_destroy(&fs);
		free(buf);
		return T_EXIT_PASS;
	}
	if (!ret)
		ret = make_cached();
	if (ret) {
		scratch_fs_destroy(&fs);
		return ret;
	}
	sem_init(&in_cgroup, 0, 0);
	pin_cap_one();
	pushes = atomic_load(&region->pushes);
	if (pthread_create(&w, NULL, writer, buf) != 0)
		return test_fail("pthread_create");
	if (writer_waiting()) {
		if (pthread_create(&r, NULL, reader, NULL) != 0)
			return test_fail("pthread_create");
		pthread_join(r, NULL);
	}
	pthread_join(w, NULL);
	printf("push: the writer's write and push %.1f ms, the reader's read %.1f ms, %llu "
	       "pushed pieces\n", atomic_load(&push_ns) / 1e6, atomic_load(&read_ns) / 1e6,
	       (unsigned long long)(atomic_load(&region->pushes) - pushes));
	EXPECT(atomic_load(&region->pushes) > pushes, "the write was not pushed through the gate");
	EXPECT(atomic_load(&push_ns) >= PUSH_MIN_NS,
	       "the push took %.1f ms: the throttle did not hold it", atomic_load(&push_ns) / 1e6);
	EXPECT(atomic_load(&read_ns) && atomic_load(&read_ns) < atomic_load(&push_ns) / 4,
	       "a low read begun while a push waited for its completion took %.1f ms (the push "
	       "%.1f ms): the push held its slot through the wait", atomic_load(&read_ns) / 1e6,
	       atomic_load(&push_ns) / 1e6);
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	remove_cgroup(NULL);
	scratch_fs_destroy(&fs);
	free(buf);
	return test_result();
}

/* ---- request: a piece is no larger than one request of the device ------------------------ */

#define DEVICE_BYTES (16u << 20)
#define REQUEST_KB 128u
#define READ_ROUNDS_NS 500000000ull

static struct loopdev dev = { .index = -1 };
static char *pattern;
static _Atomic int reading_done;
static _Atomic uint64_t bytes_read;

static void destroy_loopdev(void *arg)
{
	loopdev_destroy(arg);
}

/* The low reader: O_DIRECT preads of the chunk over the device, checked, until told. */
static void *chunk_reader(void *arg)
{
	char *buf = arg;
	int fd = open(dev.path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	uint64_t until = now_ns() + READ_ROUNDS_NS;

	prctl(PR_SET_NAME, "bg-chunks", 0, 0, 0);
	if (!EXPECT(fd >= 0, "open %s O_DIRECT: %m", dev.path)) {
		atomic_store(&reading_done, 1);
		return NULL;
	}
	while (now_ns() < until && test_result() == T_EXIT_PASS)
		for (off_t off = 0; off < (off_t)DEVICE_BYTES; off += CHUNK) {
			ssize_t n = pread(fd, buf, CHUNK, off);

			if (!EXPECT(n == (ssize_t)CHUNK && !memcmp(buf, pattern + off, CHUNK),
				    "the low pread at %lld returned %zd (%m) or other bytes",
				    (long long)off, n))
				break;
			atomic_fetch_add(&bytes_read, (uint64_t)n);
		}
	close(fd);
	atomic_store(&reading_done, 1);
	return NULL;
}

/*
 * Reads (@field 0) or writes (1) in flight on the device now (/sys/block/loopN/inflight:
 * "reads writes"), -1. Raw syscalls: the sampler is no foreground reader of the shim's (its
 * reads would make the foreground idle, hence the tier full, whenever the sampler is
 * preempted for 1 ms).
 */
static int in_flight(int field)
{
	char path[64], text[64];
	int fd, n, counts[2] = { -1, -1 };

	snprintf(path, sizeof(path), "/sys/block/%s/inflight", dev.name);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)syscall(SYS_read, fd, text, sizeof(text) - 1);
	syscall(SYS_close, fd);
	if (n > 0) {
		text[n] = 0;
		if (sscanf(text, "%d %d", &counts[0], &counts[1]) != 2)
			counts[0] = counts[1] = -1;
	}
	return counts[field];
}

/* in_flight(@field) sampled until *@done is set: the most seen; the samples in *@samples. */
static int most_in_flight(_Atomic int *done, int field, int *samples)
{
	int most = 0;

	*samples = 0;
	while (!atomic_load(done)) {
		int now = in_flight(field);

		(*samples)++;
		if (now > most)
			most = now;
	}
	return most;
}

/* The device's reads completed and sectors read so far (/sys/block/loopN/stat). */
static void stat_reads(unsigned long long *ios, unsigned long long *sectors)
{
	char path[64];
	unsigned long long merges;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev.name);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%llu %llu %llu", ios, &merges, sectors) != 3)
		*ios = *sectors = 0;
	if (f)
		fclose(f);
}

/* The device, its pattern written (by this high thread) and its requests made small. */
static int make_device(void)
{
	char kb[16];
	int fd, ret;

	if (test_cleanup_add(destroy_loopdev, &dev) < 0)
		return T_EXIT_FAIL;
	/* Backed in memory if the machine lets it: the reads then never reach a disk. */
	ret = loopdev_create(&dev, "/dev/shm", DEVICE_BYTES, "none", 0);
	if (ret < 0)
		ret = loopdev_create(&dev, NULL, DEVICE_BYTES, "none", 0);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO)
		return test_skip("cannot create a loop device");
	if (ret < 0)
		return test_fail("loop device: %s", strerror(-ret));
	if (posix_memalign((void **)&pattern, 4096, DEVICE_BYTES))
		return test_fail("memory");
	for (size_t i = 0; i < DEVICE_BYTES; i++)
		pattern[i] = (char)(i * 7 + i / 4096);
	fd = open(dev.path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, pattern, DEVICE_BYTES, 0) != (ssize_t)DEVICE_BYTES ||
	    fsync(fd) < 0)
		return test_fail("write %s: %m", dev.path);
	close(fd);
	loopdev_settle();
	snprintf(kb, sizeof(kb), "%u", REQUEST_KB);
	ret = loopdev_queue_set(&dev, "max_sectors_kb", kb);
	if (ret < 0)
		return test_fail("%s: queue/max_sectors_kb = %s: %s", dev.name, kb, strerror(-ret));
	return 0;
}

/* The foreground read every device, the last 1 s ago: idle everywhere for the fast path. */
static void foreground_idle(void)
{
	uint64_t long_ago = adaptive_worker_now_ns() - 1000000000ull;

	for (uint32_t d = 0; d < ADAPTIVE_FG_SLOTS; d++) {
		atomic_store(&region->fg[d].inflight, 0);
		atomic_store(&region->fg[d].gap_ns, 0);
		atomic_store(&region->fg[d].last_ns, long_ago);
	}
}

static int request_mode(bool idle)
{
	pthread_t t;
	char *buf;
	int most = 0, samples = 0, ret;

	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	ret = make_device();
	if (ret)
		return ret;
	if (posix_memalign((void **)&buf, 4096, CHUNK))
		return test_fail("memory");
	pin_cap_one();
	if (idle)
		foreground_idle();
	if (pthread_create(&t, NULL, chunk_reader, buf) != 0)
		return test_fail("pthread_create");
	most = most_in_flight(&reading_done, 0, &samples);
	pthread_join(t, NULL);
	printf("request%s: %.1f MiB read in 1 MiB preads at cap 1 on a device of %u KiB requests; "
	       "at most %d reads in flight (%d samples), %llu calls split\n", idle ? "-idle" : "",
	       atomic_load(&bytes_read) / 1048576.0, REQUEST_KB, most, samples,
	       (unsigned long long)atomic_load(&region->splits));
	EXPECT(atomic_load(&bytes_read) >= DEVICE_BYTES, "the low reader read %llu bytes",
	       (unsigned long long)atomic_load(&bytes_read));
	EXPECT(most >= 0, "cannot read /sys/block/%s/inflight", dev.name);
	if (idle)
		EXPECT(most >= 2, "with the foreground idle a 1 MiB piece never had more than %d "
		       "of its requests in flight: it was cut to the device's request", most);
	else
		EXPECT(most <= 1, "a low pread held one slot for %d requests in flight on the "
		       "device: its pieces are larger than the device's requests", most);
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	loopdev_destroy(&dev);
	free(buf);
	free(pattern);
	return test_result();
}

/* ---- readahead: a low buffered read reads what it asks ------------------------------------ */

#define SCAN_BYTES (16u << 20)
#define SCAN_READ (64u * 1024) /* under one request of the device (128 KiB) */
#define READAHEAD_KB "4096"

static _Atomic int scan_done;
static _Atomic uint64_t scanned;

/*
 * The low scanner: sequential buffered preads of the whole file, checked. With @arg, it
 * first advises the fd POSIX_FADV_NORMAL itself, as a program may.
 */
static void *scanner(void *arg)
{
	char *buf = malloc(SCAN_READ);
	int fd = open(data_path, O_RDONLY | O_CLOEXEC);

	prctl(PR_SET_NAME, "bg-scan", 0, 0, 0);
	if (arg && fd >= 0)
		EXPECT(posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL) == 0, "posix_fadvise: %m");
	if (EXPECT(fd >= 0 && buf, "open %s: %m", data_path))
		for (off_t off = 0; off < (off_t)SCAN_BYTES; off += SCAN_READ) {
			ssize_t n = pread(fd, buf, SCAN_READ, off);

			if (!EXPECT(n == (ssize_t)SCAN_READ && !memcmp(buf, pattern + off, SCAN_READ),
				    "the low pread at %lld returned %zd (%m) or other bytes",
				    (long long)off, n))
				break;
			atomic_fetch_add(&scanned, (uint64_t)n);
		}
	if (fd >= 0)
		close(fd);
	free(buf);
	atomic_store(&scan_done, 1);
	return NULL;
}

/* The file the scanner reads, written by this high thread and dropped from the cache. */
static int make_scanned(void)
{
	int fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ok;

	pattern = malloc(SCAN_BYTES);
	if (!pattern)
		return test_fail("memory");
	for (size_t i = 0; i < SCAN_BYTES; i++)
		pattern[i] = (char)(i * 13 + i / 4096);
	ok = fd >= 0 && write(fd, pattern, SCAN_BYTES) == (ssize_t)SCAN_BYTES && fsync(fd) == 0 &&
	     posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : test_fail("write %s: %m", data_path);
}

/*
 * One scan by a low thread (the program's own advice first when @advised), the device
 * sampled: the device's reads for it, or -1 having said why.
 */
static long long scan(bool advised, int *most)
{
	unsigned long long ios = 0, sectors = 0, ios_end = 0, sectors_end = 0;
	int fd = open(data_path, O_RDONLY | O_CLOEXEC), samples = 0;
	pthread_t t;

	/* Out of the cache first: this (high) thread's fd, a DONTNEED advice. */
	if (!EXPECT(fd >= 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0,
		    "drop %s: %m", data_path))
		return -1;
	close(fd);
	atomic_store(&scan_done, 0);
	atomic_store(&scanned, 0);
	*most = 0;
	stat_reads(&ios, &sectors);
	if (!EXPECT(pthread_create(&t, NULL, scanner, advised ? "advised" : NULL) == 0,
		    "pthread_create"))
		return -1;
	*most = most_in_flight(&scan_done, 0, &samples);
	pthread_join(t, NULL);
	stat_reads(&ios_end, &sectors_end);
	printf("readahead%s: %.1f MiB read in 64 KiB buffered preads, read_ahead_kb %s; "
	       "at most %d reads in flight (%d samples); the device: %llu reads, %.1f MiB\n",
	       advised ? " (the program advised NORMAL)" : "", atomic_load(&scanned) / 1048576.0,
	       READAHEAD_KB, *most, samples, ios_end - ios, (sectors_end - sectors) / 2048.0);
	EXPECT(atomic_load(&scanned) == SCAN_BYTES, "the low scanner read %llu bytes",
	       (unsigned long long)atomic_load(&scanned));
	EXPECT(*most >= 0, "cannot read /sys/block/%s/inflight", dev.name);
	return (long long)(ios_end - ios);
}

static int readahead_mode(void)
{
	static const char *const mkfs_args[] = { "-E", "lazy_itable_init=0,lazy_journal_init=0",
						 NULL };
	const struct scratch_fs_opts opts = {
		.bytes = 64u << 20, .backing_dir = "/dev/shm", .scheduler = "none", .type = "ext4",
		.mkfs_args = mkfs_args, .mnt = "/tmp/iotier-devbytes.XXXXXX",
	};
	long long reads;
	int most = 0, ret;

	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	EXPECT(posix_fadvise(-1, 0, 0, POSIX_FADV_RANDOM) == EBADF,
	       "posix_fadvise(-1) returns an error number");
	ret = scratch_fs_create(&fs, &opts);
	if (ret)
		return ret;
	dev = fs.dev; /* in_flight() looks at the scratch device */
	snprintf(data_path, sizeof(data_path), "%s/scanned", fs.mnt);
	ret = loopdev_queue_set(&fs.dev, "read_ahead_kb", READAHEAD_KB);
	if (ret < 0) {
		scratch_fs_destroy(&fs);
		return test_fail("%s: read_ahead_kb: %s", fs.dev.name, strerror(-ret));
	}
	ret = make_scanned();
	if (ret) {
		scratch_fs_destroy(&fs);
		return ret;
	}
	pin_cap_one();
	reads = scan(false, &most);
	EXPECT(most <= 1, "a low thread's 64 KiB buffered preads put %d reads in flight at "
	       "cap 1: the kernel's readahead escapes the gate", most);
	EXPECT(reads < 0 || reads >= SCAN_BYTES / SCAN_READ, "the device served the scan's %u "
	       "preads in %lld reads: the kernel read ahead of them", SCAN_BYTES / SCAN_READ, reads);
	/* An fd the program advised (NORMAL): read without readahead all the same. */
	reads = scan(true, &most);
	EXPECT(most <= 1 && (reads < 0 || reads >= SCAN_BYTES / SCAN_READ), "an fd the program "
	       "advised: %d reads in flight, its %u preads served in %lld device reads: the "
	       "kernel read ahead of them", most, SCAN_BYTES / SCAN_READ, reads);
	/* At full: no queue of readahead for a returning reader to wait behind. */
	atomic_store(&region->chunk, ADAPTIVE_UNLIMITED);
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	reads = scan(true, &most);
	EXPECT(most <= 1 && (reads < 0 || reads >= SCAN_BYTES / SCAN_READ), "at full: %d reads "
	       "in flight, the %u preads served in %lld device reads: the kernel read ahead of "
	       "them", most, SCAN_BYTES / SCAN_READ, reads);
	dev.index = -1;
	scratch_fs_destroy(&fs);
	free(pattern);
	return test_result();
}

/* ---- bufwrite: a low buffered pwrite is pushed piece by piece ----------------------------- */

#define WRITE_BYTES (16u << 20)

static _Atomic int writing_done;
static _Atomic uint64_t bytes_written;

/*
 * The low writer: the file in 1 MiB buffered pwrites, twice: new pages, then the same
 * pages again while they are cached (as 1 MiB folios, ext4 from 6.16).
 */
static void *bufwriter(void *arg)
{
	int fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	(void)arg;
	prctl(PR_SET_NAME, "bg-bufwrite", 0, 0, 0);
	if (EXPECT(fd >= 0, "open %s: %m", data_path))
		for (int round = 0; round < 2; round++)
			for (off_t off = 0; off < (off_t)WRITE_BYTES; off += CHUNK) {
				ssize_t n = pwrite(fd, pattern + off, CHUNK, off);

				if (!EXPECT(n == (ssize_t)CHUNK, "the low pwrite at %lld returned "
					    "%zd (%m)", (long long)off, n))
					goto out;
				atomic_fetch_add(&bytes_written, (uint64_t)n);
			}
out:
	if (fd >= 0)
		close(fd);
	atomic_store(&writing_done, 1);
	return NULL;
}

/* The file as written: read back by this high thread from the device, not the cache. */
static void check_written(void)
{
	char *back = malloc(WRITE_BYTES);
	int fd = open(data_path, O_RDONLY | O_CLOEXEC);

	EXPECT(back && fd >= 0 && fsync(fd) == 0 &&
	       posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 &&
	       pread(fd, back, WRITE_BYTES, 0) == (ssize_t)WRITE_BYTES &&
	       !memcmp(back, pattern, WRITE_BYTES),
	       "the file read back differs from what the low thread wrote (%m)");
	if (fd >= 0)
		close(fd);
	free(back);
}

static int bufwrite_mode(void)
{
	/* No journal: its commits would be writes in flight beside the writer's. */
	static const char *const mkfs_args[] = { "-O", "^has_journal", "-E",
						 "lazy_itable_init=0", NULL };
	const struct scratch_fs_opts opts = {
		.bytes = 64u << 20, .backing_dir = "/dev/shm", .scheduler = "none", .type = "ext4",
		.mkfs_args = mkfs_args, .mnt = "/tmp/iotier-devbytes.XXXXXX",
	};
	unsigned long long splits = atomic_load(&region->splits);
	int most = 0, samples = 0, ret;
	char kb[16];
	pthread_t t;

	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	ret = scratch_fs_create(&fs, &opts);
	if (ret)
		return ret;
	dev = fs.dev; /* in_flight() looks at the scratch device */
	snprintf(data_path, sizeof(data_path), "%s/written", fs.mnt);
	snprintf(kb, sizeof(kb), "%u", REQUEST_KB);
	ret = loopdev_queue_set(&fs.dev, "max_sectors_kb", kb);
	pattern = malloc(WRITE_BYTES);
	if (ret < 0 || !pattern) {
		scratch_fs_destroy(&fs);
		return test_fail("%s: max_sectors_kb: %s", fs.dev.name, strerror(-ret));
	}
	for (size_t i = 0; i < WRITE_BYTES; i++)
		pattern[i] = (char)(i * 11 + i / 4096);
	pin_cap_one();
	if (pthread_create(&t, NULL, bufwriter, NULL) != 0)
		return test_fail("pthread_create");
	most = most_in_flight(&writing_done, 1, &samples);
	pthread_join(t, NULL);
	printf("bufwrite: %.1f MiB written in 1 MiB buffered pwrites at cap 1 on a device of %u "
	       "KiB requests; at most %d writes in flight (%d samples), %llu calls split\n",
	       atomic_load(&bytes_written) / 1048576.0, REQUEST_KB, most, samples,
	       (unsigned long long)(atomic_load(&region->splits) - splits));
	EXPECT(most >= 0, "cannot read /sys/block/%s/inflight", dev.name);
	EXPECT(most <= 1, "a low buffered pwrite put %d writes in flight at cap 1: its push "
	       "wrote a whole 1 MiB folio under one slot", most);
	EXPECT(atomic_load(&region->splits) - splits >= 2 * WRITE_BYTES / CHUNK,
	       "%llu of the %u low pwrites were cut",
	       (unsigned long long)(atomic_load(&region->splits) - splits), 2 * WRITE_BYTES / CHUNK);
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	check_written();
	dev.index = -1;
	scratch_fs_destroy(&fs);
	free(pattern);
	return test_result();
}

/* ---- locks: the push's own description keeps the program's POSIX locks ------------------- */

#define LOCKED_BYTES (2u << 20)

static int locked_fd;

/*
 * The low writer of the locked file, through the program's fd: it closes none of the file's
 * descriptors, which would release the lock without the shim too.
 */
static void *locked_writer(void *arg)
{
	prctl(PR_SET_NAME, "bg-locked", 0, 0, 0);
	EXPECT(pwrite(locked_fd, arg, LOCKED_BYTES, 0) == (ssize_t)LOCKED_BYTES,
	       "the low write: %m");
	return NULL;
}

/* Does another process see a write lock on the file (F_GETLK from a child)? */
static bool lock_seen_by_child(void)
{
	int status = 0;
	pid_t child = fork();

	if (child == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int fd = open(data_path, O_RDWR | O_CLOEXEC);

		_exit(fd >= 0 && fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_WRLCK ? 0 : 1);
	}
	return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static int locks_mode(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char *buf = malloc(LOCKED_BYTES);
	pthread_t t;
	int fd;

	if (!buf)
		return test_fail("memory");
	memset(buf, 'l', LOCKED_BYTES);
	snprintf(data_path, sizeof(data_path), "%s/adaptive-devbytes-locked.%d", lock_dir,
		 (int)getpid());
	fd = locked_fd = open(data_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
		return test_fail("lock %s: %m", data_path);
	if (!EXPECT(lock_seen_by_child(), "the program's lock is not seen by another process"))
		goto out;
	pin_cap_one();
	if (pthread_create(&t, NULL, locked_writer, buf) != 0)
		return test_fail("pthread_create");
	pthread_join(t, NULL);
	printf("locks: %u KiB written by a low thread under cap 1, %llu pieces pushed\n",
	       LOCKED_BYTES >> 10, (unsigned long long)atomic_load(&region->pushes));
	EXPECT(atomic_load(&region->pushes) > 0, "the low write was not pushed");
	EXPECT(lock_seen_by_child(), "the program's POSIX lock on the file is gone after a low "
	       "thread's write was pushed: the shim closed a description of the file");
out:
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	close(fd);
	unlink(data_path);
	free(buf);
	return test_result();
}

/* ---- async: a submission of N takes N slots, or waits ------------------------------------ */

#define AIO_BYTES 4096u
#define PATIENCE_MS 40000

static int aio_fd;
static _Atomic pid_t aio_tid;
static _Atomic long aio_result;

/* A low thread's io_submit of @arg (1 or 2) reads through syscall(), as libaio makes it. */
static void *aio_submitter(void *arg)
{
	long n = (long)(intptr_t)arg;
	static char bufs[2][AIO_BYTES];
	struct iocb cbs[2], *ptrs[2] = { &cbs[0], &cbs[1] };
	struct io_event ev[2];
	aio_context_t ctx = 0;

	prctl(PR_SET_NAME, "bg-aio", 0, 0, 0);
	memset(cbs, 0, sizeof(cbs));
	for (long i = 0; i < 2; i++) {
		cbs[i].aio_lio_opcode = IOCB_CMD_PREAD;
		cbs[i].aio_fildes = (uint32_t)aio_fd;
		cbs[i].aio_buf = (uint64_t)(uintptr_t)bufs[i];
		cbs[i].aio_nbytes = AIO_BYTES;
		cbs[i].aio_offset = (int64_t)(i * AIO_BYTES);
	}
	atomic_store(&aio_tid, (pid_t)syscall(SYS_gettid));
	if (!EXPECT(syscall(SYS_io_setup, 2, &ctx) == 0, "io_setup: %m")) {
		atomic_store(&aio_result, -1);
		return NULL;
	}
	atomic_store(&aio_result, syscall(SYS_io_submit, ctx, n, ptrs));
	if (atomic_load(&aio_result) > 0)
		EXPECT(syscall(SYS_io_getevents, ctx, atomic_load(&aio_result),
			       atomic_load(&aio_result), ev, NULL) == atomic_load(&aio_result),
		       "io_getevents: %m");
	syscall(SYS_io_destroy, ctx);
	return NULL;
}

/*
 * A read in flight on every device, just begun: the foreground busy wherever the file is
 * (the fast path is per device), for ADAPTIVE_FG_STALE_NS. Else this thread's own reads of
 * /proc, a device the submission does not go to, would leave the file's device idle and
 * the submission at full. Renewed before each look; @on false ends it.
 */
static void hold_foreground(bool on)
{
	for (uint32_t d = 0; d < ADAPTIVE_FG_SLOTS; d++) {
		atomic_store(&region->fg[d].inflight, on ? 1 : 0);
		atomic_store(&region->fg[d].last_ns, on ? adaptive_worker_now_ns() : 0);
	}
}

/* Start a submission of @n; wait until it sleeps at the gate or returned. */
static pthread_t submit_async(long n)
{
	pthread_t t;

	atomic_store(&aio_result, -2);
	atomic_store(&aio_tid, 0);
	if (!EXPECT(pthread_create(&t, NULL, aio_submitter, (void *)(intptr_t)n) == 0,
		    "pthread_create"))
		return 0;
	for (int i = 0; i < PATIENCE_MS && atomic_load(&aio_result) == -2 &&
			!(atomic_load(&aio_tid) && adaptive_worker_in_futex(atomic_load(&aio_tid)));
	     i++) {
		hold_foreground(true);
		usleep(1000);
	}
	return t;
}

static int async_mode(void)
{
	char path[256], page[2 * AIO_BYTES];
	uint32_t mine;
	bool waited;
	pthread_t t;

	snprintf(path, sizeof(path), "%s/adaptive-devbytes-aio.%d", lock_dir, (int)getpid());
	memset(page, 'a', sizeof(page));
	aio_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (aio_fd < 0 || write(aio_fd, page, sizeof(page)) != (ssize_t)sizeof(page))
		return test_fail("%s: %m", path);
	unlink(path);
	pin_cap_one();
	hold_foreground(true);
	low_gate_set_cap(&region->gate, 2, 0);
	/* One slot of the two taken, as by a low I/O in flight (this thread is no low one). */
	mine = low_gate_enter(&region->gate, getpid(), (pid_t)syscall(SYS_gettid), 0);
	if (!EXPECT(mine, "the test could not take a slot at cap 2"))
		return test_result();
	/* A submission of one fits the slot left: it goes at once. */
	t = submit_async(1);
	if (t)
		pthread_join(t, NULL);
	EXPECT(atomic_load(&aio_result) == 1, "io_submit of 1 with a slot free: %ld",
	       atomic_load(&aio_result));
	/* Two do not: it waits until the test's slot is released. */
	t = submit_async(2);
	/* Asleep: still not returned 100 ms on, and seen in futex within 100 ms more (it polls
	   every 1 ms, and between two sleeps it may run or wait for a CPU: on a busy machine,
	   the suite's other tests running, 20 looks in a row missed it once). */
	usleep(100000);
	waited = false;
	for (int i = 0; i < 200 && !waited; i++) {
		hold_foreground(true);
		waited = adaptive_worker_in_futex(atomic_load(&aio_tid));
		if (!waited)
			usleep(500);
	}
	waited = waited && atomic_load(&aio_result) == -2;
	EXPECT(waited, "a low io_submit of 2 did not wait at cap 2 with 1 slot taken (it "
	       "returned %ld): a submission of N holds no slots", atomic_load(&aio_result));
	low_gate_exit(&region->gate, mine, 0);
	if (t)
		pthread_join(t, NULL);
	printf("async: io_submit of 2 at cap 2 with one slot taken %s; after the release it "
	       "returned %ld; %u slots in flight after it\n",
	       waited ? "waited" : "did not wait",
	       atomic_load(&aio_result), atomic_load(&region->gate.inflight));
	EXPECT(atomic_load(&aio_result) == 2, "io_submit of 2 after the release: %ld",
	       atomic_load(&aio_result));
	EXPECT(atomic_load(&region->gate.inflight) == 0,
	       "%u slots still taken after the submissions returned",
	       atomic_load(&region->gate.inflight));
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	hold_foreground(false);
	close(aio_fd);
	return test_result();
}

int main(int argc, char **argv)
{
	bool with_dir = argc >= 2 && (!strcmp(argv[1], "locks") || !strcmp(argv[1], "async"));

	if (argc != (with_dir ? 3 : 2)) {
		fprintf(stderr, "usage: adaptive-devbytes push|request|request-idle|readahead|bufwrite, or "
			"adaptive-devbytes locks|async DIR\n");
		return T_EXIT_FAIL;
	}
	if (with_dir)
		lock_dir = argv[2];
	region = adaptive_worker_region_or_fail();
	if (!region)
		return T_EXIT_FAIL;
	if (!strcmp(argv[1], "push"))
		return push_mode();
	if (!strcmp(argv[1], "request"))
		return request_mode(false);
	if (!strcmp(argv[1], "request-idle"))
		return request_mode(true);
	if (!strcmp(argv[1], "readahead"))
		return readahead_mode();
	if (!strcmp(argv[1], "bufwrite"))
		return bufwrite_mode();
	if (!strcmp(argv[1], "locks"))
		return locks_mode();
	if (!strcmp(argv[1], "async"))
		return async_mode();
	fprintf(stderr, "unknown mode %s\n", argv[1]);
	return T_EXIT_FAIL;
}
