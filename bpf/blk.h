/* SPDX-License-Identifier: MIT */
/*
 * blk.h: what the block-layer helpers of bpf/blk.bpf.h share with user space: the device
 * filter's size, where a tracer starts following a request (chosen by user space from the
 * kernel's BTF, so it must be named on both sides) and a request's timestamps while in
 * flight. Only fixed-width types, so both sides agree on every layout.
 */
#ifndef IOTIER_BLK_H
#define IOTIER_BLK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define BLK_MAX_DEVS 64

/* The diskstats columns a completion is counted in (tools/trace/diskstats.h, whose enum
 * diskstats_op numbers them the same way), for the tracers' coverage counts. */
#define BLK_DS_READ 0
#define BLK_DS_WRITE 1
#define BLK_DS_DISCARD 2
#define BLK_DS_FLUSH 3

/*
 * Where a tracer starts following a request and learns its submitter. The submitter is the
 * task that turned a bio into the request; a filter on it (a pid, a cgroup) and `check`'s
 * attribution need it exactly, and insert or issue may run in a kworker or interrupt.
 */
enum blk_start {
	/* The first insert or issue; the submitter is not known. Enough for plain latency. */
	BLK_START_FIRST_SEEN = 0,
	/* block_io_start (Linux 6.5 and later) fires where the bio becomes the request, in
	 * the submitter's context. */
	BLK_START_IO_START = 1,
	/* Before 6.5: block_getrq fires in blk_mq_submit_bio() just before the same point, in
	 * the submitter's context, with the bio that becomes rq->bio. The submitter is noted
	 * per bio there and looked up through rq->bio at the first insert or issue. */
	BLK_START_GETRQ = 2,
};

/* A request's life so far, in bpf_ktime_get_ns() time. */
struct blk_times {
	__u64 start_ns;     /* followed from here (block_io_start, or the first insert/issue) */
	__u64 insert_ns;    /* first insert into the scheduler, 0 if it bypassed it */
	__u64 issue_ns;     /* last issue to the driver (a requeue issues again); 0 once requeued */
};

#endif
