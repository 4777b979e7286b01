// SPDX-License-Identifier: MIT
/*
 * Description: a descriptor number reused without open or close is followed (issue 25,
 * case 6). A number is first read by a low thread as a regular file, so the shim knows it as
 * one and gates its I/O; then it is made to name the read end of an empty pipe, one way a
 * round: dup2, dup3, dup, fcntl(F_DUPFD) and fcntl(F_DUPFD_CLOEXEC) (through both fcntl and
 * fcntl64), close_range and closefrom followed by pipe2. With the controller stopped and the
 * gate's cap at 1, a low thread then blocks reading the pipe: it must hold no gate slot, and
 * another low thread's pread of a file must go through while it blocks; with the cap at 0
 * (held), the pipe's read must not wait at the gate at all. F_SETFL is followed too: an
 * O_DIRECT file whose O_DIRECT is cleared is a buffered file again, whose page-cache hits
 * a high thread's window must not count as device reads. The failing calls
 * (a bad fd, equal numbers for dup3, bad flags, an empty range) return what the raw syscalls
 * return, with the same errno; a successful one leaves errno alone.
 * Run under the shim with IOTIER_LOW=bg-* and a target, as adaptive-errno is.
 * Usage: fd-reuse-test DIR (a scratch directory for its files).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "small_file.h"
#include "test_env.h"

#define PATIENCE_S 20 /* far longer than any wait here needs, within the test's timeout */
#define OTHER_WAIT_S 5 /* the other reader's pread: a page-cache hit, given this long */

static struct adaptive_region *region;
static int other_fd = -1;    /* the file the other low thread reads */
static char file_path[256];  /* the file each round's number is first opened on */
static char other_path[256];

/* fcntl itself, as a program built without -D_FILE_OFFSET_BITS=64 calls it (not fcntl64). */
static int (*plain_fcntl)(int, int, ...);

/* Poll @cond every 10 ms for up to @secs: a state, not a time, is asserted. */
#define WAIT_FOR(cond, secs)                                                               \
	do {                                                                               \
		for (int i_ = 0; i_ < (secs) * 100 && !(cond); i_++)                       \
			usleep(10000);                                                     \
	} while (0)

static bool in_syscall(pid_t tid, long nr)
{
	char path[64];
	long now = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &now) != 1)
		now = -1;
	fclose(f);
	return now == nr;
}

/* ---- the low threads ------------------------------------------------------------ */

struct low_read {
	const char *name; /* bg-*: the low tier */
	int fd;
	off_t off;        /* -1: read(), else pread() */
	_Atomic pid_t tid;
	_Atomic long ret; /* -2 until the call returned */
};

static void *low_reader(void *arg)
{
	struct low_read *r = arg;
	char buf[4096];

	prctl(PR_SET_NAME, r->name, 0, 0, 0);
	atomic_store(&r->tid, (pid_t)syscall(SYS_gettid));
	atomic_store(&r->ret, r->off < 0 ? read(r->fd, buf, sizeof(buf))
				       : pread(r->fd, buf, sizeof(buf), r->off));
	return NULL;
}

static bool start(pthread_t *t, struct low_read *r, const char *name, int fd, off_t off)
{
	*r = (struct low_read){ .name = name, .fd = fd, .off = off, .ret = -2 };
	return EXPECT(pthread_create(t, NULL, low_reader, r) == 0, "pthread_create");
}

/* A low thread reads @fd once as a file: the shim learns its kind and gates the read. */
static bool seen_as_file(int fd)
{
	uint64_t b0 = atomic_load(&region->gate.bytes);
	struct low_read r;
	pthread_t t;

	if (!start(&t, &r, "bg-first", fd, 0))
		return false;
	pthread_join(t, NULL);
	return EXPECT(atomic_load(&r.ret) > 0, "the first read of the file: %ld",
		      atomic_load(&r.ret)) &&
	       EXPECT(atomic_load(&region->gate.bytes) > b0,
		      "the first read of the file did not pass the gate");
}

/* ---- the ways a number comes to name a pipe ------------------------------------- */

/*
 * Each makes @fd name the read end of a new empty pipe and returns the write end, or -1.
 * A close the shim must not see is a raw syscall.
 */
typedef int replace_fn(int fd);

