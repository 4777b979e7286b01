/* SPDX-License-Identifier: MIT */
/*
 * stalls.h: types shared by bpf/stalls.bpf.c and its user-space side
 * (tools/trace/stalls_session.c). The BPF side times where a thread waits in the write path
 * (dirty throttling, waits on pages under writeback, fsync-like calls), keyed by thread,
 * cause and I/O priority, and counts the page cache every thread dirties, so a throttled
 * foreground thread can be shown who filled memory. Only fixed-width fields.
 */
#ifndef IOTIER_STALLS_H
#define IOTIER_STALLS_H

#include "hist.h"
#include "iolat.h" /* struct iolat_lat: the distribution every iotier tracer reports */

#define STALLS_COMM_LEN 16
#define STALLS_MAX_DEVS 8

/* Same order as the names in tools/trace/expect.c (expect_stall_cause_name()). */
enum stalls_cause {
	STALL_DIRTY_THROTTLE = 0, /* balance_dirty_pages paused the writer */
	STALL_WRITEBACK_WAIT = 1, /* waited for a page under writeback (outside fsync) */
	STALL_FSYNC = 2,          /* fsync, fdatasync, sync_file_range with a wait flag */
	STALL_NR_CAUSES = 3,
};

/* Counters of things the BPF side could not record; reported, never dropped silently. */
enum stalls_counter {
	STALLS_LOST_STATS = 0,  /* stats table full: a stall not counted */
	STALLS_LOST_PENDING,    /* pending table full: a stall not timed */
	STALLS_LOST_DIRTY,      /* dirtier table full: dirtied bytes not counted */
	STALLS_NR_COUNTERS,
};

/* One thread, cause and priority, in one epoch (user space flips it to read an interval). */
struct stalls_key {
	__u32 epoch;
	__u32 tgid;
	__u32 tid;
	__u16 ioprio;  /* the thread's I/O priority as the stall ended: class << 13 | level */
	__u8 cause;    /* enum stalls_cause */
	__u8 pad;
	char comm[STALLS_COMM_LEN];  /* thread name */
	char pcomm[STALLS_COMM_LEN]; /* its group leader's name */
};

struct stalls_stats {
	struct iolat_lat lat; /* count, sum, min, max and histogram of the stall times */
};

/* A thread that dirtied page cache in one epoch. */
struct stalls_dirty_key {
	__u32 epoch;
	__u32 tgid;
	__u32 tid;
	__u32 pad;
	char comm[STALLS_COMM_LEN];
	char pcomm[STALLS_COMM_LEN];
};

struct stalls_dirty {
	__u64 bytes;  /* newly dirtied page cache */
	__u64 folios;
};

#endif
