// SPDX-License-Identifier: MIT
/*
 * Description: the adaptive tier's signal (docs/adaptive.md, "The signal"): which of a high
 * thread's reads land in the window. On ext4 on a loop device, a worker under the shim with
 * a target whose window outlasts the test (read.p99<=5s: 80 s, so no step empties it) does:
 * - read, readv, preadv, preadv2, pread and __read_chk on an O_DIRECT file: each adds one
 *   read to the window; a failed read (a misaligned buffer: EINVAL) and a pipe add none;
 * - buffered reads of cached pages (page-cache hits, about 1 us): next to none land;
 * - buffered reads after POSIX_FADV_DONTNEED (each reaches the loop device): some land.
 * Every call returns what it would without the shim and leaves errno alone (a sentinel
 * survives a success; a failure sets the kernel's). Counts, not times, are asserted: a hit
 * may be preempted past the floor now and then, so hits may land in a tenth of the calls.
 * Usage: signal-test SHIM_PRELOAD; the worker is this program with "worker FILE".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "cleanup.h"
#include "scratch_fs.h"
#include "test_env.h"

#define FILE_BYTES (16u << 20)
#define BLOCK 4096u
#define HITS 1000
#define MISSES 32
#define SENTINEL EXDEV /* an errno no read here sets */

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);

/* ---- the worker, under the shim ---------------------------------------------------- */

static struct adaptive_region *region;

/* The high reads noted in the current window, over every slot. */
static uint64_t noted(void)
{
	return adaptive_worker_noted(region);
}

/* One read call: @ret is what it returned, @want what it must; @adds what the window gains. */
static void expect_read(const char *what, uint64_t before, ssize_t ret, ssize_t want,
			int want_errno, uint64_t adds)
{
	int err = errno;
	uint64_t after = noted();

	EXPECT(ret == want, "%s returned %zd, not %zd (errno %d)", what, ret, want, err);
	EXPECT(err == want_errno, "%s: errno %d, not %d", what, err, want_errno);
	EXPECT(after == before + adds, "%s: %llu reads noted, not %llu", what,
	       (unsigned long long)(after - before), (unsigned long long)adds);
}

