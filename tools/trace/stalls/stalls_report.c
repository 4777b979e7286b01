// SPDX-License-Identifier: MIT
/*
 * stalls_report.c: classification, rendering and expectation lookup of `iotier stalls`
 * snapshots (see stalls_report.h).
 */
#include "stalls_report.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "trace/common/ioprio_text.h"
#include "trace/common/json_text.h"
#include "trace/common/text_escape.h"
#include "trace/expect/tier_classify.h"
#include "trace/lat/lat_snapshot.h" /* lat_percentile, lat_sum */

static const char *proc_cmdline(uint32_t tgid, char *buf, size_t len, void *ctx)
{
	(void)ctx;
	return tier_proc_cmdline(tgid, buf, len);
}

static int by_total(const void *a, const void *b)
{
	const struct stalls_row *x = a, *y = b;

	return x->lat.sum_ns < y->lat.sum_ns ? 1 : x->lat.sum_ns > y->lat.sum_ns ? -1 : 0;
}

int stalls_report_build(struct stalls_report *r, struct stalls_snapshot *snap, double seconds,
			const struct config *cfg, stalls_cmdline_fn cmdline, void *ctx)
{
	char buf[4096];

	memset(r, 0, sizeof(*r));
	if (!cmdline)
		cmdline = proc_cmdline;
	r->snap = *snap;
	memset(snap, 0, sizeof(*snap));
	r->seconds = seconds;
	/* Biggest total first, before the tiers are computed index for index. */
	if (r->snap.n_rows)
		qsort(r->snap.rows, r->snap.n_rows, sizeof(*r->snap.rows), by_total);
	r->tiers = calloc(r->snap.n_rows + 1, sizeof(*r->tiers));
	if (!r->tiers)
		return -ENOMEM;
	for (size_t i = 0; i < r->snap.n_rows; i++) {
		const struct stalls_row *row = &r->snap.rows[i];

		r->tiers[i] = tier_classify(cfg, row->thread, row->process,
					    cmdline(row->tgid, buf, sizeof(buf), ctx));
	}
	for (size_t i = 0; i < r->snap.n_dirtiers; i++) {
		const struct stalls_dirtier *d = &r->snap.dirtiers[i];
		enum expect_tier t = tier_classify(cfg, d->thread, d->process,
						   cmdline(d->tgid, buf, sizeof(buf), ctx));

		r->dirtied[t] += d->bytes;
	}
	return 0;
}

void stalls_report_free(struct stalls_report *r)
{
	stalls_snapshot_free(&r->snap);
	free(r->tiers);
	memset(r, 0, sizeof(*r));
}

static void fmt(enum expect_dim dim, double v, char *buf, size_t len)
{
	struct expect_value x = { .v = v };

	expect_format(dim, &x, buf, len);
}

/* "low 1.2GiB (97%), high 4.0MiB, default 0B": who dirtied page cache in the window. */
static void dirtied_text(const struct stalls_report *r, char *buf, size_t len)
{
	uint64_t all = r->dirtied[TIER_LOW] + r->dirtied[TIER_HIGH] + r->dirtied[TIER_DEFAULT];
	size_t o = 0;

	buf[0] = '\0';
	for (int t = TIER_LOW; t <= TIER_DEFAULT && o < len; t++) {
		char b[32];

		fmt(DIM_BYTES, (double)r->dirtied[t], b, sizeof(b));
		o += (size_t)snprintf(buf + o, len - o, "%s%s %s", t ? ", " : "",
				      expect_tier_name((enum expect_tier)t), b);
		if (all && r->dirtied[t] && o < len)
			o += (size_t)snprintf(buf + o, len - o, " (%.0f%%)",
					      100.0 * (double)r->dirtied[t] / (double)all);
	}
}

static void print_row(const struct stalls_report *r, size_t i, FILE *out)
{
	const struct stalls_row *row = &r->snap.rows[i];
	char thread[80], cls[16], total[24], p50[24], p99[24], max[24];

	text_escape(thread, sizeof(thread), row->thread);
	ioprio_text(row->ioprio, cls, sizeof(cls));
	fmt(DIM_TIME, (double)row->lat.sum_ns, total, sizeof(total));
	fmt(DIM_TIME, (double)lat_percentile(&row->lat, 50), p50, sizeof(p50));
	fmt(DIM_TIME, (double)lat_percentile(&row->lat, 99), p99, sizeof(p99));
	fmt(DIM_TIME, (double)row->lat.max_ns, max, sizeof(max));
	fprintf(out, "%-7u %-7u %-16s %-7s %-6s %-14s %7llu %9s %9s %9s %9s\n", row->tgid,
		row->tid, thread, expect_tier_name(r->tiers[i]), cls,
		expect_stall_cause_name(row->cause), (unsigned long long)row->lat.count, total,
		p50, p99, max);
}

