/* SPDX-License-Identifier: MIT */
/*
 * lat_coverage_report.h: coverage against diskstats as the reports show it
 * (lat_coverage_report.c), shared by `lat`, the exporter and `check`.
 */
#ifndef IOTIER_LAT_COVERAGE_REPORT_H
#define IOTIER_LAT_COVERAGE_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "lat_snapshot.h"

/* A warning line per device whose counts differ; the "diskstats" value of a JSON report
 * (null without coverage, NULL when out of memory); the Prometheus gauges. With @filtered (a --pid,
 * --children or --cgroup report) each also says how many of the report's requests may be
 * missing at most, counting @missed_runs (program runs the kernel skipped). */
void lat_coverage_text(FILE *out, const struct lat_coverage *cov, size_t n, bool filtered,
		       __u64 missed_runs);
json_t *lat_coverage_json(bool has_coverage, const struct lat_coverage *cov, size_t n,
			  bool filtered, __u64 missed_runs);
void lat_coverage_prom(FILE *out, const struct lat_snapshot *snap);

#endif