static int with_pipe(int p[2])
{
	return EXPECT(pipe2(p, O_CLOEXEC) == 0, "pipe2: %m") ? 0 : -1;
}

static int by_dup2(int fd)
{
	int p[2];

	if (with_pipe(p) || !EXPECT(dup2(p[0], fd) == fd, "dup2: %m"))
		return -1;
	close(p[0]);
	return p[1];
}

static int by_dup3(int fd)
{
	int p[2];

	if (with_pipe(p) || !EXPECT(dup3(p[0], fd, O_CLOEXEC) == fd, "dup3: %m"))
		return -1;
	close(p[0]);
	return p[1];
}

/* dup and F_DUPFD take the lowest free number: @fd, closed behind the shim's back. */
static int by_dup(int fd)
{
	int p[2];

	if (with_pipe(p) || syscall(SYS_close, fd) || !EXPECT(dup(p[0]) == fd, "dup: %m"))
		return -1;
	close(p[0]);
	return p[1];
}

static int dupfd(int fd, int cmd, bool plain)
{
	int p[2], got;

	if (with_pipe(p) || syscall(SYS_close, fd))
		return -1;
	got = plain ? plain_fcntl(p[0], cmd, fd) : fcntl(p[0], cmd, fd);
	if (!EXPECT(got == fd, "F_DUPFD%s: %d (%m)", cmd == F_DUPFD ? "" : "_CLOEXEC", got))
		return -1;
	close(p[0]);
	return p[1];
}

static int by_dupfd64(int fd)
{
	return dupfd(fd, F_DUPFD, false);
}

static int by_dupfd_cloexec64(int fd)
{
	return dupfd(fd, F_DUPFD_CLOEXEC, false);
}

static int by_dupfd(int fd)
{
	return dupfd(fd, F_DUPFD, true);
}

static int by_dupfd_cloexec(int fd)
{
	return dupfd(fd, F_DUPFD_CLOEXEC, true);
}

/* The pipe takes the lowest free numbers: @fd for its read end. */
static int by_close_range(int fd)
{
	int p[2];

	if (!EXPECT(close_range((unsigned)fd, (unsigned)fd, 0) == 0, "close_range: %m") ||
	    with_pipe(p) || !EXPECT(p[0] == fd, "the pipe got %d, not %d", p[0], fd))
		return -1;
	return p[1];
}

/* The highest open number, -1 when /proc/self/fd cannot be read. */
static int highest_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	int high = -1, own;
	struct dirent *e;

	if (!d)
		return -1;
	own = dirfd(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != own && atoi(e->d_name) > high)
			high = atoi(e->d_name);
	closedir(d);
	return high;
}

/* closefrom must close @fd alone: nothing of the program or the shim lies above it. */
static int by_closefrom(int fd)
{
	int p[2];

	if (!EXPECT(highest_fd() == fd, "fd %d is not the highest open (%d)", fd, highest_fd()))
		return -1;
	closefrom(fd);
	if (with_pipe(p) || !EXPECT(p[0] == fd, "the pipe got %d, not %d", p[0], fd))
		return -1;
	return p[1];
}

/* ---- one round ------------------------------------------------------------------ */

/*
 * While the low reader blocks on the pipe: no slot held, and the other reader goes. @held:
 * the tier is held (cap 0), where the pipe's read must reach read() all the same, and the
 * other reader would rightly wait.
 */
static void blocked_on_pipe(const char *how, int fd, int w, bool held)
{
	struct low_read pipe_r, other_r;
	pthread_t pt, ot;
	bool other_started = false;

	if (held)
		low_gate_set_cap(&region->gate, 0, 0);
	if (!start(&pt, &pipe_r, "bg-pipe", fd, -1))
		return;
	WAIT_FOR(atomic_load(&pipe_r.tid) && in_syscall(atomic_load(&pipe_r.tid), SYS_read),
		 PATIENCE_S);
	EXPECT(atomic_load(&pipe_r.ret) == -2 && in_syscall(atomic_load(&pipe_r.tid), SYS_read),
	       "%s: the pipe's reader is not blocked in read (it returned %ld)", how,
	       atomic_load(&pipe_r.ret));
	EXPECT(atomic_load(&region->gate.inflight) == 0,
	       "%s: a low read blocked on a pipe holds %u gate slots", how,
	       atomic_load(&region->gate.inflight));
	if (!held)
		other_started = start(&ot, &other_r, "bg-other", other_fd, 0);
	if (other_started) {
		WAIT_FOR(atomic_load(&other_r.ret) != -2, OTHER_WAIT_S);
		EXPECT(atomic_load(&other_r.ret) > 0,
		       "%s: another low thread's pread waited %d s behind a blocked pipe read "
		       "(%ld)", how, OTHER_WAIT_S, atomic_load(&other_r.ret));
	}
	EXPECT(write(w, "x", 1) == 1, "write the pipe: %m");
	if (held) /* a read held at the gate goes once the tier is released */
		low_gate_set_cap(&region->gate, 1, 0);
	pthread_join(pt, NULL);
	EXPECT(atomic_load(&pipe_r.ret) == 1, "%s: the pipe's read returned %ld", how,
	       atomic_load(&pipe_r.ret));
	if (other_started)
		pthread_join(ot, NULL);
}

