// SPDX-License-Identifier: MIT
/*
 * lat_report.c: prints latency snapshots as text (a percentile row per device, operation and
 * priority, and biolatency-style bars on request), as one JSON object per interval, and as
 * Prometheus histograms. Percentiles come from lat_percentile(), so all three agree.
 * JSON is built with jansson, names through json_text.h like every other report.
 */
#include "lat_report.h"

#include "lat_coverage_report.h"
#include "trace/common/blkdev.h"
#include "trace/common/json_text.h"
#include "trace/common/text_escape.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>
#include <time.h>

static const double pcts[] = { 50, 90, 99, 99.9 };
#define NPCTS (sizeof(pcts) / sizeof(pcts[0]))

const struct iolat_lat *lat_row_lat(const struct lat_row *row, enum lat_stage stage)
{
	return stage == LAT_STAGE_DEVICE ? &row->d2c : &row->q2c;
}

static double secs_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void prio_label(const struct lat_row *row, char *buf, size_t len)
{
	if (row->level < 0)
		snprintf(buf, len, "%s", lat_class_name(row->ioclass));
	else
		snprintf(buf, len, "%s:%d", lat_class_name(row->ioclass), row->level);
}

/*
 * The unit of one histogram's bars, chosen by its largest latency so that labels stay short
 * integers: nsecs below 1 us, usecs below 10 s (labels up to 8388608 -> 16777215), msecs
 * beyond.
 */
static void bars_unit(const struct iolat_lat *l, const char **name, __u64 *ns)
{
	if (l->max_ns < 1000) {
		*name = "nsecs";
		*ns = 1;
	} else if (l->max_ns < 10ull * 1000 * 1000 * 1000) {
		*name = "usecs";
		*ns = 1000;
	} else {
		*name = "msecs";
		*ns = 1000 * 1000;
	}
}

/* The bar line of a latency of @v units: 0 holds 0 and 1, line k holds 2^k .. 2^(k+1)-1. */
static int bar_line(__u64 v)
{
	return v < 2 ? 0 : (int)hist_msb(v);
}

/*
 * Bars as biolatency prints them: one line per power of two of the unit, labelled with plain
 * integer ranges. The fine buckets are binary fractions of nanoseconds, so a bucket that
 * straddles a line's edge is counted on the line holding its midpoint: a line may hold
 * requests up to half a fine bucket (1/32 of an octave, about 3%) beyond its label, the same
 * accuracy as the percentiles.
 */
void lat_print_bars(FILE *out, const struct iolat_lat *l)
{
	__u64 lines[64] = { 0 }, top = 0, unit;
	int first = -1, last = -1;
	const char *unit_name;

	bars_unit(l, &unit_name, &unit);
	for (__u32 b = 0; b < HIST_NR_BUCKETS; b++) {
		__u64 mid = b >= HIST_OVERFLOW ? hist_bucket_low(b) :
			    hist_bucket_low(b) + (hist_bucket_high(b) - hist_bucket_low(b)) / 2;
		int line = bar_line(mid / unit);

		if (!l->slots[b])
			continue;
		lines[line] += l->slots[b];
		first = first < 0 || line < first ? line : first;
		last = line > last ? line : last;
	}
	if (first < 0)
		return;
	for (int i = first; i <= last; i++)
		top = lines[i] > top ? lines[i] : top;
	fprintf(out, "    %21s : %-10s distribution\n", unit_name, "count");
	for (int i = first; i <= last; i++) {
		__u64 lo = i ? 1ull << i : 0, hi = (2ull << i) - 1;
		int stars = top ? (int)(lines[i] * 40 / top) : 0;
		char range[48], bar[41];

		snprintf(range, sizeof(range), "%llu -> %llu", (unsigned long long)lo,
			 (unsigned long long)hi);
		memset(bar, '*', (size_t)stars);
		bar[stars] = '\0';
		fprintf(out, "    %21s : %-10llu |%-40s|\n", range, (unsigned long long)lines[i], bar);
	}
}

