// SPDX-License-Identifier: MIT
/*
 * Description: a low thread's read, write, readv, writev, preadv, pwritev, preadv2 and
 * pwritev2 under a target return exactly what the real calls return: the same value, errno
 * and file position, for full and short transfers (end of file), bad descriptors, bad and
 * half-bad buffers (EFAULT, partial copies), a nonblocking pipe (EAGAIN, a partial write).
 * Run under the shim with IOTIER_LOW=bg-* and a target; the program pins the shared region
 * it finds in its own /proc/self/maps to a finite cap and a 4 KiB chunk, with the controller
 * stopped, so that every pread and pwrite larger than 4 KiB goes through the splitter and the
 * gate (read and write, at the file position, are paced whole). Each call is made twice from
 * the same state: through libc (the shim) and as a raw syscall (the kernel's own answer). The
 * shim's counters must show that the calls were gated, and split where they may be.
 * Then, with the cap at 0 (held), a low thread's io_submit must wait at the gate (asleep in
 * futex, not returned) and go once the cap is lifted.
 * Usage: adaptive-errno DIR (a scratch directory for its files).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "test_env.h"

#define CHUNK 4096u
#define FILE_BYTES 10000 /* not a multiple of the chunk: the last piece comes up short */
#define BIG (4 * CHUNK)

static struct adaptive_region *region;
static const char *dir;
static int file_fd = -1, pipe_fds[2] = { -1, -1 };
static char *buf, *half_bad; /* half_bad: 2 pages readable, the third unmapped */
static char pattern[FILE_BYTES];
/* Bad arguments the compiler must not see through. */
static char *volatile nowhere;
static volatile int negative = -1;

/* The controller stopped, the cap finite and forever, a 4 KiB chunk: split and gated. */
static void pin_region(void)
{
	atomic_store(&region->deadline_ns, UINT64_MAX);
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	atomic_store(&region->chunk, CHUNK);
	atomic_store(&region->gate.lease_ns, 0);
	atomic_store(&region->gate.cap, 2);
}

/* ---- the states each call starts from ------------------------------------------- */

/* The file holds the pattern, the position at @pos. */
static void reset_file(off_t pos)
{
	EXPECT(syscall(SYS_ftruncate, file_fd, 0) == 0 &&
	       syscall(SYS_pwrite64, file_fd, pattern, FILE_BYTES, 0) == FILE_BYTES &&
	       syscall(SYS_lseek, file_fd, pos, SEEK_SET) == pos, "reset the file: %m");
}

/* A fresh nonblocking pipe holding @fill bytes (-1: full). */
static void reset_pipe(long fill)
{
	if (pipe_fds[0] >= 0) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
	}
	if (!EXPECT(pipe2(pipe_fds, O_NONBLOCK) == 0, "pipe2: %m"))
		return;
	while (fill != 0) {
		long n = syscall(SYS_write, pipe_fds[1], buf, fill < 0 ? CHUNK : (size_t)fill);

		if (n <= 0)
			break;
		if (fill > 0)
			fill -= n;
	}
}

/* ---- one call, through the shim and raw ------------------------------------------ */

struct outcome {
	long ret;
	int err;
	long pos;
};

static long pos_of(int fd)
{
	return fd < 0 ? 0 : syscall(SYS_lseek, fd, 0, SEEK_CUR);
}

/* errno is 4242 before each call: a success must leave it alone. */
#define SAME(what, fd, reset, shim_call, raw_call)                                          \
	do {                                                                               \
		struct outcome a_, b_;                                                     \
		reset;                                                                     \
		errno = 4242;                                                              \
		a_.ret = (long)(shim_call);                                                \
		a_.err = errno;                                                            \
		a_.pos = pos_of(fd);                                                       \
		reset;                                                                     \
		errno = 4242;                                                              \
		b_.ret = (raw_call);                                                       \
		b_.err = errno;                                                            \
		b_.pos = pos_of(fd);                                                       \
		EXPECT(a_.ret == b_.ret && a_.err == b_.err && a_.pos == b_.pos,           \
		       "%s: %ld errno %d pos %ld; the real call: %ld errno %d pos %ld", what, \
		       a_.ret, a_.err, a_.pos, b_.ret, b_.err, b_.pos);                    \
	} while (0)

static uint64_t splits(void)
{
	return atomic_load(&region->splits);
}

static uint64_t gate_bytes(void)
{
	return atomic_load(&region->gate.bytes);
}