static void round_of(const char *how, replace_fn *replace, bool held)
{
	int fd = open(file_path, O_RDONLY | O_CLOEXEC), w;

	if (!EXPECT(fd >= 0, "open %s: %m", file_path))
		return;
	if (seen_as_file(fd) && (w = replace(fd)) >= 0) {
		blocked_on_pipe(how, fd, w, held);
		close(w);
	}
	close(fd);
	EXPECT(atomic_load(&region->gate.inflight) == 0, "%s: %u slots still held", how,
	       atomic_load(&region->gate.inflight));
}

/* ---- O_DIRECT cleared by F_SETFL -------------------------------------------------- */

#define HITS 200

/* The high reads noted in the current window, over every slot. */
static uint64_t noted(void)
{
	return adaptive_worker_noted(region);
}

/*
 * This (high) thread reads an O_DIRECT file once, which makes it storage, whose every read
 * is noted; then clears O_DIRECT. Its page-cache hits (about 1 us) are under the window's
 * 30 us floor: a few may be preempted past it, not half of them.
 */
static void setfl_followed(void)
{
	int fd = open(file_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	uint64_t before;
	char *al;

	if (fd < 0 || posix_memalign((void **)&al, 4096, 4096)) {
		if (EXPECT(!test_strict(), "no O_DIRECT for %s: %m", file_path))
			fprintf(stderr, "no O_DIRECT for %s: F_SETFL is not checked\n", file_path);
		if (fd >= 0)
			close(fd);
		return;
	}
	before = noted();
	EXPECT(pread(fd, al, 4096, 0) > 0, "O_DIRECT pread: %m");
	EXPECT(noted() == before + 1, "an O_DIRECT read was not noted");
	EXPECT(fcntl(fd, F_SETFL, 0) == 0, "F_SETFL: %m");
	EXPECT(pread(fd, al, 4096, 0) > 0, "buffered pread: %m"); /* the page is cached now */
	before = noted();
	for (int i = 0; i < HITS; i++)
		pread(fd, al, 4096, 0);
	EXPECT(noted() - before < HITS / 2, "%llu of %d page-cache hits after F_SETFL cleared "
	       "O_DIRECT were noted as device reads", (unsigned long long)(noted() - before),
	       HITS);
	free(al);
	close(fd);
}

/* ---- results and errno ---------------------------------------------------------- */

/* errno is 4242 before each call: a success must leave it alone. */
#define SAME(what, shim_call, raw_call)                                                     \
	do {                                                                               \
		long a_, b_;                                                               \
		int ea_, eb_;                                                              \
		errno = 4242;                                                              \
		a_ = (long)(shim_call);                                                    \
		ea_ = errno;                                                               \
		if (a_ >= 0 && a_ != fd)                                                   \
			close((int)a_);                                                    \
		errno = 4242;                                                              \
		b_ = (raw_call);                                                           \
		eb_ = errno;                                                               \
		if (b_ >= 0 && b_ != fd)                                                   \
			close((int)b_);                                                    \
		EXPECT(a_ == b_ && ea_ == eb_, "%s: %ld errno %d; the raw call: %ld errno %d", \
		       what, a_, ea_, b_, eb_);                                            \
	} while (0)

static void results(void)
{
	int fd = open(file_path, O_RDONLY | O_CLOEXEC);

	if (!EXPECT(fd >= 0, "open %s: %m", file_path))
		return;
	SAME("dup -1", dup(-1), syscall(SYS_dup, -1));
	SAME("dup2 -1", dup2(-1, fd), syscall(SYS_dup2, -1, fd));
	SAME("dup2 to -1", dup2(fd, -1), syscall(SYS_dup2, fd, -1));
	SAME("dup2 onto itself", dup2(fd, fd), syscall(SYS_dup2, fd, fd));
	SAME("dup3 onto itself", dup3(fd, fd, 0), syscall(SYS_dup3, fd, fd, 0));
	SAME("dup3 bad flags", dup3(fd, fd + 1, 0x4000), syscall(SYS_dup3, fd, fd + 1, 0x4000));
	SAME("F_DUPFD -1", fcntl(-1, F_DUPFD, 0), syscall(SYS_fcntl, -1, F_DUPFD, 0));
	SAME("F_DUPFD below 0", fcntl(fd, F_DUPFD, -1), syscall(SYS_fcntl, fd, F_DUPFD, -1));
	SAME("fcntl F_DUPFD below 0", plain_fcntl(fd, F_DUPFD, -1),
	     syscall(SYS_fcntl, fd, F_DUPFD, -1));
	SAME("F_GETFL", fcntl(fd, F_GETFL), syscall(SYS_fcntl, fd, F_GETFL));
	SAME("F_SETFL", fcntl(fd, F_SETFL, O_NONBLOCK),
	     syscall(SYS_fcntl, fd, F_SETFL, O_NONBLOCK));
	SAME("F_DUPFD", fcntl(fd, F_DUPFD, 100), syscall(SYS_fcntl, fd, F_DUPFD, 100));
	SAME("close_range empty", close_range(9, 3, 0), syscall(SYS_close_range, 9, 3, 0));
	SAME("close_range bad flags", close_range(900, 901, 0x40),
	     syscall(SYS_close_range, 900, 901, 0x40));
	SAME("close_range CLOEXEC", close_range(900, 901, CLOSE_RANGE_CLOEXEC),
	     syscall(SYS_close_range, 900, 901, CLOSE_RANGE_CLOEXEC));
	close(fd);
}

/* ---- the program ---------------------------------------------------------------- */

static int create(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	close(fd);
	return write_file(path, text);
}

static int setup(const char *dir)
{
	snprintf(file_path, sizeof(file_path), "%s/fd-reuse-file", dir);
	snprintf(other_path, sizeof(other_path), "%s/fd-reuse-other", dir);
	if (create(file_path, "a file first") || create(other_path, "another file"))
		return test_fail("setup: %m");
	other_fd = open(other_path, O_RDONLY | O_CLOEXEC);
	plain_fcntl = (int (*)(int, int, ...))dlsym(RTLD_DEFAULT, "fcntl");
	if (other_fd < 0 || !plain_fcntl)
		return test_fail("setup: %m");
	/* The controller stopped, one slot, forever: a slot held is a slot others wait for. */
	atomic_store(&region->deadline_ns, UINT64_MAX);
	region->ctl.released = 0; /* nor waiting for a reader: the cap stands */
	low_gate_set_cap(&region->gate, 1, 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *how;
		replace_fn *replace;
	} rounds[] = {
		{ "dup2", by_dup2 },
		{ "dup3", by_dup3 },
		{ "dup", by_dup },
		{ "fcntl64(F_DUPFD)", by_dupfd64 },
		{ "fcntl64(F_DUPFD_CLOEXEC)", by_dupfd_cloexec64 },
		{ "fcntl(F_DUPFD)", by_dupfd },
		{ "fcntl(F_DUPFD_CLOEXEC)", by_dupfd_cloexec },
		{ "close_range + pipe2", by_close_range },
		{ "closefrom + pipe2", by_closefrom },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: fd-reuse-test DIR\n");
		return T_EXIT_FAIL;
	}
	region = adaptive_worker_region_or_fail();
	if (!region)
		return T_EXIT_FAIL;
	if (setup(argv[1]))
		return T_EXIT_FAIL;
	for (size_t i = 0; i < sizeof(rounds) / sizeof(rounds[0]); i++)
		round_of(rounds[i].how, rounds[i].replace, false);
	round_of("dup2, held", by_dup2, true);
	setfl_followed();
	results();
	close(other_fd);
	unlink(file_path);
	unlink(other_path);
	return test_result();
}
