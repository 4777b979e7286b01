// SPDX-License-Identifier: MIT
/*
 * check-workload.c: the program the `iotier check` tests run under the shim. It does a
 * known amount of I/O from two named threads, so the test can hold the report to exact
 * numbers: "bg-writer" writes WRITE_BYTES to WFILE in 64 KiB pwrite()s, and "fg-reader" does
 * READS direct 4 KiB pread()s of RFILE, 64 KiB apart so that no two can merge. Threads are
 * named with prctl(PR_SET_NAME), which the shim sees, before their first I/O.
 *
 * usage: check-workload direct|buffered WFILE WRITE_BYTES RFILE READS [--self-ioprio]
 *   direct    bg-writer overwrites the existing WFILE with O_DIRECT
 *   buffered  bg-writer creates WFILE and writes through the page cache, without fsync, so
 *             the kernel's flusher writes it back
 *   --self-ioprio  bg-writer sets idle itself (to exercise attribution without the shim)
 * Exits 0 when all I/O succeeded, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WRITE_CHUNK (64 * 1024)
#define READ_SIZE 4096
#define READ_STRIDE (64 * 1024)

static const char *wfile, *rfile;
static bool direct, self_ioprio;
static unsigned long long write_bytes;
static unsigned long reads;

/* Open @path with @flags and make @n transfers of @size, @stride apart. 0, or -1 said. */
static int transfer(const char *path, int flags, bool write, void *buf, size_t size,
		    unsigned long long n, unsigned long long stride)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0) {
		fprintf(stderr, "check-workload: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (unsigned long long i = 0; i < n; i++) {
		off_t off = (off_t)(i * stride);
		ssize_t done = write ? pwrite(fd, buf, size, off) : pread(fd, buf, size, off);

		if (done != (ssize_t)size) {
			fprintf(stderr, "check-workload: %s %s: %s\n", write ? "pwrite" : "pread",
				path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

static void *writer(void *arg)
{
	int flags = direct ? O_WRONLY | O_DIRECT : O_WRONLY | O_CREAT | O_EXCL;
	void *buf = NULL;
	int *ret = arg;

	prctl(PR_SET_NAME, "bg-writer");
	if (self_ioprio &&
	    syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) < 0) {
		perror("check-workload: ioprio_set");
		return NULL;
	}
	if (posix_memalign(&buf, 4096, WRITE_CHUNK))
		return NULL;
	memset(buf, 0x5a, WRITE_CHUNK);
	if (transfer(wfile, flags, true, buf, WRITE_CHUNK,
		     (write_bytes + WRITE_CHUNK - 1) / WRITE_CHUNK, WRITE_CHUNK) == 0)
		*ret = 0;
	free(buf);
	return NULL;
}

static void *reader(void *arg)
{
	void *buf = NULL;
	int *ret = arg;

	prctl(PR_SET_NAME, "fg-reader");
	if (posix_memalign(&buf, 4096, READ_SIZE))
		return NULL;
	if (transfer(rfile, O_RDONLY | O_DIRECT, false, buf, READ_SIZE, reads, READ_STRIDE) == 0)
		*ret = 0;
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int wret = 1, rret = 1;
	pthread_t w, r;

	if (argc < 6 || (strcmp(argv[1], "direct") && strcmp(argv[1], "buffered"))) {
		fprintf(stderr, "usage: check-workload direct|buffered WFILE WRITE_BYTES RFILE READS "
			"[--self-ioprio]\n");
		return 2;
	}
	direct = !strcmp(argv[1], "direct");
	wfile = argv[2];
	write_bytes = strtoull(argv[3], NULL, 0);
	rfile = argv[4];
	reads = strtoul(argv[5], NULL, 0);
	self_ioprio = argc > 6 && !strcmp(argv[6], "--self-ioprio");
	if (pthread_create(&w, NULL, writer, &wret) || pthread_create(&r, NULL, reader, &rret)) {
		fprintf(stderr, "check-workload: pthread_create failed\n");
		return 1;
	}
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	return wret || rret ? 1 : 0;
}
