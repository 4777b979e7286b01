// SPDX-License-Identifier: MIT
/*
 * blkdev.c: the one device resolver of `iotier lat` and `iotier check` (see blkdev.h).
 */
#include "blkdev.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The disk holding partition @maj:@min, or the device itself when it is no partition. */
static void whole_disk(unsigned *maj, unsigned *min)
{
	char path[96];
	unsigned dmaj, dmin;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", *maj, *min);
	if (access(path, F_OK) != 0)
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", *maj, *min);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fscanf(f, "%u:%u", &dmaj, &dmin) == 2)
		*maj = dmaj, *min = dmin;
	fclose(f);
}

int blkdev_resolve(const char *name, enum blkdev_scope scope, uint32_t *dev)
{
	char path[PATH_MAX];
	unsigned maj, min;
	struct stat st;
	char extra;

	if (sscanf(name, "%u:%u%c", &maj, &min, &extra) == 2) {
		if (scope == BLKDEV_WHOLE_DISK)
			whole_disk(&maj, &min);
		*dev = (maj << 20) | min;
		return 0;
	}
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/dev/%s", name);
	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	maj = major(st.st_rdev);
	min = minor(st.st_rdev);
	if (scope == BLKDEV_WHOLE_DISK)
		whole_disk(&maj, &min);
	*dev = (maj << 20) | min;
	return 0;
}

void blkdev_name(uint32_t dev, char *buf, size_t len)
{
	char path[64], target[PATH_MAX];
	ssize_t n;
	char *base;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", dev >> 20, dev & 0xfffff);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		base = strrchr(target, '/');
		snprintf(buf, len, "%s", base ? base + 1 : target);
		return;
	}
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
}
