/* SPDX-License-Identifier: MIT */
/*
 * diskstats.h: the kernel's own count of completed requests per device, to check the
 * tracers against. Read from /sys/dev/block/MAJ:MIN/stat, which is the device's line of
 * /proc/diskstats (Documentation/admin-guide/iostats.rst) for a disk and a partition alike.
 *
 * Which columns match what `iotier lat` counts (block_rq_complete, once per request):
 *   field 1  reads completed    <-> op read: one per request, after merging (the merges are
 *                                   field 2, and never complete on their own), so it is the
 *                                   count block_rq_complete sees;
 *   field 5  writes completed   <-> op write (a write carrying a cache flush is one write in
 *                                   both; an empty flush-only write is counted as a write
 *                                   here but as a flush by the tracer, see docs/lat.md);
 *   field 12 discards completed <-> op discard;
 *   field 16 flushes completed  -- the flushes the kernel's flush machinery sent; reported,
 *                                   not compared (the tracer's flush op also holds empty
 *                                   PREFLUSH writes, which diskstats counts in field 5).
 * Requests the kernel does not account (queue/iostats 0, passthrough commands) are not in
 * diskstats at all.
 */
#ifndef IOTIER_DISKSTATS_H
#define IOTIER_DISKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum diskstats_op { DISKSTATS_READ, DISKSTATS_WRITE, DISKSTATS_DISCARD, DISKSTATS_FLUSH,
		    DISKSTATS_NR_OPS };

struct diskstats {
	uint64_t completed[DISKSTATS_NR_OPS];
};

/* Read the counters of kernel dev_t @dev (major << 20 | minor). 0, or -errno. */
int diskstats_read(uint32_t dev, struct diskstats *out);

/* The whole disks there are now (/sys/block), or with @partitions their partitions too
 * (/sys/class/block), at most @max, into @devs. Returns how many. */
size_t diskstats_devices(bool partitions, uint32_t *devs, size_t max);

/* The completions between @before and @after, per op, in @delta. */
void diskstats_delta(const struct diskstats *before, const struct diskstats *after,
		     struct diskstats *delta);

/* The name of @op as the reports use it: "reads", "writes", "discards", "flushes". */
const char *diskstats_op_name(enum diskstats_op op);

/*
 * IOTIER_TEST_DROP_COMPLETIONS=N: the tests' way to make a tracer lose every Nth completion
 * it counts (iolat.bpf.c, iotrack.bpf.c), so that they can see the coverage check notice.
 * 0 (off) unless set; not for use otherwise, and not documented as a setting.
 */
uint32_t diskstats_test_drop_every(void);

#endif
