// SPDX-License-Identifier: MIT
/*
 * Description: a low thread's split calls cannot be told from the unsplit ones (issue 25,
 * shim/adaptive/split_io.c's rules). Run under the shim with IOTIER_LOW=bg-* and a target; the program
 * pins the shared region it finds in /proc/self/maps (the controller stopped, a finite cap,
 * a 16 KiB chunk: every call larger than 16 KiB is a candidate for the splitter). Modes:
 *  - atomic: two low threads write() 1 MiB records to one O_DIRECT fd (one shared file
 *    offset): no record on disk may mix both writers; four low threads read() 1 MiB at a
 *    time from one fd, buffered and O_DIRECT: every buffer must be one contiguous 1 MiB of
 *    the file, and together they read the file exactly once (XSH 2.9.7).
 *  - edges: the edge cases of whole-call validation, each made through the shim and as the
 *    raw syscall from the same state: return value, errno, file offset, file content and
 *    SIGXFSZ must agree (misaligned O_DIRECT counts, unmapped halves of buffers, offsets
 *    past LLONG_MAX, a count past SSIZE_MAX, a file size limit at a piece boundary...).
 *  - blockdev: the same on a 4 MiB loop device opened O_DIRECT: calls that end past the
 *    device (a short count where the whole call would stop, ENOSPC at its end), misaligned
 *    counts, an unmapped half of a source, and a control.
 *  - release: a 64 MiB pread and a 64 MiB O_DIRECT pwrite begun while the tier is held at
 *    16 KiB pieces; the tier is then released (or its chunk grown to 1 MiB) while the call
 *    waits at the gate: the rest must go at the new allowance (the pieces are counted in
 *    /proc/thread-self/io: syscr, syscw), not as 4096 pieces of 16 KiB. And a chunk of one
 *    byte (a garbled region) cuts a 1 MiB pread into pages at the least, not bytes.
 * Usage: adaptive-split MODE DIR (DIR: a scratch directory on a file system with O_DIRECT).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "cleanup.h"
#include "loopdev.h"
#include "test_env.h"

#define MiB (1u << 20)
#define CHUNK (16u * 1024)
#define SECTOR 512u
#define RECORDS 64 /* 1 MiB records or reads, 64 MiB in all */

static struct adaptive_region *region;
static const char *dir;

/* The controller stopped, the cap finite and forever, 16 KiB pieces. */
static void pin_region(uint32_t cap, uint32_t chunk)
{
	atomic_store(&region->deadline_ns, UINT64_MAX);
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	atomic_store(&region->chunk, chunk);
	low_gate_set_cap(&region->gate, cap, 0);
}

