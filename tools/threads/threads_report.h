/* SPDX-License-Identifier: MIT */
/*
 * threads_report.h: what `iotier threads PID` found, as plain data, so that the text table
 * (threads_text.c) and the JSON document (threads_json.c, schema in docs/threads-json.md)
 * report the same facts; and the steps of threads_report.c that gather it.
 */
#ifndef IOTIER_THREADS_REPORT_H
#define IOTIER_THREADS_REPORT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "adaptive/adaptive_tier.h"
#include "state_table.h"

/* Exit status when iotier's state in the process cannot be read (see threads_help). */
#define EXIT_CANNOT_TELL 3

enum threads_state {
	THREADS_ACTIVE,     /* the shim's table was read */
	THREADS_NOT_LOADED, /* the process maps no iotier table */
	THREADS_UNKNOWN,    /* cannot tell: no permission, or a table of another version */
};

struct thread_row {
	pid_t tid;
	char name[64];        /* as the kernel has it, raw: renderers escape it */
	const char *tier;     /* "low", "high", "-", or NULL when unknown */
	const char *by;       /* "thread", "process", "api", "untracked", "-", or NULL */
	int ioprio;           /* as ioprio_get(2) returned it, -1 when it failed */
	unsigned weight;      /* io weight of its cgroup, 0 when none */
	int cgroup_ok;
	char cgroup[PATH_MAX];
};

struct threads_report {
	pid_t pid;
	enum threads_state state;
	const char *why;      /* for THREADS_NOT_LOADED and THREADS_UNKNOWN */
	struct state_header header; /* valid when THREADS_ACTIVE */
	/* The adaptive controller (threads_adaptive.c): none, read, or why it could not be. */
	enum { ADAPTIVE_NONE, ADAPTIVE_READ, ADAPTIVE_UNREADABLE } adaptive_state;
	struct adaptive_view adaptive;
	uint64_t adaptive_read_ns;  /* CLOCK_MONOTONIC when it was read: its step's age */
	const char *adaptive_why;
	size_t n;
	struct thread_row *rows;
};

/* The thread ids of @pid, ascending, in @tids (freed by the caller). -errno on failure. */
int threads_list_tids(pid_t pid, int **tids, size_t *count);

/*
 * Read the shim's table in r->pid: sets r->state and r->why (and r->header); returns the
 * table (freed by the caller) when r->state is THREADS_ACTIVE, else NULL.
 */
struct state_table *threads_read_table(struct threads_report *r);

/* Fill r->rows (room for @count) with one row per thread of @tids still there. */
void threads_fill_rows(struct threads_report *r, const struct state_table *table,
		       const int *tids, size_t count);

/* "low", "high" or "-" for a tier of the shim's table. */
const char *threads_tier_name(int tier);

#endif