void stalls_report_print_text(const struct stalls_report *r, FILE *out)
{
	char dirtied[160];

	fprintf(out, "write-path stalls over %.1fs\n", r->seconds);
	if (!r->snap.n_rows) {
		fprintf(out, "  none\n");
	} else {
		fprintf(out, "%-7s %-7s %-16s %-7s %-6s %-14s %7s %9s %9s %9s %9s\n", "PID", "TID",
			"THREAD", "TIER", "CLASS", "CAUSE", "COUNT", "TOTAL", "P50", "P99", "MAX");
		for (size_t i = 0; i < r->snap.n_rows; i++)
			print_row(r, i, out);
	}
	dirtied_text(r, dirtied, sizeof(dirtied));
	fprintf(out, "page cache dirtied by tier: %s\n", dirtied);
	for (size_t i = 0; i < r->snap.n_rows; i++) {
		const struct stalls_row *row = &r->snap.rows[i];
		char thread[80], total[24];

		if (r->tiers[i] != TIER_HIGH || row->cause != STALL_DIRTY_THROTTLE)
			continue;
		text_escape(thread, sizeof(thread), row->thread);
		fmt(DIM_TIME, (double)row->lat.sum_ns, total, sizeof(total));
		fprintf(out, "high thread %s (%u/%u) throttled %llu times for %s while %s\n",
			thread, row->tgid, row->tid, (unsigned long long)row->lat.count, total,
			dirtied);
	}
	for (int c = 0; c < STALLS_NR_COUNTERS; c++)
		if (r->snap.counters[c]) {
			fprintf(out, "warning: events lost (BPF tables full): stats %llu, pending "
				"%llu, dirtied %llu\n",
				(unsigned long long)r->snap.counters[STALLS_LOST_STATS],
				(unsigned long long)r->snap.counters[STALLS_LOST_PENDING],
				(unsigned long long)r->snap.counters[STALLS_LOST_DIRTY]);
			break;
		}
}

