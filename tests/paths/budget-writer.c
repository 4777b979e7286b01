// SPDX-License-Identifier: MIT
/*
 * Description: the writer of budget-test.c. Its thread "bg-writer" (low under
 * IOTIER_LOW=bg-*) writes MIB MiB to DIR/bulk.dat in 1 MiB buffered writes and, after each
 * write returns, reads its memory cgroup's dirty and writeback bytes from STAT (a v1
 * memory.stat). It prints the largest sum it saw and the number of writes: the dirty budget
 * must bound it at the moment each write returns, whatever the device's speed.
 *
 * usage: budget-writer DIR MIB STAT
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir, *stat_path;
static long mib;
static unsigned long long max_held;
static long writes;

/* dirty + writeback of the cgroup, from memory.stat ("dirty N\n" ... "writeback N\n"). */
static unsigned long long held(void)
{
	char buf[8192], *p;
	unsigned long long sum = 0, v;
	int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if ((sscanf(p, "dirty %llu", &v) == 1 && !strncmp(p, "dirty ", 6)) ||
		    (sscanf(p, "writeback %llu", &v) == 1 && !strncmp(p, "writeback ", 10)))
			sum += v;
	return sum;
}

static void *writer(void *arg)
{
	static char buf[1 << 20];
	char path[4096];
	int fd;

	(void)arg;
	pthread_setname_np(pthread_self(), "bg-writer");
	snprintf(path, sizeof(path), "%s/bulk.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	memset(buf, 'b', sizeof(buf));
	for (long i = 0; i < mib; i++) {
		unsigned long long h;

		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			exit(1);
		}
		writes++;
		h = held();
		if (h > max_held)
			max_held = h;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 4) {
		fprintf(stderr, "usage: budget-writer DIR MIB STAT\n");
		return 2;
	}
	dir = argv[1];
	mib = atol(argv[2]);
	stat_path = argv[3];
	if (pthread_create(&t, NULL, writer, NULL) || pthread_join(t, NULL))
		return 1;
	printf("writes %ld max_held %llu\n", writes, max_held);
	return 0;
}
