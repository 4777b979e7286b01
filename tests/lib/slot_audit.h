/* SPDX-License-Identifier: MIT */
/*
 * slot_audit.h: what the churn and storm tests assert about the shim's own bookkeeping. The
 * shim keeps one record per thread in the memfd mapping "iotier-state" (shim/include/state_table.h),
 * the same table `iotier threads` reads; a preloaded test program finds it in its own
 * /proc/self/maps and checks that every record in use belongs to a live thread of its own.
 */
#ifndef IOTIER_SLOT_AUDIT_H
#define IOTIER_SLOT_AUDIT_H

struct slot_audit {
	int found;     /* the table is mapped in this process */
	int in_use;    /* records in use */
	int stale;     /* records in use whose thread is not a live thread of this process */
	int live;      /* threads in /proc/self/task */
};

/* Look at this process's table and threads. Returns 0, or -1 when /proc cannot be read. */
int slot_audit_self(struct slot_audit *out);

/* Print every stale record (tid and name) on stderr, to show what leaked. */
void slot_audit_print_stale(void);

/* Open file descriptors of this process (entries of /proc/self/fd, the one used to list it excluded). */
int fd_count_self(void);

#endif