void lat_report_text(FILE *out, const struct lat_snapshot *snap, const struct lat_report_opts *o)
{
	char when[32], dev[32], shown[4 * sizeof(dev)], prio[16];
	struct tm tm;
	time_t t = snap->end.tv_sec;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(out, "%s  %.2f s  %s latency in usecs  (in flight %llu, dropped %llu)\n", when,
		secs_between(&snap->start, &snap->end),
		o->stage == LAT_STAGE_DEVICE ? "issue->complete" : "queue->complete",
		(unsigned long long)snap->inflight, (unsigned long long)snap->drops);
	if (!snap->nrows) {
		fprintf(out, "  (no requests completed)\n");
		lat_coverage_text(out, snap->cov, snap->ncov, snap->coverage_filtered,
				  snap->missed_runs);
		fputc('\n', out);
		return;
	}
	fprintf(out, "%-10s %-7s %-7s %9s %10s %9s %9s %9s %9s %9s\n", "DEVICE", "OP", "PRIO",
		"COUNT", "KBYTES", "P50", "P90", "P99", "P99.9", "MAX");
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct lat_row *row = &snap->rows[i];
		const struct iolat_lat *l = lat_row_lat(row, o->stage);

		blkdev_name(row->dev, dev, sizeof(dev));
		text_escape(shown, sizeof(shown), dev);
		prio_label(row, prio, sizeof(prio));
		fprintf(out, "%-10s %-7s %-7s %9llu %10llu", shown, lat_op_name(row->op), prio,
			(unsigned long long)row->count, (unsigned long long)(row->bytes / 1024));
		for (size_t p = 0; p < NPCTS; p++)
			fprintf(out, " %9.1f", (double)lat_percentile(l, pcts[p]) / 1000.0);
		fprintf(out, " %9.1f\n", (double)l->max_ns / 1000.0);
		if (o->histogram)
			lat_print_bars(out, l);
	}
	lat_coverage_text(out, snap->cov, snap->ncov, snap->coverage_filtered,
				  snap->missed_runs);
	fputc('\n', out);
}

static void iso_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	time_t t = ts->tv_sec;
	char base[24];

	gmtime_r(&t, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts->tv_nsec / 1000000);
}

#define JINT(v) json_integer((json_int_t)(v))

/* Set each of the @n (key, value) pairs; 0, or -1 when any failed (every value is taken). */
static int set_all(json_t *obj, const char *const *keys, json_t **values, size_t n)
{
	int bad = !obj;

	for (size_t i = 0; i < n; i++)
		bad |= json_object_set_new(obj, keys[i], values[i]);
	return bad ? -1 : 0;
}