/* read and write, paced whole; pread, split into 4 KiB pieces where the call is larger. */
static void plain_calls(void)
{
	uint64_t s0 = splits(), b0;
	int f = file_fd;

	SAME("read whole file", f, reset_file(0), read(f, buf, BIG),
	     syscall(SYS_read, f, buf, BIG));
	EXPECT(splits() == s0, "a read() at the file position was split");
	SAME("pread whole file", f, reset_file(0), pread(f, buf, BIG, 0),
	     syscall(SYS_pread64, f, buf, BIG, 0));
	EXPECT(splits() == s0 + 1, "a pread larger than the chunk was not split (%llu splits)",
	       (unsigned long long)(splits() - s0));
	reset_file(0);
	EXPECT(pread(f, buf, BIG, 0) == FILE_BYTES && !memcmp(buf, pattern, FILE_BYTES),
	       "a split pread did not return the file's bytes in order");
	SAME("read short at EOF", f, reset_file(9000), read(f, buf, BIG),
	     syscall(SYS_read, f, buf, BIG));
	SAME("read at EOF", f, reset_file(FILE_BYTES), read(f, buf, BIG),
	     syscall(SYS_read, f, buf, BIG));
	SAME("pread short", f, reset_file(0), pread(f, buf, BIG, 5000),
	     syscall(SYS_pread64, f, buf, BIG, 5000));
	SAME("read into a half-bad buffer", f, reset_file(0), read(f, half_bad, BIG),
	     syscall(SYS_read, f, half_bad, BIG));
	SAME("pread into a half-bad buffer", f, reset_file(0), pread(f, half_bad, BIG, 0),
	     syscall(SYS_pread64, f, half_bad, BIG, 0));
	SAME("read into NULL", f, reset_file(0), read(f, nowhere, BIG),
	     syscall(SYS_read, f, nowhere, BIG));
	SAME("read EBADF", -1, (void)0, read(-1, buf, BIG), syscall(SYS_read, -1, buf, BIG));
	SAME("write EBADF", -1, (void)0, write(-1, buf, BIG), syscall(SYS_write, -1, buf, BIG));
	SAME("write read-only fd", -1, (void)0, write(pipe_fds[0], buf, BIG),
	     syscall(SYS_write, pipe_fds[0], buf, BIG));
	b0 = gate_bytes();
	SAME("buffered write", f, reset_file(100), write(f, buf, BIG),
	     syscall(SYS_write, f, buf, BIG));
	EXPECT(gate_bytes() == b0 + BIG, "a buffered write's bytes were counted %llu times",
	       (unsigned long long)(gate_bytes() - b0));
	SAME("write from a half-bad buffer", f, reset_file(0), write(f, half_bad, BIG),
	     syscall(SYS_write, f, half_bad, BIG));
	SAME("write from NULL", f, reset_file(0), write(f, nowhere, BIG),
	     syscall(SYS_write, f, nowhere, BIG));
}

/*
 * O_DIRECT writes are device I/O: a large pwrite is split, except with O_APPEND (an
 * appender's pieces could interleave with another's); a write() at the file position is
 * paced whole. Skipped where the directory's file system has no O_DIRECT (tmpfs).
 */
static void direct_calls(void)
{
	char path[256];
	uint64_t s0;
	char *al;
	int fd;

	snprintf(path, sizeof(path), "%s/adaptive-errno-direct", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0 || posix_memalign((void **)&al, 4096, BIG)) {
		fprintf(stderr, "no O_DIRECT in %s (%m): its splits are not checked\n", dir);
		if (fd >= 0)
			close(fd);
		return;
	}
	unlink(path);
	memset(al, 'd', BIG);
	s0 = splits();
	SAME("O_DIRECT write", fd, lseek(fd, 0, SEEK_SET), write(fd, al, BIG),
	     syscall(SYS_write, fd, al, BIG));
	EXPECT(splits() == s0, "an O_DIRECT write() at the file position was split");
	SAME("O_DIRECT pwrite", fd, lseek(fd, 0, SEEK_SET), pwrite(fd, al, BIG, 0),
	     syscall(SYS_pwrite64, fd, al, BIG, 0));
	EXPECT(splits() == s0 + 1, "a large O_DIRECT pwrite was not split");
	SAME("O_DIRECT read", fd, lseek(fd, 4096, SEEK_SET), read(fd, al, BIG),
	     syscall(SYS_read, fd, al, BIG));
	SAME("O_DIRECT misaligned", fd, lseek(fd, 0, SEEK_SET), write(fd, al + 1, BIG),
	     syscall(SYS_write, fd, al + 1, BIG));
	s0 = splits();
	EXPECT(fcntl(fd, F_SETFL, O_APPEND | O_DIRECT) == 0, "F_SETFL: %m");
	SAME("O_DIRECT append", fd, syscall(SYS_ftruncate, fd, BIG), pwrite(fd, al, BIG, 0),
	     syscall(SYS_pwrite64, fd, al, BIG, 0));
	EXPECT(splits() == s0, "an O_APPEND pwrite was split");
	free(al);
	close(fd);
}

