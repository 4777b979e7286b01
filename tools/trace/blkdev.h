/* SPDX-License-Identifier: MIT */
/*
 * blkdev.h: block devices as the tracers name them. Requests are counted per whole disk (a
 * partition's I/O reaches the block layer as its disk's requests), so a partition given on
 * the command line stands for its disk. dev_t values are the kernel's: major << 20 | minor.
 */
#ifndef IOTIER_BLKDEV_H
#define IOTIER_BLKDEV_H

#include <stddef.h>
#include <stdint.h>

/*
 * Resolve "loopN", "/dev/loopN" or "MAJ:MIN" to the kernel dev_t of the whole disk.
 * Returns 0, or -errno (-ENOTBLK for something that is no block device).
 */
int blkdev_resolve(const char *name, uint32_t *dev);

/* "loopN" for a kernel dev_t, from /sys/dev/block; "MAJ:MIN" when unknown. */
void blkdev_name(uint32_t dev, char *buf, size_t len);

#endif