static int open_scratch(const char *name, int flags)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/adaptive-split-%s", dir, name);
	fd = open(path, flags | O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static void *aligned(size_t len)
{
	void *p = NULL;

	return posix_memalign(&p, 4096, len) ? NULL : p;
}

/* Run @fn(@arg) in @n low threads at once (named bg-split, so IOTIER_LOW=bg-* makes them low). */
static void run_low(int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	pthread_t t[8];

	for (int i = 0; i < n; i++)
		if (!EXPECT(pthread_create(&t[i], NULL, fn, (char *)args + i * arg_size) == 0,
			    "pthread_create"))
			n = i;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static void be_low(void)
{
	prctl(PR_SET_NAME, "bg-split", 0, 0, 0);
}

/* ---- atomic: write() records and read() buffers on one shared file offset ------------ */

struct sector_stamp {
	uint32_t writer, record, sector;
};

struct writer {
	int fd, id;
};

static void *record_writer(void *arg)
{
	const struct writer *w = arg;
	char *rec = aligned(MiB);

	be_low();
	if (!EXPECT(rec, "posix_memalign"))
		return NULL;
	for (uint32_t r = 0; r < RECORDS / 2; r++) {
		for (uint32_t s = 0; s < MiB / SECTOR; s++)
			memcpy(rec + s * SECTOR, &(struct sector_stamp){ (uint32_t)w->id, r, s },
			       sizeof(struct sector_stamp));
		EXPECT(write(w->fd, rec, MiB) == MiB, "write of a record: %m");
	}
	free(rec);
	return NULL;
}

/* Is the record at @rec one writer's one record, its sectors in order? */
static bool record_whole(const char *rec)
{
	struct sector_stamp first, s;

	memcpy(&first, rec, sizeof(first));
	for (uint32_t i = 0; i < MiB / SECTOR; i++) {
		memcpy(&s, rec + i * SECTOR, sizeof(s));
		if (s.writer != first.writer || s.record != first.record || s.sector != i)
			return false;
	}
	return true;
}

static void atomic_writes(void)
{
	struct writer w[2];
	char *back = aligned(MiB);
	int fd = open_scratch("records", O_DIRECT), mixed = 0;

	if (!EXPECT(fd >= 0 && back, "open an O_DIRECT file in %s: %m", dir))
		return;
	w[0] = (struct writer){ fd, 1 };
	w[1] = (struct writer){ fd, 2 };
	run_low(2, record_writer, w, sizeof(w[0]));
	EXPECT(lseek(fd, 0, SEEK_END) == (off_t)RECORDS * MiB, "the file is not 64 records long");
	for (int r = 0; r < RECORDS; r++)
		if (syscall(SYS_pread64, fd, back, MiB, (off_t)r * MiB) != MiB ||
		    !record_whole(back))
			mixed++;
	EXPECT(mixed == 0, "%d of %d records written by write() on one O_DIRECT fd are mixed "
	       "from both writers", mixed, RECORDS);
	free(back);
	close(fd);
}

struct reader {
	int fd;
	int broken;       /* buffers that were not one contiguous piece of the file */
	uint64_t bytes;
	uint8_t *seen;    /* shared: how often each MiB of the file was read */
};

/* The file: every sector starts with its own index. */
static int stamped_file(const char *name)
{
	char *buf = aligned(MiB);
	int fd = open_scratch(name, 0);

	if (!buf || fd < 0)
		return -1;
	for (uint64_t m = 0; m < RECORDS; m++) {
		for (uint64_t s = 0; s < MiB / SECTOR; s++) {
			uint64_t index = m * (MiB / SECTOR) + s;

			memcpy(buf + s * SECTOR, &index, sizeof(index));
		}
		if (syscall(SYS_pwrite64, fd, buf, MiB, (off_t)(m * MiB)) != MiB)
			fd = -1;
	}
	free(buf);
	return fd;
}

static void *buffer_reader(void *arg)
{
	struct reader *r = arg;
	char *buf = aligned(MiB);
	ssize_t n;

	be_low();
	if (!EXPECT(buf, "posix_memalign"))
		return NULL;
	while ((n = read(r->fd, buf, MiB)) > 0) {
		uint64_t first, s;
		bool whole = n == MiB;

		memcpy(&first, buf, sizeof(first));
		for (uint32_t i = 0; whole && i < MiB / SECTOR; i++) {
			memcpy(&s, buf + i * SECTOR, sizeof(s));
			whole = s == first + i;
		}
		r->broken += !whole;
		r->bytes += (uint64_t)n;
		if (whole && first % (MiB / SECTOR) == 0 && first / (MiB / SECTOR) < RECORDS)
			__atomic_fetch_add(&r->seen[first / (MiB / SECTOR)], 1, __ATOMIC_RELAXED);
	}
	EXPECT(n == 0, "read: %m");
	free(buf);
	return NULL;
}

static void atomic_reads(const char *how, int flags)
{
	struct reader r[4];
	uint8_t seen[RECORDS] = { 0 };
	int fd = stamped_file(how), direct, broken = 0, twice = 0;
	uint64_t bytes = 0;
	char path[64];

	if (!EXPECT(fd >= 0, "write the stamped file: %m"))
		return;
	/* The readers' own description, with or without O_DIRECT, shared by all four. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	direct = open(path, O_RDONLY | O_CLOEXEC | flags);
	close(fd);
	if (!EXPECT(direct >= 0, "reopen %s: %m", how))
		return;
	for (int i = 0; i < 4; i++)
		r[i] = (struct reader){ .fd = direct, .seen = seen };
	run_low(4, buffer_reader, r, sizeof(r[0]));
	for (int i = 0; i < 4; i++) {
		broken += r[i].broken;
		bytes += r[i].bytes;
	}
	for (int m = 0; m < RECORDS; m++)
		twice += seen[m] != 1;
	EXPECT(broken == 0 && twice == 0 && bytes == (uint64_t)RECORDS * MiB,
	       "%s read() of 1 MiB by four threads on one fd: %d buffers not contiguous, %d MiB "
	       "not read exactly once, %llu bytes in all", how, broken, twice,
	       (unsigned long long)bytes);
	close(direct);
}

static void atomic_mode(void)
{
	pin_region(2, CHUNK);
	atomic_writes();
	atomic_reads("buffered", 0);
	atomic_reads("O_DIRECT", O_DIRECT);
}

/* ---- edges: whole-call validation against the raw syscall --------------------------- */

enum op { PREAD, PWRITE, READ, WRITE };

struct edge {
	const char *what;
	enum op op;
	bool direct;      /* on the O_DIRECT fd, else the buffered one */
	size_t file_size; /* the file holds the pattern up to here; past it, a hole up to hole */
	size_t hole;
	int buf;          /* BUF_* */
	size_t count;
	off_t offset;     /* pread, pwrite: the offset; read, write: the position first */
	rlim_t fsize;     /* RLIMIT_FSIZE during the call; 0: none */
	bool cut;         /* the shim's call must be cut (region->splits), not paced whole */
};

enum { BUF_ALIGNED, BUF_MISALIGNED, BUF_HALF_BAD };

static volatile size_t huge_count = (size_t)SSIZE_MAX + 1; /* hidden from the compiler */

static const struct edge edges[] = {
	{ "O_DIRECT pwrite of 1 MiB + 100", PWRITE, true, 0, 0, BUF_ALIGNED, MiB + 100, 0, 0, false },
	{ "O_DIRECT pread of 1 MiB + 100", PREAD, true, 2 * MiB, 0, BUF_ALIGNED, MiB + 100, 0, 0, false },
	{ "O_DIRECT pwrite of 2 MiB, the second unmapped", PWRITE, true, 0, 0, BUF_HALF_BAD,
	  2 * MiB, 0, 0, false },
	{ "O_DIRECT pread of 2 MiB, the second unmapped", PREAD, true, 4 * MiB, 0, BUF_HALF_BAD,
	  2 * MiB, 0, 0, false },
	{ "pread at LLONG_MAX - 100000", PREAD, false, 2 * MiB, 0, BUF_ALIGNED, MiB,
	  LLONG_MAX - 100000, 0, false },
	{ "O_DIRECT pwrite at LLONG_MAX - 100000", PWRITE, true, 2 * MiB, 0, BUF_ALIGNED, MiB,
	  LLONG_MAX - 100000, 0, false },
	{ "O_DIRECT pread past the end, unmapped after it", PREAD, true, MiB, 0, BUF_HALF_BAD,
	  2 * MiB, 0, 0, false },
	{ "O_DIRECT pwrite ending past RLIMIT_FSIZE", PWRITE, true, 0, 0, BUF_ALIGNED, 2 * MiB, 0,
	  MiB, false },
	{ "pread of more than SSIZE_MAX", PREAD, false, 2 * MiB, 0, BUF_ALIGNED, 0, 0, 0, false },
	{ "O_DIRECT write() of 1 MiB + 100", WRITE, true, 0, 0, BUF_ALIGNED, MiB + 100, 0, 0, false },
	{ "O_DIRECT read() of 1 MiB + 100", READ, true, 2 * MiB, 0, BUF_ALIGNED, MiB + 100, 0, 0, false },
	{ "O_DIRECT pread across the end", PREAD, true, 3 * MiB / 2, 0, BUF_ALIGNED, 2 * MiB, 0,
	  0, false },
	{ "O_DIRECT pread of 1 MiB + 100, the tail in a hole", PREAD, true, MiB, 3 * MiB / 2,
	  BUF_ALIGNED, MiB + 100, 0, 0, false },
	{ "buffered pread, the second MiB unmapped", PREAD, false, 4 * MiB, 0, BUF_HALF_BAD,
	  2 * MiB, 0, 0, false },
	{ "O_DIRECT pread at a negative offset", PREAD, true, 2 * MiB, 0, BUF_ALIGNED, MiB, -4096,
	  0, false },
	{ "O_DIRECT pread into a misaligned buffer", PREAD, true, 2 * MiB, 0, BUF_MISALIGNED, MiB, 0,
	  0, false },
	{ "O_DIRECT pwrite of 2 MiB", PWRITE, true, MiB, 0, BUF_ALIGNED, 2 * MiB, 4096, 0, true },
	/* A buffered pwrite is cut, each piece pushed as it is copied (rule 2). */
	{ "buffered pwrite of 2 MiB, extending the file", PWRITE, false, MiB, 0, BUF_ALIGNED,
	  2 * MiB, 4096, 0, true },
	{ "buffered pwrite of 1 MiB + 100 from a misaligned buffer at an odd offset", PWRITE,
	  false, 2 * MiB, 0, BUF_MISALIGNED, MiB + 100, 777, 0, true },
	{ "buffered pwrite into a hole", PWRITE, false, MiB, 3 * MiB, BUF_ALIGNED, MiB, 2 * MiB, 0,
	  true },
	{ "buffered pwrite of 2 MiB, the second unmapped", PWRITE, false, MiB, 0, BUF_HALF_BAD,
	  2 * MiB, 0, 0, false },
	{ "buffered pwrite ending past RLIMIT_FSIZE", PWRITE, false, 0, 0, BUF_ALIGNED, 2 * MiB, 0,
	  MiB, false },
	{ "buffered pwrite starting at RLIMIT_FSIZE", PWRITE, false, 0, 0, BUF_ALIGNED, 2 * MiB,
	  MiB, MiB, false },
	{ "buffered pwrite at LLONG_MAX - 100000", PWRITE, false, 2 * MiB, 0, BUF_ALIGNED, MiB,
	  LLONG_MAX - 100000, 0, false },
	{ "buffered pwrite of more than SSIZE_MAX", PWRITE, false, 2 * MiB, 0, BUF_ALIGNED, 0, 0,
	  0, false },
	{ "buffered write() of 2 MiB", WRITE, false, MiB, 0, BUF_ALIGNED, 2 * MiB, 4096, 0, false },
};

/* On a 4 MiB block device: the file sizes and holes above do not apply, it holds the pattern. */
#define DEVICE_BYTES (4 * MiB)

static const struct edge device_edges[] = {
	{ "block device: O_DIRECT pwrite of 2 MiB ending past the device", PWRITE, true, 0, 0,
	  BUF_ALIGNED, 2 * MiB, 3 * MiB, 0, false },
	{ "block device: O_DIRECT pwrite at the device's end", PWRITE, true, 0, 0, BUF_ALIGNED, MiB,
	  DEVICE_BYTES, 0, false },
	{ "block device: O_DIRECT pread of 2 MiB ending past the device", PREAD, true, 0, 0,
	  BUF_ALIGNED, 2 * MiB, 3 * MiB, 0, false },
	{ "block device: O_DIRECT pwrite of 1 MiB + 100", PWRITE, true, 0, 0, BUF_ALIGNED,
	  MiB + 100, 0, 0, false },
	{ "block device: O_DIRECT pread of 1 MiB + 100", PREAD, true, 0, 0, BUF_ALIGNED, MiB + 100,
	  0, 0, false },
	{ "block device: O_DIRECT pwrite of 2 MiB, the second unmapped", PWRITE, true, 0, 0,
	  BUF_HALF_BAD, 2 * MiB, 0, 0, false },
	{ "block device: O_DIRECT pwrite of 2 MiB", PWRITE, true, 0, 0, BUF_ALIGNED, 2 * MiB,
	  4096, 0, false },
};

static int buffered_fd = -1, direct_fd = -1;
static bool on_device;
static char *bufs[3], *pattern, *content;
static volatile sig_atomic_t xfsz;

struct outcome {
	long ret, pos, size;
	int err, signals;
	unsigned long sum; /* of the file's content */
};

static void on_xfsz(int sig)
{
	(void)sig;
	xfsz++;
}

static void reset_file(const struct edge *e)
{
	if (on_device) {
		EXPECT(syscall(SYS_pwrite64, buffered_fd, pattern, DEVICE_BYTES, 0) ==
			       DEVICE_BYTES &&
		       syscall(SYS_fsync, buffered_fd) == 0 &&
		       syscall(SYS_lseek, direct_fd, 12345, SEEK_SET) >= 0,
		       "reset the device for %s: %m", e->what);
		return;
	}
	EXPECT(syscall(SYS_ftruncate, buffered_fd, 0) == 0 &&
	       syscall(SYS_pwrite64, buffered_fd, pattern, e->file_size, 0) == (long)e->file_size &&
	       (!e->hole || syscall(SYS_ftruncate, buffered_fd, e->hole) == 0) &&
	       syscall(SYS_lseek, e->direct ? direct_fd : buffered_fd, e->op >= READ ? e->offset
									   : 12345,
		       SEEK_SET) >= 0,
	       "reset the file for %s: %m", e->what);
}

static long do_call(const struct edge *e, bool raw)
{
	int fd = e->direct ? direct_fd : buffered_fd;
	char *buf = bufs[e->buf];
	size_t n = e->count ? e->count : huge_count;

	switch (e->op) {
	case PREAD:
		return raw ? syscall(SYS_pread64, fd, buf, n, e->offset)
			   : pread(fd, buf, n, e->offset);
	case PWRITE:
		return raw ? syscall(SYS_pwrite64, fd, buf, n, e->offset)
			   : pwrite(fd, buf, n, e->offset);
	case READ:
		return raw ? syscall(SYS_read, fd, buf, n) : read(fd, buf, n);
	default:
		return raw ? syscall(SYS_write, fd, buf, n) : write(fd, buf, n);
	}
}

static struct outcome run_edge(const struct edge *e, bool raw)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct rlimit lim = { e->fsize, RLIM_INFINITY };
	struct outcome o = { 0 };
	long got;

	reset_file(e);
	xfsz = 0;
	if (e->fsize)
		EXPECT(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit: %m");
	errno = 4242;
	o.ret = do_call(e, raw);
	o.err = errno;
	o.signals = xfsz;
	setrlimit(RLIMIT_FSIZE, &unlimited);
	o.pos = syscall(SYS_lseek, e->direct ? direct_fd : buffered_fd, 0, SEEK_CUR);
	o.size = syscall(SYS_lseek, buffered_fd, 0, SEEK_END);
	got = syscall(SYS_pread64, buffered_fd, content, 4 * MiB, 0);
	for (long i = 0; i < got; i++)
		o.sum = o.sum * 31 + (unsigned char)content[i];
	return o;
}

struct edge_list {
	const struct edge *edges;
	size_t n;
};

static void *edges_thread(void *arg)
{
	const struct edge_list *list = arg;

	be_low();
	for (size_t i = 0; i < list->n; i++) {
		const struct edge *e = &list->edges[i];
		uint64_t splits = atomic_load(&region->splits);
		struct outcome a = run_edge(e, false), b;

		EXPECT(!e->cut || atomic_load(&region->splits) > splits,
		       "%s: the call was paced whole, not cut", e->what);
		b = run_edge(e, true);
		EXPECT(a.ret == b.ret && a.err == b.err && a.pos == b.pos && a.size == b.size &&
		       a.sum == b.sum && a.signals == b.signals,
		       "%s: %ld errno %d pos %ld size %ld sum %lx SIGXFSZ %d; the raw call: %ld "
		       "errno %d pos %ld size %ld sum %lx SIGXFSZ %d", e->what, a.ret, a.err, a.pos,
		       a.size, a.sum, a.signals, b.ret, b.err, b.pos, b.size, b.sum, b.signals);
	}
	return NULL;
}

/* The buffers and the pattern; the fds are the caller's. */
static int edges_setup(void)
{
	char *half;

	pattern = aligned(4 * MiB);
	content = aligned(4 * MiB);
	bufs[BUF_ALIGNED] = aligned(4 * MiB);
	half = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pattern || !content || !bufs[BUF_ALIGNED] || half == MAP_FAILED ||
	    munmap(half + MiB, MiB))
		return test_fail("setup: %m");
	bufs[BUF_MISALIGNED] = bufs[BUF_ALIGNED] + 1;
	bufs[BUF_HALF_BAD] = half;
	for (size_t i = 0; i < 4 * MiB; i++)
		pattern[i] = (char)('a' + i % 23);
	memset(bufs[BUF_ALIGNED], 'w', 4 * MiB);
	memset(half, 'h', MiB);
	signal(SIGXFSZ, on_xfsz);
	pin_region(2, CHUNK);
	return 0;
}

static int edges_mode(void)
{
	struct edge_list list = { edges, sizeof(edges) / sizeof(edges[0]) };
	char path[64];

	buffered_fd = open_scratch("edges", 0);
	if (buffered_fd < 0 || edges_setup())
		return test_fail("setup: %m");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", buffered_fd);
	direct_fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (direct_fd < 0)
		return test_fail("no O_DIRECT in %s: %m", dir);
	run_low(1, edges_thread, &list, 0);
	return 0;
}

static struct loopdev dev = { .index = -1 };

static void destroy_loopdev(void *arg)
{
	loopdev_destroy(arg);
}

static int device_mode(void)
{
	struct edge_list list = { device_edges, sizeof(device_edges) / sizeof(device_edges[0]) };
	int ret;

	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	if (test_cleanup_add(destroy_loopdev, &dev) < 0)
		return T_EXIT_FAIL;
	ret = loopdev_create(&dev, dir, DEVICE_BYTES, NULL, 0);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO)
		return test_skip("cannot create a loop device");
	if (ret < 0)
		return test_fail("loop device: %s", strerror(-ret));
	on_device = true;
	buffered_fd = open(dev.path, O_RDWR | O_CLOEXEC);
	direct_fd = open(dev.path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (buffered_fd < 0 || direct_fd < 0 || edges_setup())
		ret = test_fail("open %s: %m", dev.path);
	else
		run_low(1, edges_thread, &list, 0);
	if (buffered_fd >= 0)
		close(buffered_fd);
	if (direct_fd >= 0)
		close(direct_fd);
	loopdev_destroy(&dev);
	return ret;
}

/* ---- release: a call in flight takes the new allowance -------------------------------- */

struct long_call {
	int fd;
	bool write;
	char *buf;
	size_t count;
	_Atomic pid_t tid;
	_Atomic long ret;  /* -2 until the call returned */
	long pieces;       /* read or write syscalls the call made */
};

/* This thread's read (syscr) or write (syscw) syscalls so far, read with raw syscalls. */
static long syscalls_so_far(bool write)
{
	char text[512], *at;
	int fd = (int)syscall(SYS_open, "/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	long n = fd < 0 ? -1 : syscall(SYS_read, fd, text, sizeof(text) - 1);

	if (fd >= 0)
		syscall(SYS_close, fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	at = strstr(text, write ? "syscw: " : "syscr: ");
	return at ? strtol(at + 7, NULL, 10) : -1;
}

static void *long_call_thread(void *arg)
{
	struct long_call *c = arg;
	long before, after;

	be_low();
	before = syscalls_so_far(c->write);
	atomic_store(&c->tid, (pid_t)syscall(SYS_gettid));
	atomic_store(&c->ret, c->write ? pwrite(c->fd, c->buf, c->count, 0)
				       : pread(c->fd, c->buf, c->count, 0));
	after = syscalls_so_far(c->write);
	/* Less the read of /proc that took the first count, counted after it. */
	c->pieces = after - before - !c->write;
	return NULL;
}

#define PATIENCE_S 40

/* Begun held at 16 KiB pieces, then the gate opens at @cap with @chunk: how many pieces? */
static void released_call(const char *what, struct long_call *c, uint32_t cap, uint32_t chunk,
			  long most)
{
	pthread_t t;
	int i;

	pin_region(0, CHUNK);
	atomic_store(&c->ret, -2);
	atomic_store(&c->tid, 0);
	if (!EXPECT(pthread_create(&t, NULL, long_call_thread, c) == 0, "pthread_create"))
		return;
	for (i = 0; i < PATIENCE_S * 100; i++) {
		pid_t tid = atomic_load(&c->tid);

		if (atomic_load(&c->ret) != -2 || (tid && adaptive_worker_in_futex(tid)))
			break;
		usleep(10000);
	}
	EXPECT(atomic_load(&c->ret) == -2, "%s: the call did not wait while held", what);
	atomic_store(&region->chunk, chunk);
	low_gate_set_cap(&region->gate, cap, 0);
	pthread_join(t, NULL);
	EXPECT(atomic_load(&c->ret) == (long)c->count && c->pieces >= 1 && c->pieces <= most,
	       "%s: returned %ld in %ld pieces (at most %ld: the allowance in force when each "
	       "piece went)", what, atomic_load(&c->ret), c->pieces, most);
}

/* A chunk of one byte, as a garbled region could hold: pieces of a page at the least. */
static void tiny_chunk(struct long_call *c)
{
	pthread_t t;

	pin_region(2, 1);
	c->count = MiB;
	if (!EXPECT(pthread_create(&t, NULL, long_call_thread, c) == 0, "pthread_create"))
		return;
	pthread_join(t, NULL);
	EXPECT(atomic_load(&c->ret) == MiB && c->pieces <= 256,
	       "pread of 1 MiB at a chunk of 1 byte: returned %ld in %ld pieces (at most 256)",
	       atomic_load(&c->ret), c->pieces);
}

/*
 * The shim reads the device's request size (sysfs) once per fd at the fd's first cut call,
 * a read syscall of the calling thread's: made here, before the calls whose reads count.
 */
static void first_cut(struct long_call *c)
{
	size_t count = c->count;
	pthread_t t;

	pin_region(2, CHUNK);
	c->count = 4 * CHUNK;
	if (EXPECT(pthread_create(&t, NULL, long_call_thread, c) == 0, "pthread_create"))
		pthread_join(t, NULL);
	c->count = count;
}

/* The pieces of @count at a chunk of @chunk on @fd's device, whose requests may be smaller. */
static long pieces_at(int fd, size_t count, size_t chunk)
{
	char path[96];
	struct stat st;
	unsigned long kb = 0;
	FILE *f;

	if (fstat(fd, &st) == 0)
		for (int up = 0; up < 2 && !kb; up++) {
			snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%squeue/max_sectors_kb",
				 major(st.st_dev), minor(st.st_dev), up ? "../" : "");
			f = fopen(path, "re");
			if (f && fscanf(f, "%lu", &kb) != 1)
				kb = 0;
			if (f)
				fclose(f);
		}
	while (kb && kb * 1024 < chunk)
		chunk /= 2;
	return (long)(count / chunk) + 1;
}

static int release_mode(void)
{
	size_t count = 64 * (size_t)MiB;
	struct long_call r = { .count = count }, w = { .write = true, .count = count };
	char *buf = aligned(count);

	r.fd = open_scratch("release-read", 0);
	w.fd = open_scratch("release-write", O_DIRECT);
	if (!buf || r.fd < 0 || w.fd < 0 || ftruncate(r.fd, (off_t)count))
		return test_fail("setup: %m");
	memset(buf, 'r', count);
	r.buf = w.buf = buf;
	first_cut(&r);
	/* One 16 KiB piece chosen while held, then the rest as one. */
	released_call("pread of 64 MiB, the tier released", &r, LOW_GATE_UNLIMITED,
		      ADAPTIVE_UNLIMITED, 2);
	released_call("O_DIRECT pwrite of 64 MiB, the tier released", &w, LOW_GATE_UNLIMITED,
		      ADAPTIVE_UNLIMITED, 2);
	/* The same, then 1 MiB pieces, or the device's request if smaller: 65. */
	released_call("pread of 64 MiB, the chunk grown to 1 MiB", &r, 4, MiB,
		      pieces_at(r.fd, count, MiB));
	released_call("O_DIRECT pwrite of 64 MiB, the chunk grown to 1 MiB", &w, 4, MiB,
		      pieces_at(w.fd, count, MiB));
	tiny_chunk(&r);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: adaptive-split atomic|edges|blockdev|release DIR\n");
		return T_EXIT_FAIL;
	}
	dir = argv[2];
	region = adaptive_worker_region_or_fail();
	if (!region)
		return T_EXIT_FAIL;
	if (!strcmp(argv[1], "atomic"))
		atomic_mode();
	else if (!strcmp(argv[1], "edges"))
		ret = edges_mode();
	else if (!strcmp(argv[1], "blockdev"))
		ret = device_mode();
	else if (!strcmp(argv[1], "release"))
		ret = release_mode();
	else
		return test_fail("unknown mode %s", argv[1]);
	return ret ? ret : test_result();
}