/* The vectored calls: gated whole. */
static void vector_calls(void)
{
	struct iovec iov[2] = { { buf, CHUNK }, { buf + CHUNK, 2 * CHUNK } };
	struct iovec bad[2] = { { buf, CHUNK }, { NULL, CHUNK } };
	uint64_t b0 = gate_bytes(), s0 = splits();
	int f = file_fd;

	SAME("readv", f, reset_file(0), readv(f, iov, 2), syscall(SYS_readv, f, iov, 2));
	EXPECT(gate_bytes() == b0 + FILE_BYTES, "readv was not counted at the gate (%llu bytes)",
	       (unsigned long long)(gate_bytes() - b0));
	EXPECT(splits() == s0, "a vectored call was split");
	SAME("readv short", f, reset_file(9000), readv(f, iov, 2), syscall(SYS_readv, f, iov, 2));
	SAME("readv bad iovec", f, reset_file(0), readv(f, bad, 2), syscall(SYS_readv, f, bad, 2));
	SAME("readv EINVAL", f, reset_file(0), readv(f, iov, negative),
	     syscall(SYS_readv, f, iov, negative));
	SAME("writev", f, reset_file(0), writev(f, iov, 2), syscall(SYS_writev, f, iov, 2));
	SAME("writev bad iovec", f, reset_file(0), writev(f, bad, 2), syscall(SYS_writev, f, bad, 2));
	SAME("writev EBADF", -1, (void)0, writev(-1, iov, 2), syscall(SYS_writev, -1, iov, 2));
	SAME("preadv", f, reset_file(0), preadv(f, iov, 2, 3000),
	     syscall(SYS_preadv, f, iov, 2, 3000, 0));
	SAME("pwritev", f, reset_file(0), pwritev(f, iov, 2, 3000),
	     syscall(SYS_pwritev, f, iov, 2, 3000, 0));
	SAME("preadv2", f, reset_file(0), preadv2(f, iov, 2, 0, 0),
	     syscall(SYS_preadv2, f, iov, 2, 0, 0, 0));
	SAME("preadv2 at the position", f, reset_file(500), preadv2(f, iov, 2, -1, 0),
	     syscall(SYS_preadv2, f, iov, 2, -1L, -1L, 0));
	SAME("preadv2 NOWAIT", f, reset_file(0), preadv2(f, iov, 2, 0, RWF_NOWAIT),
	     syscall(SYS_preadv2, f, iov, 2, 0, 0, RWF_NOWAIT));
	SAME("pwritev2 at the position", f, reset_file(500), pwritev2(f, iov, 2, -1, 0),
	     syscall(SYS_pwritev2, f, iov, 2, -1L, -1L, 0));
	SAME("pwritev2 bad flags", f, reset_file(0), pwritev2(f, iov, 2, 0, 0x40000000),
	     syscall(SYS_pwritev2, f, iov, 2, 0, 0, 0x40000000));
	SAME("pwritev EBADF", -1, (void)0, pwritev(-1, iov, 2, 0),
	     syscall(SYS_pwritev, -1, iov, 2, 0, 0));
}

/* Pipes are left alone: nonblocking answers and partial writes come through as they are. */
static void pipe_calls(void)
{
	struct iovec iov[2] = { { buf, CHUNK }, { buf + CHUNK, 2 * CHUNK } };
	uint64_t b0 = gate_bytes(), s0 = splits();
	int r, w;

	reset_pipe(0);
	r = pipe_fds[0];
	w = pipe_fds[1];
	SAME("read an empty pipe", -1, reset_pipe(0), read(r, buf, BIG),
	     syscall(SYS_read, r, buf, BIG));
	SAME("readv an empty pipe", -1, reset_pipe(0), readv(r, iov, 2), syscall(SYS_readv, r, iov, 2));
	SAME("read a pipe short", -1, reset_pipe(100), read(r, buf, BIG),
	     syscall(SYS_read, r, buf, BIG));
	SAME("write a full pipe", -1, reset_pipe(-1), write(w, buf, BIG),
	     syscall(SYS_write, w, buf, BIG));
	SAME("writev a full pipe", -1, reset_pipe(-1), writev(w, iov, 2),
	     syscall(SYS_writev, w, iov, 2));
	SAME("write a pipe partly", -1, reset_pipe(65536 - 1000), write(w, buf, BIG),
	     syscall(SYS_write, w, buf, BIG));
	EXPECT(gate_bytes() == b0 && splits() == s0, "a pipe went through the gate");
}

