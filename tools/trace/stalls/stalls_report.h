/* SPDX-License-Identifier: MIT */
/*
 * stalls_report.h: what `iotier stalls` prints, from one plain snapshot: every thread's
 * write-path stalls by cause with its tier (by the shim's rules) and I/O class, and who
 * dirtied page cache meanwhile, per tier, so that "the low tier made your WAL wait" is a
 * line of the report. Text, one JSON document per line (docs/stalls-schema.json), or the
 * Prometheus text format. Also answers `stall` paths of `iotier check` expectations.
 */
#ifndef IOTIER_STALLS_REPORT_H
#define IOTIER_STALLS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "stalls_snapshot.h"
#include "trace/expect/expect.h"

#define STALLS_SCHEMA "iotier.stalls/1" /* the JSON's "schema": bump on a breaking change */

struct stalls_report {
	struct stalls_snapshot snap;   /* owned */
	enum expect_tier *tiers;       /* the tier of each of snap.rows */
	uint64_t dirtied[TIER_COUNT];  /* bytes newly dirtied, by the dirtying thread's tier */
	double seconds;                /* the window the snapshot covers */
};

/* The command line of process @tgid, joined by spaces, into @buf ("" when unknown). */
typedef const char *(*stalls_cmdline_fn)(uint32_t tgid, char *buf, size_t len, void *ctx);

/*
 * Classify @snap (taken over: @snap is left empty) into @r with @cfg's rules. @cmdline may be
 * NULL to read /proc/PID/cmdline. Returns 0 or -ENOMEM.
 */
int stalls_report_build(struct stalls_report *r, struct stalls_snapshot *snap, double seconds,
			const struct config *cfg, stalls_cmdline_fn cmdline, void *ctx);
void stalls_report_free(struct stalls_report *r);

void stalls_report_print_text(const struct stalls_report *r, FILE *out);
/* One JSON document on one line. Returns 0, or -1 when out of memory. */
int stalls_report_print_json(const struct stalls_report *r, FILE *out);
void stalls_report_print_prom(const struct stalls_report *r, FILE *out);

/* An expect_lookup_fn for `stall` paths; @ctx is a struct stalls_report. */
int stalls_report_lookup(const struct expect_ref *ref, struct expect_value *out, void *ctx);

#endif
