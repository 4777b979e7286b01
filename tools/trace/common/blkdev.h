/* SPDX-License-Identifier: MIT */
/*
 * blkdev.h: block devices as the tracers name them. dev_t values are the kernel's:
 * major << 20 | minor. `lat` counts requests per whole disk (its tracer sees the disk a
 * request is queued on), so a partition given to it stands for its disk; `check`'s tracer
 * sees the partition too, so it keeps the partition and traces just that.
 */
#ifndef IOTIER_BLKDEV_H
#define IOTIER_BLKDEV_H

#include <stddef.h>
#include <stdint.h>

enum blkdev_scope {
	BLKDEV_EXACT,      /* the device named, partition or disk */
	BLKDEV_WHOLE_DISK, /* a partition stands for the disk holding it */
};

/*
 * Resolve "loopN", "/dev/loopN" or "MAJ:MIN" to a kernel dev_t. Returns 0, or -errno
 * (-ENOTBLK for something that is no block device).
 */
int blkdev_resolve(const char *name, enum blkdev_scope scope, uint32_t *dev);

/* "loopN" for a kernel dev_t, from /sys/dev/block; "MAJ:MIN" when unknown. */
void blkdev_name(uint32_t dev, char *buf, size_t len);

#endif
