// SPDX-License-Identifier: MIT
/*
 * check-workload.c: the program the `iotier check` tests run under the shim. It does a
 * known amount of I/O from two named threads, so the test can hold the report to exact
 * numbers: "bg-writer" writes WRITE_BYTES to WFILE in 64 KiB pwrite()s, and "fg-reader" does
 * READS direct 4 KiB pread()s of RFILE, 64 KiB apart so that no two can merge. Threads are
 * named with prctl(PR_SET_NAME), which the shim sees, before their first I/O.
 *
 * usage: check-workload direct|buffered|retitle WFILE WRITE_BYTES RFILE READS [--self-ioprio]
 *   direct    bg-writer overwrites the existing WFILE with O_DIRECT
 *   buffered  bg-writer creates WFILE and writes through the page cache, without fsync, so
 *             the kernel's flusher writes it back
 *   retitle   no threads and no writes: a forked child retitles itself RETITLE (in place in
 *             argv, no exec) and does the first half of the reads, then the parent the rest
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
#include <sys/wait.h>
#include <unistd.h>

#define WRITE_CHUNK (64 * 1024)
#define READ_SIZE 4096
#define READ_STRIDE (64 * 1024)
#define RETITLE "cw: autovacuum worker"

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

/* Direct 4 KiB reads number @from to @to - 1 of RFILE. Returns 0 or -1. */
static int read_range(unsigned long from, unsigned long to)
{
	void *buf = NULL;
	int fd, ret = 0;

	if (posix_memalign(&buf, 4096, READ_SIZE))
		return -1;
	fd = open(rfile, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "check-workload: open %s: %s\n", rfile, strerror(errno));
		free(buf);
		return -1;
	}
	for (unsigned long i = from; i < to && !ret; i++)
		if (pread(fd, buf, READ_SIZE, (off_t)i * READ_STRIDE) != READ_SIZE) {
			fprintf(stderr, "check-workload: pread %s: %s\n", rfile, strerror(errno));
			ret = -1;
		}
	close(fd);
	free(buf);
	return ret;
}

static void *reader(void *arg)
{
	int *ret = arg;

	prctl(PR_SET_NAME, "fg-reader");
	*ret = read_range(0, reads);
	return NULL;
}

/*
 * retitle: as a PostgreSQL postmaster starts an autovacuum worker. The child forks without
 * exec, overwrites its argument area with RETITLE (NUL-padded, as PostgreSQL does), then
 * does the first half of the reads; the parent waits for it and does the second half.
 */
static int retitle(int argc, char **argv)
{
	char *area = argv[0];
	size_t area_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - area);
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("check-workload: fork");
		return 1;
	}
	if (pid == 0) {
		rfile = strdup(rfile); /* it points into the area about to be overwritten */
		if (!rfile)
			_exit(1);
		memset(area, 0, area_len);
		memcpy(area, RETITLE, strlen(RETITLE) < area_len ? strlen(RETITLE) : area_len - 1);
		_exit(read_range(0, reads / 2) ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return read_range(reads / 2, reads) ? 1 : 0;
}

int main(int argc, char **argv)
{
	int wret = 1, rret = 1;
	pthread_t w, r;

	if (argc < 6 || (strcmp(argv[1], "direct") && strcmp(argv[1], "buffered") &&
			 strcmp(argv[1], "retitle"))) {
		fprintf(stderr, "usage: check-workload direct|buffered|retitle WFILE WRITE_BYTES "
			"RFILE READS [--self-ioprio]\n");
		return 2;
	}
	direct = !strcmp(argv[1], "direct");
	wfile = argv[2];
	write_bytes = strtoull(argv[3], NULL, 0);
	rfile = argv[4];
	reads = strtoul(argv[5], NULL, 0);
	if (!strcmp(argv[1], "retitle"))
		return retitle(argc, argv);
	self_ioprio = argc > 6 && !strcmp(argv[6], "--self-ioprio");
	if (pthread_create(&w, NULL, writer, &wret) || pthread_create(&r, NULL, reader, &rret)) {
		fprintf(stderr, "check-workload: pthread_create failed\n");
		return 1;
	}
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	return wret || rret ? 1 : 0;
}
