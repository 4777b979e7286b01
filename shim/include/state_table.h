/* SPDX-License-Identifier: MIT */
/*
 * state_table.h: the layout of the per-thread table the shim keeps in a memfd mapping named
 * "iotier-state". It is the shim's own bookkeeping, and `iotier threads` reads it through
 * /proc/PID/mem to show which tier each thread was given and why. Fixed-width fields only:
 * the reader is a different binary. Bump STATE_TABLE_VERSION when the layout changes.
 */
#ifndef IOTIER_STATE_TABLE_H
#define IOTIER_STATE_TABLE_H

#include <stdint.h>

#define STATE_TABLE_MAGIC "IOTIERST"
#define STATE_TABLE_VERSION 1
#define STATE_TABLE_NAME "iotier-state" /* the memfd name; /proc/PID/maps shows /memfd:NAME */
#define STATE_TABLE_SLOTS 8192          /* threads tracked at once; more run untracked */

enum slot_flags {
	SLOT_EXPLICIT = 1u << 0, /* the thread chose its tier with iotier_set_tier() */
	SLOT_BY_THREAD_RULE = 1u << 1,
	SLOT_BY_PROCESS_RULE = 1u << 2,
	SLOT_URGENT = 1u << 3,   /* its name matches IOTIER_URGENT: neither timed nor gated */
};

struct state_slot {
	uint32_t in_use;         /* atomic: 1 while a thread owns the slot */
	int32_t tid;             /* atomic: 0 until the thread has started */
	uint32_t dirty;          /* atomic: the tier must be worked out again */
	uint32_t busy;           /* atomic: someone is working it out now (try-lock) */
	char name[16];           /* last name seen; written by namers, read by evaluators */
	int32_t explicit_tier;   /* enum iotier_tier from iotier_set_tier(), 0 if none */
	int32_t tier;            /* enum iotier_tier in effect */
	int32_t base_ioprio;     /* the priority the thread had before iotier changed it */
	int32_t applied_ioprio;  /* the priority iotier last left the thread with */
	uint32_t flags;          /* enum slot_flags: why it has its tier */
	uint32_t pad;
	uint64_t handle;         /* pthread_t, for pthread_setname_np(other thread) */
	uint64_t start_routine;  /* the application's thread function, until it starts */
	uint64_t start_arg;
};

struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t slot_size;
	uint32_t slot_count;
	int32_t pid;
	int32_t low_ioprio;
	int32_t high_ioprio;     /* -1: keep */
	int32_t process_tier;    /* tier from comm:/cmdline: rules */
	uint32_t slot_high;      /* slots beyond this were never used: readers stop here */
};

struct state_table {
	struct state_header header;
	struct state_slot slots[STATE_TABLE_SLOTS];
};

#endif
