/* SPDX-License-Identifier: MIT */
/*
 * check_report.h: the report of `iotier check`, what a run measured, per tier, op and
 * arrival class, with its leaks. The same structure is filled from the BPF maps after a run
 * and from a saved JSON report (--baseline), so that `baseline.` expectations are answered
 * by the same code as run-side ones, and a baseline's percentiles are recomputed from its
 * histograms rather than limited to the few that were printed.
 */
#ifndef IOTIER_CHECK_REPORT_H
#define IOTIER_CHECK_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "iotrack.h"
#include "trace/expect/expect.h"
#include "trace/lat/lat_coverage.h"

#define CHECK_CLASSES 4 /* IOPRIO_CLASS_NONE, RT, BE, IDLE */

/* I/O of one tier, op and arrival class. */
struct check_cell {
	uint64_t count, bytes;
	uint32_t level_mask;  /* bit N: some request arrived at level N of this class */
	struct iolat_lat lat; /* as `iotier lat` keeps it, so its percentile code applies */
};

struct check_leak {
	uint64_t count, bytes;
};

/* One row per thread, cause, class and op, for the human report and the JSON. */
struct check_row {
	enum expect_tier tier;
	uint32_t dev, tgid, tid;
	char comm[IOTRACK_COMM_LEN], pcomm[IOTRACK_COMM_LEN];
	int cause, op;
	uint16_t ioprio;
	bool leak;
	uint64_t count, bytes;
};

struct check_report {
	struct check_cell cells[TIER_COUNT][OP_COUNT][CHECK_CLASSES];
	struct check_leak leaks[TIER_COUNT][OP_COUNT][CAUSE_COUNT];
	struct check_row *rows;
	size_t n_rows, rows_cap;
	uint64_t counters[IOTRACK_NR_COUNTERS];
	/* Every completion on the traced devices, the command's or not, against diskstats. */
	bool has_coverage;
	size_t ncov;
	struct lat_coverage cov[LAT_MAX_COVERAGE];
};

struct check_report *check_report_new(void);
void check_report_free(struct check_report *r);

/* Add one BPF stats entry, already classified into @tier and judged @leak. */
int check_report_add(struct check_report *r, enum expect_tier tier, const struct iotrack_key *k,
		     const struct iotrack_stats *st, bool leak);

/* Latency at percentile @p (0 < p <= 100) of @c in ns, as `iotier lat` computes it. */
double check_cell_percentile(const struct check_cell *c, double p);

/* The pair the expect lookup reads from: this run and, optionally, a baseline. */
struct stalls_report;

struct check_sources {
	const struct check_report *run;
	const struct check_report *baseline;
	const struct stalls_report *stalls; /* `stall` paths; NULL: they have no data */
};

/* An expect_lookup_fn; @ctx is a struct check_sources. */
int check_report_lookup(const struct expect_ref *ref, struct expect_value *out, void *ctx);

/* Run details that go into the JSON beside the measurements. */
struct check_meta {
	const char *const *argv;   /* the command */
	int exit_status;           /* CMD's exit status, or 128 + signal */
	double seconds;
	const char *low_rules, *high_rules, *low_class, *high_class;
	const char *const *devices; /* as given with -d, NULL-terminated */
};

struct check_outcome {
	const char *expr;
	struct expect_result result;
};

/* Print the tables, leaks and unattributed I/O. */
void check_report_print(const struct check_report *r, FILE *out);

/* Write the whole report as JSON to @path; returns 0 or -1 with @err set. */
int check_report_write_json(const struct check_report *r, const struct check_meta *meta,
			    const struct check_outcome *outcomes, int n_outcomes, const char *path,
			    char *err, size_t errlen);

/* Read a report written by check_report_write_json; returns NULL with @err set. */
struct check_report *check_report_read_json(const char *path, char *err, size_t errlen);

#endif
