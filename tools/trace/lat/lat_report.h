/* SPDX-License-Identifier: MIT */
/*
 * lat_report.h: renderers of a latency snapshot (lat_snapshot.h) as text for people,
 * JSON for programs (schema in docs/lat-json.md) and Prometheus text exposition for
 * node_exporter's textfile collector. They only print; they never touch BPF.
 */
#ifndef IOTIER_LAT_REPORT_H
#define IOTIER_LAT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "lat_snapshot.h"

#define LAT_JSON_SCHEMA "iotier.lat/1"

enum lat_format { LAT_FORMAT_TEXT, LAT_FORMAT_JSON, LAT_FORMAT_PROM };
enum lat_stage { LAT_STAGE_QUEUE, LAT_STAGE_DEVICE };

struct lat_report_opts {
	enum lat_stage stage;   /* Q2C (queue) or D2C (device) */
	bool histogram;         /* text: print bars under each row */
	bool by_class;          /* rows were merged by class (level -1) */
};

/* The latency distribution a report shows for @row. */
const struct iolat_lat *lat_row_lat(const struct lat_row *row, enum lat_stage stage);

/* The -H bars of one distribution, in a unit chosen for it (exposed for the unit tests). */
void lat_print_bars(FILE *out, const struct iolat_lat *l);

void lat_report_text(FILE *out, const struct lat_snapshot *snap, const struct lat_report_opts *o);
/* One JSON object on one line per call. */
void lat_report_json(FILE *out, const struct lat_snapshot *snap, const struct lat_report_opts *o);
/* Whether histogram bucket @b ends a Prometheus `le` bucket, and its bound in seconds. */
bool lat_prom_le(__u32 b, double *le);
/* The labels of @row on disk @dev, without braces: device="..",op="..",class="..",level="..". */
void lat_prom_labels(FILE *out, const struct lat_row *row, const char *dev);
/* A complete exposition; pass a cumulative snapshot, Prometheus counters never go down. */
void lat_report_prom(FILE *out, const struct lat_snapshot *snap, const struct lat_report_opts *o);

#endif
