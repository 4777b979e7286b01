/* SPDX-License-Identifier: MIT */
/*
 * iolat.h: the types that iolat.bpf.c (the block-latency tracer) shares with user space
 * (tools/trace/lat_session.c). Only fixed-width types, so both sides agree on every layout.
 * A histogram is keyed by device, operation, priority class and level, and by an epoch bit
 * that user space flips to read one interval while the kernel fills the next.
 */
#ifndef IOTIER_IOLAT_H
#define IOTIER_IOLAT_H

#include "blk.h"
#include "hist.h"

/* Operations, as reported. Flushes submitted as empty PREFLUSH writes count as flush. */
#define IOLAT_OP_READ 0
#define IOLAT_OP_WRITE 1
#define IOLAT_OP_FLUSH 2
#define IOLAT_OP_DISCARD 3
#define IOLAT_OP_OTHER 4
#define IOLAT_NR_OPS 5

/* Priority classes as in the kernel ABI (IOPRIO_CLASS_*): none, rt, be, idle. */
#define IOLAT_NR_CLASSES 4
#define IOLAT_NR_LEVELS 8

#define IOLAT_MAX_DEVS BLK_MAX_DEVS
#define IOLAT_MAX_TGIDS 4096
#define IOLAT_DEFAULT_INFLIGHT 16384
#define IOLAT_MAX_HISTS 4096

/* Indexes of the per-CPU counters in the `stats` map. */
#define IOLAT_STAT_DROPS 0        /* request not tracked: in-flight map full */
#define IOLAT_STAT_HIST_DROPS 1   /* completion lost: no histogram and the spill ring full */
#define IOLAT_STAT_REQUEUES 2
#define IOLAT_STAT_MERGES 3       /* tracked requests merged into another and freed */
#define IOLAT_NR_STATS 4

struct iolat_key {
	__u32 dev;      /* kernel dev_t: major << 20 | minor */
	__u32 epoch;    /* 0 or 1 */
	__u32 op;       /* IOLAT_OP_* */
	__u32 ioclass;  /* IOPRIO_CLASS_* */
	__u32 level;    /* 0..7 */
};

/* One latency distribution: queue->complete or issue->complete. */
struct iolat_lat {
	__u64 count;    /* requests with this latency measured (D2C needs an issue) */
	__u64 sum_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 slots[HIST_NR_BUCKETS];
};

/* Count a latency of @ns, in bucket @b (from hist_bucket()), into @l. Not atomic: for a
 * per-CPU value in the kernel, or in user space. */
static inline void iolat_lat_count(struct iolat_lat *l, __u32 b, __u64 ns)
{
	l->slots[b]++;
	l->count++;
	l->sum_ns += ns;
	if (!l->min_ns || ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
}

/* The same into an @l that every CPU updates (a hash map value): counts are added
 * atomically; min and max stay racy by design, and may miss one of two concurrent values. */
static inline void iolat_lat_count_shared(struct iolat_lat *l, __u32 b, __u64 ns)
{
	__sync_fetch_and_add(&l->slots[b], 1);
	__sync_fetch_and_add(&l->count, 1);
	__sync_fetch_and_add(&l->sum_ns, ns);
	if (!l->min_ns || ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
}

struct iolat_hist {
	__u64 count;    /* completed requests */
	__u64 bytes;    /* bytes they transferred */
	struct iolat_lat q2c;
	struct iolat_lat d2c;
};

/* A completion handed to user space because its histogram could not be created. */
struct iolat_spill {
	struct iolat_key key;
	__u32 has_d2c;      /* it was issued: d2c_ns is a device time */
	__u64 bytes;
	__u64 q2c_ns;
	__u64 d2c_ns;
};

/*
 * Completions of one device and diskstats column, counted for every request of the traced
 * devices when the report counts only some of them (a submitter filter): the device's
 * coverage that such a report carries (docs/lat.md, "Coverage against diskstats").
 */
struct iolat_dev_op {
	__u32 dev;          /* the whole disk */
	__u32 op;           /* BLK_DS_* (blk.h) */
};
#define IOLAT_MAX_DEV_OPS 1024

/* What is remembered about a request between its start and its completion. */
struct iolat_inflight {
	struct blk_times t;
	__u64 bytes;        /* bytes of partial completions so far */
	__u32 tgid;         /* submitter; 0 when it could not be known */
	__u32 tid;
	__u32 dev;
	__u16 ioprio;
	__u8 op;
	__u8 pad;
};

#endif
