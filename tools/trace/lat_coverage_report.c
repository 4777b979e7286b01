// SPDX-License-Identifier: MIT
/*
 * lat_coverage_report.c: the coverage part of `iotier lat`'s reports (lat_report.h): the
 * tracer's completions against the kernel's diskstats, per device, as a one-line warning in
 * text, a "diskstats" array in JSON (docs/lat-json.md) and gauges in Prometheus.
 */
#include "lat_report.h"

#include "blkdev.h"
#include "json_text.h"
#include "text_escape.h"

/* A device worth reporting: either side counted something it is compared on. */
static bool active(const struct lat_coverage *c)
{
	__u64 kernel, traced;

	lat_coverage_missing(c, &kernel, &traced);
	return kernel || traced;
}

void lat_coverage_text(FILE *out, const struct lat_coverage *cov, size_t n)
{
	char dev[32], shown[4 * sizeof(dev)];

	for (size_t i = 0; i < n; i++) {
		const struct lat_coverage *c = &cov[i];
		__u64 kernel, traced;
		long long missing = lat_coverage_missing(c, &kernel, &traced);

		if (!missing)
			continue;
		blkdev_name(c->dev, dev, sizeof(dev));
		text_escape(shown, sizeof(shown), dev);
		if (missing > 0)
			fprintf(out, "warning: %s: traced %llu of the %llu requests diskstats counted as "
				"completed (%.3f%%), %lld missing\n", shown, (unsigned long long)traced,
				(unsigned long long)kernel, 100.0 * (double)traced / (double)kernel,
				missing);
		else
			fprintf(out, "warning: %s: traced %llu completions, %lld more than diskstats "
				"counted (%llu)\n", shown, (unsigned long long)traced, -missing,
				(unsigned long long)kernel);
	}
}

/* {"completed", "traced", "missing"} of one op, or null when it is not compared. */
static json_t *op_json(const struct lat_coverage *c, enum diskstats_op op)
{
	if (op == DISKSTATS_FLUSH)
		return json_pack("{sI}", "completed", (json_int_t)c->kernel[op]);
	if (!(c->compared & (1u << op)))
		return json_null();
	return json_pack("{sIsIsI}", "completed", (json_int_t)c->kernel[op],
			 "traced", (json_int_t)c->traced[op],
			 "missing", (json_int_t)c->kernel[op] - (json_int_t)c->traced[op]);
}

static json_t *device_json(const struct lat_coverage *c)
{
	json_t *o = json_object();
	__u64 kernel, traced;
	long long missing = lat_coverage_missing(c, &kernel, &traced);
	char dev[32];
	int bad = !o;

	blkdev_name(c->dev, dev, sizeof(dev));
	bad |= json_set_text(o, "device", dev);
	bad |= json_object_set_new(o, "major", json_integer(c->dev >> 20));
	bad |= json_object_set_new(o, "minor", json_integer(c->dev & 0xfffff));
	for (int op = 0; op < DISKSTATS_NR_OPS; op++)
		bad |= json_object_set_new(o, diskstats_op_name(op), op_json(c, op));
	bad |= json_object_set_new(o, "missing", json_integer(missing));
	bad |= json_object_set_new(o, "coverage", kernel ? json_real((double)traced /
								      (double)kernel) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *lat_coverage_json(bool has_coverage, const struct lat_coverage *cov, size_t n)
{
	json_t *a;

	if (!has_coverage)
		return json_null();
	a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		if (!active(&cov[i]))
			continue;
		if (json_array_append_new(a, device_json(&cov[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void lat_coverage_prom(FILE *out, const struct lat_snapshot *snap)
{
	char dev[32];

	if (!snap->has_coverage)
		return;
	fprintf(out, "# HELP iotier_trace_coverage_ratio Completions traced over completions "
		"the kernel's diskstats counted (reads, writes, discards), since the start.\n"
		"# TYPE iotier_trace_coverage_ratio gauge\n");
	for (size_t i = 0; i < snap->ncov; i++) {
		__u64 kernel, traced;

		lat_coverage_missing(&snap->cov[i], &kernel, &traced);
		if (!kernel)
			continue;
		blkdev_name(snap->cov[i].dev, dev, sizeof(dev));
		fprintf(out, "iotier_trace_coverage_ratio{device=\"%s\"} %.9g\n", dev,
			(double)traced / (double)kernel);
	}
	fprintf(out, "# HELP iotier_trace_missing_requests Completions the kernel's diskstats "
		"counted and the tracer did not (negative: traced more), since the start.\n"
		"# TYPE iotier_trace_missing_requests gauge\n");
	for (size_t i = 0; i < snap->ncov; i++) {
		__u64 kernel, traced;
		long long missing = lat_coverage_missing(&snap->cov[i], &kernel, &traced);

		if (!active(&snap->cov[i]))
			continue;
		blkdev_name(snap->cov[i].dev, dev, sizeof(dev));
		fprintf(out, "iotier_trace_missing_requests{device=\"%s\"} %lld\n", dev, missing);
	}
}
