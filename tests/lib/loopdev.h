/* SPDX-License-Identifier: MIT */
/*
 * loopdev.h: throwaway loop devices for tests and the demo. A device is backed by a sparse
 * file, uses direct I/O so reads reach the block layer, and can be given a shallow queue:
 * a loop device accepts 128 requests at once, so no queue ever forms in the I/O scheduler
 * and priority has nothing to reorder unless nr_requests is lowered.
 */
#ifndef IOTIER_LOOPDEV_H
#define IOTIER_LOOPDEV_H

#include <limits.h>
#include <stddef.h>

struct loopdev {
	int index;                 /* N of /dev/loopN, -1 when not attached */
	char path[32];             /* /dev/loopN */
	char name[16];             /* loopN, as in /sys/block */
	char backing[PATH_MAX];    /* the backing file, removed by loopdev_destroy */
	unsigned major, minor;
};

/*
 * Create a loop device over a new file of @bytes in @dir (NULL: /var/tmp). @scheduler may be
 * NULL (leave as is), "none", "mq-deadline", "kyber" or "bfq"; @nr_requests 0 leaves the
 * depth alone. Returns 0, or -errno; on -EPERM/-ENOENT/-ENXIO the caller should skip.
 */
int loopdev_create(struct loopdev *dev, const char *dir, size_t bytes, const char *scheduler,
		   unsigned nr_requests);

/* Detach the device and remove its backing file. Safe to call twice, or after a failure. */
void loopdev_destroy(struct loopdev *dev);

/*
 * Wait (up to 5 s) until udev has handled the events of new devices and file systems: its
 * probes read the device, and a test that counts requests must not count those.
 */
void loopdev_settle(void);

/* Write @value to /sys/block/<name>/queue/<attr>. Returns 0 or -errno. */
int loopdev_queue_set(const struct loopdev *dev, const char *attr, const char *value);

#endif
