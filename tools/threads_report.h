/* SPDX-License-Identifier: MIT */
/*
 * threads_report.h: what `iotier threads PID` found, as plain data, so that the text table
 * (cmd_threads.c) and the JSON document (threads_json.c, schema in docs/threads-json.md)
 * report the same facts.
 */
#ifndef IOTIER_THREADS_REPORT_H
#define IOTIER_THREADS_REPORT_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "adaptive_view.h"
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
	const char *adaptive_why;
	size_t n;
	struct thread_row *rows;
};

/*
 * Find the memfd mapping /memfd:@name in @pid's maps: 0 with its start and length, -ENOENT
 * when there is none, or -errno when the maps cannot be read (as another user: EACCES).
 */
int threads_find_memfd(pid_t pid, const char *name, uint64_t *addr, uint64_t *len);

/* Read the adaptive controller of r->pid, if it has one, into r->adaptive*. */
void threads_read_adaptive(struct threads_report *r);
/* Its lines of the text output; nothing for a process without a target. */
void threads_print_adaptive(FILE *out, const struct threads_report *r);

/* Write @r as one JSON document (docs/threads-json.md); 0, or -1 when out of memory. */
int threads_report_json(FILE *out, const struct threads_report *r);

#endif
