// SPDX-License-Identifier: MIT
/*
 * threads_text.c: `iotier threads PID` as a table on stdout (see threads_text.h). Names and
 * cgroup paths are printed with visible escapes: a thread chooses its own name, and it must
 * not reach the terminal as control characters.
 */
#include "threads_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "threads_adaptive.h"
#include "trace/common/text_escape.h"

/*
 * An iotier-low cgroup without a weight: the kernel offers no weight file there (blkio v1
 * without bfq). The shim warns of it only when a weight was asked for, so this is where a
 * default weight that could not be had is told (once per cgroup; v1 has one per process).
 */
static void print_weightless(const struct threads_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct thread_row *row = &r->rows[i];
		const char *base = strrchr(row->cgroup, '/');
		bool seen = false;

		if (!row->cgroup_ok || row->weight || !base ||
		    strncmp(base + 1, CGROUP_LOW_PREFIX, strlen(CGROUP_LOW_PREFIX)))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = r->rows[j].cgroup_ok && !strcmp(r->rows[j].cgroup, row->cgroup);
		if (seen)
			continue;
		fputs("note: ", stdout);
		text_escape_fputs(row->cgroup, stdout);
		fputs(" has no weight file (the kernel offers none there, as blkio v1 without bfq);\n"
		      "      its threads keep only their I/O priority\n", stdout);
	}
}

void threads_print_text(const struct threads_report *r)
{
	char cls[16], wstr[16], low[16], high[16];

	if (r->state == THREADS_ACTIVE)
		printf("pid %d: iotier active, low class %s, high class %s, process tier %s\n",
		       (int)r->pid, ioprio_format(r->header.low_ioprio, low, sizeof(low)),
		       ioprio_format(r->header.high_ioprio, high, sizeof(high)),
		       threads_tier_name(r->header.process_tier));
	else
		printf("pid %d: %s\n", (int)r->pid, r->why);
	threads_print_adaptive(stdout, r);
	printf("%8s  %-16s %-5s %-9s %-7s %-6s %s\n", "TID", "NAME", "TIER", "BY", "IOPRIO",
	       "WEIGHT", "CGROUP");
	for (size_t i = 0; i < r->n; i++) {
		const struct thread_row *row = &r->rows[i];
		char name[4 * sizeof(row->name)];

		text_escape(name, sizeof(name), row->name);
		snprintf(wstr, sizeof(wstr), row->weight ? "%u" : "-", row->weight);
		printf("%8d  %-16s %-5s %-9s %-7s %-6s ", (int)row->tid, name,
		       row->tier ? row->tier : "?", row->by ? row->by : "-",
		       row->ioprio < 0 ? "?" : ioprio_format(row->ioprio, cls, sizeof(cls)), wstr);
		text_escape_fputs(row->cgroup_ok ? row->cgroup : "?", stdout);
		putchar('\n');
	}
	print_weightless(r);
}
