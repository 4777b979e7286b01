// SPDX-License-Identifier: MIT
/*
 * diskstats.c: completed requests per device as the kernel counts them (see diskstats.h).
 */
#include "diskstats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int diskstats_read(uint32_t dev, struct diskstats *out)
{
	/* Fields 1..17 of Documentation/admin-guide/iostats.rst; older kernels stop at 11
	 * (no discards) or 15 (no flushes), whose counts then read as 0. */
	uint64_t f[17] = { 0 };
	char path[64], buf[512];
	const char *p = buf;
	ssize_t n;
	int fd, used;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", dev >> 20, dev & 0xfffff);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	for (int i = 0; i < 17 && sscanf(p, "%" SCNu64 "%n", &f[i], &used) == 1; i++)
		p += used;
	if (p == buf)
		return -EIO;
	out->completed[DISKSTATS_READ] = f[0];
	out->completed[DISKSTATS_WRITE] = f[4];
	out->completed[DISKSTATS_DISCARD] = f[11];
	out->completed[DISKSTATS_FLUSH] = f[15];
	return 0;
}

size_t diskstats_devices(bool partitions, uint32_t *devs, size_t max)
{
	const char *top = partitions ? "/sys/class/block" : "/sys/block";
	DIR *dir = opendir(top);
	struct dirent *e;
	size_t n = 0;

	if (!dir)
		return 0;
	while (n < max && (e = readdir(dir))) {
		char path[300], buf[32];
		unsigned major, minor;
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/dev", top, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		if (sscanf(buf, "%u:%u", &major, &minor) == 2)
			devs[n++] = major << 20 | minor;
	}
	closedir(dir);
	return n;
}

void diskstats_delta(const struct diskstats *before, const struct diskstats *after,
		     struct diskstats *delta)
{
	/* The counters are unsigned long in the kernel and only grow; a device that was
	 * removed and added again between the reads starts from 0: count from there. */
	for (int i = 0; i < DISKSTATS_NR_OPS; i++)
		delta->completed[i] = after->completed[i] >= before->completed[i] ?
				      after->completed[i] - before->completed[i] : after->completed[i];
}

const char *diskstats_op_name(enum diskstats_op op)
{
	static const char *const names[] = { "reads", "writes", "discards", "flushes" };

	return op < DISKSTATS_NR_OPS ? names[op] : "?";
}

uint32_t diskstats_test_drop_every(void)
{
	const char *env = getenv("IOTIER_TEST_DROP_COMPLETIONS");
	unsigned long n = env ? strtoul(env, NULL, 10) : 0;

	return n > 0 && n < 1000000 ? (uint32_t)n : 0;
}
