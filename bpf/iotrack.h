/* SPDX-License-Identifier: MIT */
/*
 * iotrack.h: types shared by bpf/iotrack.bpf.c and `iotier check` (tools/trace/check_trace.c).
 * The BPF side counts block requests of one command's process tree per submitting thread,
 * arrival priority, op and cause, with a latency histogram, and tells user space about
 * processes (fork, exec with its command line) so that the tier rules can be applied there.
 * Only fixed-width fields, so both sides agree on the layout.
 */
#ifndef IOTIER_IOTRACK_H
#define IOTIER_IOTRACK_H

#include "hist.h"
#include "iolat.h" /* struct iolat_lat: the same distribution `iotier lat` reports */

#define IOTRACK_COMM_LEN 16
#define IOTRACK_CMDLINE_MAX 512   /* power of two: the BPF side masks the length with it */
#define IOTRACK_MAX_DEVS 8

/* Why a request reached the device; user space maps it to its own vocabulary. */
enum iotrack_cause {
	IOTRACK_SUBMIT = 0,    /* submitted by a thread of the command, in its own context */
	IOTRACK_WRITEBACK = 1, /* a kworker (the flusher) wrote back an inode the thread dirtied */
	IOTRACK_JOURNAL = 2,   /* a jbd2 thread */
	IOTRACK_OTHER = 3,     /* another process or kernel thread */
};

enum iotrack_op { IOTRACK_READ = 0, IOTRACK_WRITE = 1, IOTRACK_OP_OTHER = 2 };

/*
 * Who caused a request. tgid 0 means unattributed: kernel I/O with no known dirtier; comm is
 * then the kernel thread's name.
 */
struct iotrack_key {
	__u32 dev;     /* kernel dev_t: major << 20 | minor */
	__u32 tgid;
	__u32 tid;
	__u16 ioprio;  /* as the request arrived: class << 13 | level */
	__u8 op;       /* enum iotrack_op */
	__u8 cause;    /* enum iotrack_cause */
	char comm[IOTRACK_COMM_LEN];  /* the thread's name at submit (or dirty) time */
	char pcomm[IOTRACK_COMM_LEN]; /* its group leader's name */
};

/*
 * Latency is `iotier lat`'s queue latency (Q2C): from the first insert into the I/O
 * scheduler (or the issue, or block_io_start, for a request that skipped it) to completion.
 */
struct iotrack_stats {
	__u64 count;
	__u64 bytes;
	struct iolat_lat lat;
};

/* Counters of things that could not be recorded; reported, never dropped silently. */
enum iotrack_counter {
	IOTRACK_LOST_START = 0,   /* in-flight table full: request not timed */
	IOTRACK_LOST_STATS,       /* stats table full: request not counted */
	IOTRACK_LOST_DIRTY,       /* dirtier table full */
	IOTRACK_LOST_EVENTS,      /* ring buffer full: a process event lost */
	IOTRACK_FOREIGN_BYTES,    /* bytes on traced devices from processes outside the tree */
	IOTRACK_MERGED,           /* requests merged into another: counted with the survivor */
	IOTRACK_MISSED,           /* program runs the kernel skipped (nesting on a CPU); user space */
	IOTRACK_NR_COUNTERS,
};

/*
 * Every request completed on a traced device, the command's or not, by device and diskstats
 * op (tools/trace/diskstats.h: read, write, discard, flush), to set against the kernel's
 * own diskstats: the coverage `check` reports.
 */
struct iotrack_dev_op {
	__u32 dev;     /* the partition (or disk) the request was for */
	__u32 op;      /* 0 read, 1 write, 2 discard, 3 flush */
};
#define IOTRACK_MAX_DEV_OPS 1024

enum iotrack_event_kind { IOTRACK_EV_FORK = 1, IOTRACK_EV_EXEC = 2 };

struct iotrack_event {
	__u32 kind;
	__u32 tgid;
	__u32 ppid;          /* FORK: the parent's tgid */
	__u32 cmdline_len;   /* EXEC: bytes of cmdline, NUL separated */
	char comm[IOTRACK_COMM_LEN];
	char cmdline[IOTRACK_CMDLINE_MAX];
};

#endif