static json_t *dirtied_json(const struct stalls_report *r)
{
	json_t *o = json_object();

	for (int t = TIER_LOW; o && t <= TIER_DEFAULT; t++)
		if (json_object_set_new(o, expect_tier_name((enum expect_tier)t),
					json_integer((json_int_t)r->dirtied[t])) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

static json_t *row_json(const struct stalls_report *r, size_t i)
{
	const struct stalls_row *row = &r->snap.rows[i];
	const char *cls_name = ioprio_class_name(ioprio_class(row->ioprio));
	json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I}",
			      "pid", (json_int_t)row->tgid, "tid", (json_int_t)row->tid,
			      "tier", expect_tier_name(r->tiers[i]),
			      "class", cls_name ? cls_name : "?", "level", (int)ioprio_level(row->ioprio),
			      "cause", expect_stall_cause_name(row->cause),
			      "count", (json_int_t)row->lat.count,
			      "total_ns", (json_int_t)row->lat.sum_ns,
			      "p50_ns", (json_int_t)lat_percentile(&row->lat, 50),
			      "p99_ns", (json_int_t)lat_percentile(&row->lat, 99),
			      "max_ns", (json_int_t)row->lat.max_ns);

	if (!o || json_set_text(o, "thread", row->thread) < 0 ||
	    json_set_text(o, "process", row->process) < 0)
		goto fail;
	/* Who filled page cache while a foreground thread was throttled for it. */
	if (r->tiers[i] == TIER_HIGH && row->cause == STALL_DIRTY_THROTTLE &&
	    json_object_set_new(o, "dirtied_by_tier", dirtied_json(r)) < 0)
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

int stalls_report_print_json(const struct stalls_report *r, FILE *out)
{
	json_t *rows = json_array();
	json_t *doc = json_pack("{s:s, s:i, s:f, s:o*, s:{s:I, s:I, s:I}}",
				"schema", STALLS_SCHEMA, "hist_layout", HIST_LAYOUT_VERSION,
				"interval_s", r->seconds,
				"dirtied_by_tier", dirtied_json(r), "lost",
				"stats", (json_int_t)r->snap.counters[STALLS_LOST_STATS],
				"pending", (json_int_t)r->snap.counters[STALLS_LOST_PENDING],
				"dirtied", (json_int_t)r->snap.counters[STALLS_LOST_DIRTY]);
	int ret = -1;

	if (!rows || !doc)
		goto out;
	for (size_t i = 0; i < r->snap.n_rows; i++)
		if (json_array_append_new(rows, row_json(r, i)) < 0)
			goto out;
	if (json_object_set(doc, "rows", rows) < 0 || json_dumpf(doc, out, JSON_COMPACT) < 0)
		goto out;
	fputc('\n', out);
	fflush(out);
	ret = 0;
out:
	json_decref(rows);
	json_decref(doc);
	return ret;
}

/* A Prometheus label value: UTF-8 (bad bytes as U+FFFD) with \\, \" and \n escaped. */
static void prom_label(const char *s, char *buf, size_t len)
{
	size_t o = 0, n = strlen(s);
	bool utf8 = json_text_is_utf8(s, n);

	for (size_t i = 0; i < n && o + 4 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == '"') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else if (c >= 0x80 && !utf8) {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
}

void stalls_report_print_prom(const struct stalls_report *r, FILE *out)
{
	static const char *const metrics[][2] = {
		{ "iotier_stalls", "stalls in the window" },
		{ "iotier_stall_seconds", "time stalled in the window" },
		{ "iotier_stall_p99_seconds", "99th percentile of one stall in the window" },
		{ "iotier_stall_max_seconds", "longest stall in the window" },
	};

	for (size_t m = 0; m < 4; m++) {
		fprintf(out, "# HELP %s %s, per thread and cause\n# TYPE %s gauge\n", metrics[m][0],
			metrics[m][1], metrics[m][0]);
		for (size_t i = 0; i < r->snap.n_rows; i++) {
			const struct stalls_row *row = &r->snap.rows[i];
			const char *cls = ioprio_class_name(ioprio_class(row->ioprio));
			char thread[80];
			double v = m == 0 ? (double)row->lat.count :
				   m == 1 ? (double)row->lat.sum_ns / 1e9 :
				   m == 2 ? (double)lat_percentile(&row->lat, 99) / 1e9 :
				   (double)row->lat.max_ns / 1e9;

			prom_label(row->thread, thread, sizeof(thread));
			fprintf(out, "%s{pid=\"%u\",tid=\"%u\",thread=\"%s\",tier=\"%s\","
				"class=\"%s\",cause=\"%s\"} %.9g\n", metrics[m][0], row->tgid,
				row->tid, thread, expect_tier_name(r->tiers[i]), cls ? cls : "?",
				expect_stall_cause_name(row->cause), v);
		}
	}
	fprintf(out, "# HELP iotier_dirtied_bytes page cache newly dirtied in the window, by the "
		"dirtying thread's tier\n# TYPE iotier_dirtied_bytes gauge\n");
	for (int t = TIER_LOW; t <= TIER_DEFAULT; t++)
		fprintf(out, "iotier_dirtied_bytes{tier=\"%s\"} %llu\n",
			expect_tier_name((enum expect_tier)t), (unsigned long long)r->dirtied[t]);
	fprintf(out, "\n");
	fflush(out);
}

int stalls_report_lookup(const struct expect_ref *ref, struct expect_value *out, void *ctx)
{
	const struct stalls_report *r = ctx;
	static struct iolat_lat sum; /* one lookup at a time; too big for the stack */

	memset(out, 0, sizeof(*out));
	memset(&sum, 0, sizeof(sum));
	if (!r || !ref->stall)
		return -1;
	for (size_t i = 0; i < r->snap.n_rows; i++)
		if (r->tiers[i] == ref->tier &&
		    (ref->stall_cause == STALL_CAUSES_ALL || ref->stall_cause == r->snap.rows[i].cause))
			lat_sum(&sum, &r->snap.rows[i].lat);
	switch (ref->metric) {
	case METRIC_COUNT:
		/* No stall at all is a measurement: zero, the best case. */
		out->v = (double)sum.count;
		return 0;
	case METRIC_TOTAL:
		out->v = (double)sum.sum_ns;
		return 0;
	case METRIC_MAX:
		out->v = (double)sum.max_ns;
		return 0;
	case METRIC_MEAN:
		out->v = sum.count ? (double)sum.sum_ns / (double)sum.count : 0;
		return 0;
	case METRIC_PERCENTILE:
		out->v = (double)lat_percentile(&sum, ref->percentile);
		return 0;
	default:
		return -1;
	}
}
