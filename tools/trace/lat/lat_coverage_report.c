// SPDX-License-Identifier: MIT
/*
 * lat_coverage_report.c: the coverage part of `iotier lat`'s reports (lat_coverage_report.h): the
 * tracer's completions against the kernel's diskstats, per device, as a one-line warning in
 * text, a "diskstats" array in JSON (docs/lat-json.md) and gauges in Prometheus. A report
 * filtered by submitter carries its device's coverage too, as how many of its requests may
 * be missing at most.
 */
#include "lat_coverage_report.h"

#include "trace/common/blkdev.h"
#include "trace/common/json_text.h"
#include "trace/common/text_escape.h"

/* A device worth reporting: either side counted something it is compared on. */
static bool active(const struct lat_coverage *c)
{
	__u64 kernel, traced;

	lat_coverage_missing(c, &kernel, &traced);
	return kernel || traced;
}

/* The line of a device whose counts differ. */
static void text_line(FILE *out, const struct lat_coverage *c, bool filtered, __u64 missed_runs)
{
	char dev[32], shown[4 * sizeof(dev)];
	__u64 kernel, traced;
	long long missing = lat_coverage_missing(c, &kernel, &traced);
	unsigned long long may = lat_coverage_may_be_missing(c, filtered, missed_runs);

	blkdev_name(c->dev, dev, sizeof(dev));
	text_escape(shown, sizeof(shown), dev);
	fprintf(out, "warning: %s: ", shown);
	if (missing > 0)
		fprintf(out, "traced %llu of the %llu requests diskstats counted as completed "
			"(%.3f%%), %lld missing", (unsigned long long)traced,
			(unsigned long long)kernel, 100.0 * (double)traced / (double)kernel, missing);
	else if (missing < 0)
		fprintf(out, "traced %llu completions, %lld more than diskstats counted (%llu)",
			(unsigned long long)traced, -missing, (unsigned long long)kernel);
	else
		fprintf(out, "the kernel skipped %llu runs of the tracer's programs",
			(unsigned long long)missed_runs);
	/* A filtered report's rows are a subset: which of the device's lost requests were its
	 * own cannot be known, only how many at most. */
	if (filtered && may)
		fprintf(out, "; this report counts only the requests --pid, --children or --cgroup "
			"select: up to %llu of these may be missing", may);
	fputc('\n', out);
}

void lat_coverage_text(FILE *out, const struct lat_coverage *cov, size_t n, bool filtered,
		       __u64 missed_runs)
{
	for (size_t i = 0; i < n; i++) {
		__u64 kernel, traced;
		long long missing = lat_coverage_missing(&cov[i], &kernel, &traced);

		if (missing || (filtered && missed_runs && (kernel || traced)))
			text_line(out, &cov[i], filtered, missed_runs);
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

static json_t *device_json(const struct lat_coverage *c, bool filtered, __u64 missed_runs)
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
	bad |= json_object_set_new(o, "filtered", json_boolean(filtered));
	bad |= json_object_set_new(o, "may_be_missing", json_integer((json_int_t)
		lat_coverage_may_be_missing(c, filtered, missed_runs)));
	bad |= json_object_set_new(o, "coverage", kernel ? json_real((double)traced /
								      (double)kernel) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *lat_coverage_json(bool has_coverage, const struct lat_coverage *cov, size_t n,
			  bool filtered, __u64 missed_runs)
{
	json_t *a;

	if (!has_coverage)
		return json_null();
	a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		if (!active(&cov[i]))
			continue;
		if (json_array_append_new(a, device_json(&cov[i], filtered, missed_runs)) < 0) {
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
	fprintf(out, "# HELP iotier_trace_may_be_missing_requests Requests the report's counts may "
		"lack at most: the device's missing completions, and with --pid, --children or "
		"--cgroup also the tracer program runs the kernel skipped, since the start.\n"
		"# TYPE iotier_trace_may_be_missing_requests gauge\n");
	for (size_t i = 0; i < snap->ncov; i++) {
		if (!active(&snap->cov[i]))
			continue;
		blkdev_name(snap->cov[i].dev, dev, sizeof(dev));
		fprintf(out, "iotier_trace_may_be_missing_requests{device=\"%s\"} %llu\n", dev,
			lat_coverage_may_be_missing(&snap->cov[i], snap->coverage_filtered,
						    snap->missed_runs));
	}
}