/* The percentile summary of @l, in ns. */
static json_t *lat_ns_json(const struct iolat_lat *l)
{
	static const char *const keys[] = { "min", "mean", "p50", "p90", "p99", "p999", "max" };
	json_t *values[] = {
		JINT(l->min_ns), JINT(l->count ? l->sum_ns / l->count : 0),
		JINT(lat_percentile(l, 50)), JINT(lat_percentile(l, 90)),
		JINT(lat_percentile(l, 99)), JINT(lat_percentile(l, 99.9)), JINT(l->max_ns),
	};
	json_t *o = json_object();

	if (set_all(o, keys, values, 7)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The non-empty buckets, ascending: [low_ns, high_ns or null, count]. */
static json_t *buckets_json(const struct iolat_lat *l)
{
	json_t *a = json_array();

	for (__u32 b = 0; a && b < HIST_NR_BUCKETS; b++) {
		if (!l->slots[b])
			continue;
		if (json_array_append_new(a, json_pack("[I, o, I]", (json_int_t)hist_bucket_low(b),
			b == HIST_OVERFLOW ? json_null() : JINT(hist_bucket_high(b)),
			(json_int_t)l->slots[b])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *row_json(const struct lat_row *row, const struct lat_report_opts *o)
{
	static const char *const keys[] = { "major", "minor", "op", "class", "level", "count",
					    "bytes", "lat_count", "lat_ns", "buckets" };
	const struct iolat_lat *l = lat_row_lat(row, o->stage);
	json_t *values[] = {
		JINT(row->dev >> 20), JINT(row->dev & 0xfffff), json_string(lat_op_name(row->op)),
		json_string(lat_class_name(row->ioclass)),
		row->level < 0 ? json_null() : JINT(row->level), JINT(row->count),
		JINT(row->bytes), JINT(l->count), lat_ns_json(l), buckets_json(l),
	};
	json_t *r = json_object();
	char dev[32];
	int bad;

	blkdev_name(row->dev, dev, sizeof(dev));
	bad = json_set_text(r, "device", dev);
	bad |= set_all(r, keys, values, 10); /* takes the values, even when @r is NULL */
	if (bad) {
		json_decref(r);
		return NULL;
	}
	return r;
}

static json_t *snapshot_json(const struct lat_snapshot *snap, const struct lat_report_opts *o)
{
	static const char *const keys[] = { "schema", "start", "end", "interval_s", "latency",
		"attach", "hist_layout", "inflight", "inflight_max", "drops", "hist_drops",
		"requeues", "merges", "rows", "diskstats" };
	char start[40], end[40];
	json_t *rows = json_array(), *root = json_object();

	iso_time(&snap->start, start, sizeof(start));
	iso_time(&snap->end, end, sizeof(end));
	for (size_t i = 0; rows && i < snap->nrows; i++)
		if (json_array_append_new(rows, row_json(&snap->rows[i], o)) < 0) {
			json_decref(rows);
			rows = NULL;
		}
	{
		json_t *values[] = {
			json_string(LAT_JSON_SCHEMA), json_string(start), json_string(end),
			/* milliseconds, as the timestamps */
			json_real(round(secs_between(&snap->start, &snap->end) * 1000) / 1000),
			json_string(o->stage == LAT_STAGE_DEVICE ? "d2c" : "q2c"),
			json_string(snap->attach ? snap->attach : "none"), JINT(HIST_LAYOUT_VERSION),
			JINT(snap->inflight), JINT(snap->inflight_max), JINT(snap->drops),
			JINT(snap->hist_drops), JINT(snap->requeues), JINT(snap->merges), rows,
			lat_coverage_json(snap->has_coverage, snap->cov, snap->ncov,
					  snap->coverage_filtered, snap->missed_runs),
		};

		if (set_all(root, keys, values, 15)) {
			json_decref(root);
			return NULL;
		}
	}
	return root;
}

void lat_report_json(FILE *out, const struct lat_snapshot *snap, const struct lat_report_opts *o)
{
	json_t *root = snapshot_json(snap, o);

	if (!root || json_dumpf(root, out, JSON_COMPACT | JSON_PRESERVE_ORDER |
				JSON_REAL_PRECISION(15)) < 0)
		fprintf(stderr, "iotier lat: cannot write the JSON report: %s\n",
			root ? strerror(errno) : "out of memory");
	else
		fputc('\n', out);
	json_decref(root);
	fflush(out);
}

/* One `le` per power of two; each is an exact bucket boundary, so counts are exact. */
bool lat_prom_le(__u32 b, double *le)
{
	if ((b + 1) % HIST_SUB || b + 1 < HIST_SUB)
		return false;
	*le = (double)hist_bucket_high(b) / 1e9;
	return true;
}

void lat_prom_labels(FILE *out, const struct lat_row *row, const char *dev)
{
	fprintf(out, "device=\"%s\",op=\"%s\",class=\"%s\",level=\"", dev, lat_op_name(row->op),
		lat_class_name(row->ioclass));
	if (row->level < 0)
		fprintf(out, "all\"");
	else
		fprintf(out, "%d\"", row->level);
}

/* One counter per row: its request count, or with @bytes its byte count. */
static void prom_counter(FILE *out, const struct lat_snapshot *snap, const char *name,
			 const char *help, bool bytes)
{
	char dev[32];

	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; i < snap->nrows; i++) {
		blkdev_name(snap->rows[i].dev, dev, sizeof(dev));
		fprintf(out, "%s{", name);
		lat_prom_labels(out, &snap->rows[i], dev);
		fprintf(out, "} %llu\n", (unsigned long long)(bytes ? snap->rows[i].bytes :
								snap->rows[i].count));
	}
}

void lat_report_prom(FILE *out, const struct lat_snapshot *snap, const struct lat_report_opts *o)
{
	const char *stage = o->stage == LAT_STAGE_DEVICE ? "device" : "queue";
	char dev[32];

	fprintf(out, "# HELP iotier_block_%s_latency_seconds Block request latency from %s to "
		"completion, by device, operation and I/O priority.\n", stage,
		o->stage == LAT_STAGE_DEVICE ? "issue" : "queue insert");
	fprintf(out, "# TYPE iotier_block_%s_latency_seconds histogram\n", stage);
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct lat_row *row = &snap->rows[i];
		const struct iolat_lat *l = lat_row_lat(row, o->stage);
		__u64 cum = 0;

		blkdev_name(row->dev, dev, sizeof(dev));
		for (__u32 b = 0; b < HIST_OVERFLOW; b++) {
			double le;

			cum += l->slots[b];
			if (!lat_prom_le(b, &le))
				continue;
			fprintf(out, "iotier_block_%s_latency_seconds_bucket{", stage);
			lat_prom_labels(out, row, dev);
			fprintf(out, ",le=\"%.12g\"} %llu\n", le, (unsigned long long)cum);
		}
		fprintf(out, "iotier_block_%s_latency_seconds_bucket{", stage);
		lat_prom_labels(out, row, dev);
		fprintf(out, ",le=\"+Inf\"} %llu\n", (unsigned long long)l->count);
		fprintf(out, "iotier_block_%s_latency_seconds_sum{", stage);
		lat_prom_labels(out, row, dev);
		fprintf(out, "} %.9f\n", (double)l->sum_ns / 1e9);
		fprintf(out, "iotier_block_%s_latency_seconds_count{", stage);
		lat_prom_labels(out, row, dev);
		fprintf(out, "} %llu\n", (unsigned long long)l->count);
	}
	prom_counter(out, snap, "iotier_block_requests_total", "Completed block requests.",
		     false);
	prom_counter(out, snap, "iotier_block_bytes_total",
		     "Bytes transferred by completed block requests.", true);
	fprintf(out, "# HELP iotier_tracer_inflight_requests Requests the tracer holds in flight.\n"
		"# TYPE iotier_tracer_inflight_requests gauge\n"
		"iotier_tracer_inflight_requests %llu\n"
		"# HELP iotier_tracer_dropped_requests_total Requests not traced: in-flight map full.\n"
		"# TYPE iotier_tracer_dropped_requests_total counter\n"
		"iotier_tracer_dropped_requests_total %llu\n",
		(unsigned long long)snap->inflight, (unsigned long long)(snap->drops + snap->hist_drops));
	lat_coverage_prom(out, snap);
	fflush(out);
}
