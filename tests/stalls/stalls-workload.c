// SPDX-License-Identifier: MIT
/*
 * Description: the workload of tests/stalls/stalls-test.c. A process with three named
 * threads: "stall-writer" dirties MIB MiB of page cache in DIR/bulk.dat with buffered
 * writes (throttled when vm.dirty_bytes is tiny), then makes a known number of fsync-like
 * calls: 5 fdatasync, 3 sync_file_range with both wait flags (each an fsync stall), and 7
 * sync_file_range with SYNC_FILE_RANGE_WRITE alone (no wait: not a stall). "stall-idle"
 * only sleeps, so it must have no stalls at all. Unless "now" is given, the threads wait for
 * one byte on stdin first, so a tracer can attach to the running process.
 *
 * usage: stalls-workload DIR MIB [now]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FDATASYNCS 5
#define WAITING_RANGES 3
#define WRITE_ONLY_RANGES 7

static const char *dir;
static long mib;
static pthread_barrier_t done;

static void *writer(void *arg)
{
	static char buf[1 << 20];
	char path[4096];
	int fd;

	(void)arg;
	pthread_setname_np(pthread_self(), "stall-writer");
	snprintf(path, sizeof(path), "%s/bulk.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	memset(buf, 'w', sizeof(buf));
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			exit(1);
		}
	for (int i = 0; i < FDATASYNCS; i++)
		if (pwrite(fd, buf, 4096, 0) != 4096 || fdatasync(fd) < 0) {
			perror("fdatasync");
			exit(1);
		}
	for (int i = 0; i < WAITING_RANGES + WRITE_ONLY_RANGES; i++) {
		unsigned flags = i < WAITING_RANGES ? SYNC_FILE_RANGE_WAIT_BEFORE |
			SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER : SYNC_FILE_RANGE_WRITE;

		if (pwrite(fd, buf, 4096, 4096) != 4096 || sync_file_range(fd, 0, 0, flags) < 0) {
			perror("sync_file_range");
			exit(1);
		}
	}
	close(fd);
	pthread_barrier_wait(&done);
	return NULL;
}

static void *idle(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "stall-idle");
	pthread_barrier_wait(&done);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, i;
	char c;

	if (argc < 3) {
		fprintf(stderr, "usage: stalls-workload DIR MIB [now]\n");
		return 2;
	}
	dir = argv[1];
	mib = atol(argv[2]);
	pthread_setname_np(pthread_self(), "stall-main");
	pthread_barrier_init(&done, NULL, 3);
	if (pthread_create(&i, NULL, idle, NULL))
		return 1;
	/* Wait for the tracer, with the idle thread already there to be seen doing nothing. */
	if ((argc < 4 || strcmp(argv[3], "now")) && read(0, &c, 1) != 1)
		return 1;
	if (pthread_create(&w, NULL, writer, NULL))
		return 1;
	pthread_barrier_wait(&done);
	pthread_join(w, NULL);
	pthread_join(i, NULL);
	return 0;
}