static void *low_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "bg-errno", 0, 0, 0);
	plain_calls();
	/* Tagged by its first I/O: under a target, be:7 rather than idle (docs/adaptive.md). */
	EXPECT(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) ==
	       IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7), "a low thread under a target runs at %#lx, "
	       "not be:7", syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	direct_calls();
	vector_calls();
	pipe_calls();
	return NULL;
}

/* ---- held: an async submission waits at the gate while the cap is 0 ------------------ */

#define PATIENCE_S 40 /* far longer than any wait here needs, within the test's timeout */

static _Atomic pid_t aio_tid;
static _Atomic long aio_result = -2; /* -2: io_submit has not returned */

/* A libaio-style submission through syscall(), as libaio itself makes it. */
static void *aio_thread(void *arg)
{
	aio_context_t ctx = 0;
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t)file_fd,
			   .aio_buf = (uint64_t)(uintptr_t)buf, .aio_nbytes = CHUNK };
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;

	(void)arg;
	prctl(PR_SET_NAME, "bg-aio", 0, 0, 0);
	atomic_store(&aio_tid, (pid_t)syscall(SYS_gettid));
	if (!EXPECT(syscall(SYS_io_setup, 1, &ctx) == 0, "io_setup: %m"))
		return NULL;
	atomic_store(&aio_result, syscall(SYS_io_submit, ctx, 1, cbs));
	if (atomic_load(&aio_result) == 1)
		syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL);
	syscall(SYS_io_destroy, ctx);
	return NULL;
}

/* Poll @cond every 10 ms for up to PATIENCE_S: a state, not a time, is asserted. */
#define WAIT_FOR(cond)                                                                     \
	do {                                                                               \
		for (int i_ = 0; i_ < PATIENCE_S * 100 && !(cond); i_++)                   \
			usleep(10000);                                                     \
	} while (0)

static void held_async(void)
{
	pthread_t t;

	reset_file(0);
	low_gate_set_cap(&region->gate, 0, 0);
	if (pthread_create(&t, NULL, aio_thread, NULL) != 0) {
		EXPECT(false, "pthread_create");
		return;
	}
	/* Until it sleeps at the gate, or returned without waiting (the failure). */
	WAIT_FOR(atomic_load(&aio_result) != -2 ||
		 (atomic_load(&aio_tid) && adaptive_worker_in_futex(atomic_load(&aio_tid))));
	EXPECT(atomic_load(&aio_result) == -2 && adaptive_worker_in_futex(atomic_load(&aio_tid)),
	       "a low io_submit did not wait at the gate while held (it returned %ld)",
	       atomic_load(&aio_result));
	low_gate_set_cap(&region->gate, LOW_GATE_UNLIMITED, 0);
	WAIT_FOR(atomic_load(&aio_result) != -2);
	EXPECT(atomic_load(&aio_result) == 1, "io_submit after the release: %ld",
	       atomic_load(&aio_result));
	pthread_join(t, NULL);
}

static int setup(void)
{
	char path[256];

	for (int i = 0; i < FILE_BYTES; i++)
		pattern[i] = (char)('a' + i % 23);
	snprintf(path, sizeof(path), "%s/adaptive-errno-file", dir);
	file_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	buf = malloc(BIG);
	half_bad = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (file_fd < 0 || !buf || half_bad == MAP_FAILED || munmap(half_bad + 2 * 4096, 4096))
		return test_fail("setup: %m");
	unlink(path);
	memset(buf, 'x', BIG);
	reset_pipe(0);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: adaptive-errno DIR\n");
		return T_EXIT_FAIL;
	}
	dir = argv[1];
	region = adaptive_worker_region_or_fail();
	if (!region)
		return T_EXIT_FAIL;
	if (setup())
		return T_EXIT_FAIL;
	pin_region();
	if (pthread_create(&t, NULL, low_thread, NULL) != 0)
		return T_EXIT_FAIL;
	pthread_join(t, NULL);
	held_async();
	EXPECT(atomic_load(&region->gate.inflight) == 0, "%u slots still held",
	       atomic_load(&region->gate.inflight));
	return test_result();
}