#define CHECK_READ(call, want, want_errno, adds)                                           \
	do {                                                                               \
		uint64_t before_ = noted();                                                \
		ssize_t ret_;                                                              \
		errno = SENTINEL;                                                          \
		ret_ = (call);                                                             \
		expect_read(#call, before_, ret_, want, want_errno, adds);                 \
	} while (0)

static void direct_reads(const char *path, char *buf)
{
	struct iovec iov = { buf, BLOCK };
	int fd = open(path, O_RDONLY | O_DIRECT), pipefd[2];

	if (!EXPECT(fd >= 0, "open %s O_DIRECT: %m", path) || !EXPECT(pipe(pipefd) == 0, "pipe"))
		return;
	CHECK_READ(read(fd, buf, BLOCK), BLOCK, SENTINEL, 1);
	CHECK_READ(readv(fd, &iov, 1), BLOCK, SENTINEL, 1);
	CHECK_READ(preadv(fd, &iov, 1, 8 * BLOCK), BLOCK, SENTINEL, 1);
	CHECK_READ(preadv2(fd, &iov, 1, 16 * BLOCK, 0), BLOCK, SENTINEL, 1);
	CHECK_READ(pread(fd, buf, BLOCK, 24 * BLOCK), BLOCK, SENTINEL, 1);
	CHECK_READ(__read_chk(fd, buf, BLOCK, BLOCK), BLOCK, SENTINEL, 1);
	/* A failure moved nothing: not noted, and its errno is the kernel's. */
	CHECK_READ(read(fd, buf + 1, BLOCK), -1, EINVAL, 0);
	CHECK_READ(pread(fd, buf, BLOCK, FILE_BYTES), 0, SENTINEL, 0); /* the end of the file */
	/* A pipe is not the disk. */
	if (EXPECT(write(pipefd[1], "x", 1) == 1, "write to the pipe"))
		CHECK_READ(read(pipefd[0], buf, 1), 1, SENTINEL, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	close(fd);
}

static void buffered_reads(const char *path, char *buf)
{
	struct iovec iov = { buf, BLOCK };
	int fd = open(path, O_RDONLY);
	uint64_t before, hits, misses;

	if (!EXPECT(fd >= 0, "open %s: %m", path))
		return;
	EXPECT(pread(fd, buf, BLOCK, 0) == BLOCK, "warm-up pread: %m");
	before = noted();
	for (int i = 0; i < HITS; i++) {
		errno = SENTINEL;
		EXPECT((i & 1 ? pread(fd, buf, BLOCK, 0) : preadv(fd, &iov, 1, 0)) == BLOCK &&
		       errno == SENTINEL, "a cached read failed or set errno %d", errno);
	}
	hits = noted() - before;
	before = noted();
	for (int i = 0; i < MISSES; i++) {
		off_t off = (off_t)(i * (FILE_BYTES / MISSES) + BLOCK);

		EXPECT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0, "fadvise DONTNEED");
		errno = SENTINEL;
		EXPECT((i & 1 ? pread(fd, buf, BLOCK, off)
			      : (lseek(fd, off, SEEK_SET) == off ? read(fd, buf, BLOCK) : -1)) ==
			       BLOCK && errno == SENTINEL,
		       "an uncached read failed or set errno %d", errno);
	}
	misses = noted() - before;
	fprintf(stderr, "buffered: %llu of %d hits noted, %llu of %d misses noted\n",
		(unsigned long long)hits, HITS, (unsigned long long)misses, MISSES);
	EXPECT(hits < HITS / 10, "page-cache hits were noted: %llu of %d",
	       (unsigned long long)hits, HITS);
	EXPECT(misses > 0, "no buffered read that reached the device was noted");
	close(fd);
}

static int worker(const char *path)
{
	char *buf;

	region = adaptive_worker_region();
	if (!region) {
		fprintf(stderr, "FAIL: no %s mapping: is the shim preloaded with a target?\n",
			ADAPTIVE_REGION_NAME);
		return T_EXIT_FAIL;
	}
	if (posix_memalign((void **)&buf, BLOCK, 2 * BLOCK))
		return T_EXIT_FAIL;
	direct_reads(path, buf);
	buffered_reads(path, buf);
	/* A step would have emptied the window between two counts: then nothing above holds. */
	EXPECT(region->ctl.windows == 0, "the controller stepped during the test (%llu windows)",
	       (unsigned long long)region->ctl.windows);
	free(buf);
	return test_result();
}

/* ---- the orchestrator ------------------------------------------------------------- */

static struct scratch_fs fs;

/* The file the worker reads, written and synced so that its pages can be dropped. */
static int make_file(const char *path)
{
	char *buf = malloc(1u << 20);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), ok = fd >= 0 && buf;

	for (unsigned i = 0; ok && i < FILE_BYTES >> 20; i++) {
		memset(buf, (int)i, 1u << 20);
		ok = write(fd, buf, 1u << 20) == 1 << 20;
	}
	ok = ok && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok ? 0 : test_fail("write %s: %m", path);
}

int main(int argc, char **argv)
{
	static const char *const mkfs_args[] = { "-E", "lazy_itable_init=0,lazy_journal_init=0",
						 NULL };
	const struct scratch_fs_opts opts = {
		.bytes = 64u << 20, .scheduler = "mq-deadline", .type = "ext4",
		.mkfs_args = mkfs_args, .mnt = "/tmp/iotier-signal.XXXXXX",
	};
	char path[sizeof(fs.mnt) + 16];
	int ret;

	if (argc == 3 && !strcmp(argv[1], "worker"))
		return worker(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: signal-test SHIM_PRELOAD\n");
		return T_EXIT_FAIL;
	}
	if (geteuid() != 0)
		return test_skip("needs root for a loop device");
	if (adaptive_worker_kill_on_exit() < 0)
		return T_EXIT_FAIL;
	ret = scratch_fs_create(&fs, &opts);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/data", fs.mnt);
	ret = make_file(path);
	if (!ret)
		ret = adaptive_worker_run(argv[0], argv[1], "read.p99<=5s", NULL,
					  (const char *const[]){ path, NULL });
	scratch_fs_destroy(&fs);
	return ret;
}
