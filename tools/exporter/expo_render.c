// SPDX-License-Identifier: MIT
/*
 * expo_render.c: the exporter's exposition, in the Prometheus text format 0.0.4 or in
 * OpenMetrics 1.0 (which carries each series' _created and ends with # EOF). Both formats
 * give the same sample names and labels, so rules and dashboards work with either. The
 * block metrics in the text format come from lat_report_prom(), the same renderer as
 * `iotier lat --format prom`; OpenMetrics needs its own, for _created and the family names.
 */
#include "expo_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo_adaptive.h"
#include "expo_collect.h"
#include "expo_state.h"
#include "iotier-config.h"
#include "trace/common/trace_common.h"

/* Family metadata; a counter's OpenMetrics family name has no _total, its samples do. */
static void family(FILE *out, bool om, const char *name, const char *type, const char *help)
{
	bool counter = !strcmp(type, "counter");

	fprintf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, counter && !om ? "_total" : "",
		help, name, counter && !om ? "_total" : "", type);
	if (om && strlen(name) > 8 && !strcmp(name + strlen(name) - 8, "_seconds"))
		fprintf(out, "# UNIT %s seconds\n", name);
}

static void counter(FILE *out, bool om, const char *name, const char *help,
		    unsigned long long v, double created)
{
	family(out, om, name, "counter", help);
	fprintf(out, "%s_total %llu\n", name, v);
	if (om)
		fprintf(out, "%s_created %.3f\n", name, created);
}

static void gauge(FILE *out, bool om, const char *name, const char *help, double v)
{
	family(out, om, name, "gauge", help);
	fprintf(out, "%s %.17g\n", name, v);
}

static void labels(FILE *out, const struct lat_row *row)
{
	char dev[32];

	blkdev_name(row->dev, dev, sizeof(dev));
	fputc('{', out);
	lat_prom_labels(out, row, dev);
}

/* One histogram series; the `le` bounds are lat_report_prom's, so series match. */
static void om_histogram(FILE *out, const char *name, const struct lat_row *row,
			 const struct iolat_lat *l, double created)
{
	__u64 cum = 0;

	for (__u32 b = 0; b < HIST_OVERFLOW; b++) {
		double le;

		cum += l->slots[b];
		if (lat_prom_le(b, &le)) {
			fprintf(out, "%s_bucket", name);
			labels(out, row);
			fprintf(out, ",le=\"%.12g\"} %llu\n", le, (unsigned long long)cum);
		}
	}
	fprintf(out, "%s_bucket", name);
	labels(out, row);
	fprintf(out, ",le=\"+Inf\"} %llu\n%s_count", (unsigned long long)l->count, name);
	labels(out, row);
	fprintf(out, "} %llu\n%s_sum", (unsigned long long)l->count, name);
	labels(out, row);
	fprintf(out, "} %.9f\n%s_created", (double)l->sum_ns / 1e9, name);
	labels(out, row);
	fprintf(out, "} %.3f\n", created);
}

static void om_row_counters(FILE *out, const struct expo *e, const char *name, bool bytes)
{
	for (size_t i = 0; i < e->total.nrows; i++) {
		const struct lat_row *row = &e->total.rows[i];

		fprintf(out, "%s_total", name);
		labels(out, row);
		fprintf(out, "} %llu\n%s_created", (unsigned long long)(bytes ? row->bytes : row->count),
			name);
		labels(out, row);
		fprintf(out, "} %.3f\n", expo_created_at(e, row));
	}
}

static void om_block(FILE *out, const struct expo *e)
{
	const struct lat_report_opts *o = &e->report;
	const char *name = o->stage == LAT_STAGE_DEVICE ? "iotier_block_device_latency_seconds" :
		"iotier_block_queue_latency_seconds";
	const struct lat_snapshot *s = &e->total;

	family(out, true, name, "histogram", o->stage == LAT_STAGE_DEVICE ?
	       "Block request latency from issue to completion, by device, operation and I/O priority." :
	       "Block request latency from queue insert to completion, by device, operation and I/O priority.");
	for (size_t i = 0; i < s->nrows; i++)
		om_histogram(out, name, &s->rows[i], lat_row_lat(&s->rows[i], o->stage),
			     expo_created_at(e, &s->rows[i]));
	family(out, true, "iotier_block_requests", "counter", "Completed block requests.");
	om_row_counters(out, e, "iotier_block_requests", false);
	family(out, true, "iotier_block_bytes", "counter",
	       "Bytes transferred by completed block requests.");
	om_row_counters(out, e, "iotier_block_bytes", true);
	gauge(out, true, "iotier_tracer_inflight_requests", "Requests the tracer holds in flight.",
	      (double)s->inflight);
	counter(out, true, "iotier_tracer_dropped_requests", "Requests not traced: in-flight map full.",
		(unsigned long long)(s->drops + s->hist_drops), e->start_time);
}

static void inflight_metrics(FILE *out, bool om, const struct expo *e)
{
	family(out, om, "iotier_block_inflight_requests", "gauge",
	       "Block requests in flight now, by I/O priority class.");
	for (__u32 c = 0; c < IOLAT_NR_CLASSES; c++)
		fprintf(out, "iotier_block_inflight_requests{class=\"%s\"} %llu\n", lat_class_name(c),
			(unsigned long long)e->inflight[c]);
	family(out, om, "iotier_block_oldest_inflight_seconds", "gauge",
	       "Age of the oldest block request in flight, by I/O priority class; 0 when none.");
	for (__u32 c = 0; c < IOLAT_NR_CLASSES; c++)
		fprintf(out, "iotier_block_oldest_inflight_seconds{class=\"%s\"} %.6f\n",
			lat_class_name(c), e->oldest_s[c]);
}

static void shim_metrics(FILE *out, bool om, const struct expo_shim_totals *t)
{
	static const char *const tiers[EXPO_SHIM_TIERS] = { "low", "high" };

	gauge(out, om, "iotier_shim_processes", "Live processes running the iotier shim.",
	      (double)t->processes);
	family(out, om, "iotier_shim_tagged_processes", "gauge",
	       "Processes that comm: or cmdline: rules put in a tier, by tier.");
	for (int i = 0; i < EXPO_SHIM_TIERS; i++)
		fprintf(out, "iotier_shim_tagged_processes{tier=\"%s\"} %lu\n", tiers[i],
			t->process_tier[i]);
	family(out, om, "iotier_shim_threads", "gauge",
	       "Threads the shim put in a tier, by tier and the I/O class they run with.");
	for (int i = 0; i < EXPO_SHIM_TIERS; i++)
		for (__u32 c = 0; c < EXPO_SHIM_CLASSES; c++)
			fprintf(out, "iotier_shim_threads{tier=\"%s\",class=\"%s\"} %lu\n", tiers[i],
				lat_class_name(c), t->threads[i][c]);
	gauge(out, om, "iotier_shim_state_files_ignored",
	      "State files skipped: their process is gone, or the file is not its owner's.",
	      (double)t->ignored);
	expo_adaptive_render(out, om, t, family);
}

static void self_metrics(FILE *out, bool om, const struct expo *e)
{
	family(out, om, "iotier_exporter_build_info", "gauge", "The exporter's version.");
	fprintf(out, "iotier_exporter_build_info{version=\"%s\"} 1\n", IOTIER_VERSION);
	gauge(out, om, "iotier_exporter_start_time_seconds",
	      "When the exporter started: every counter and histogram counts from here.",
	      e->start_time);
	family(out, om, "iotier_exporter_scrape_duration_seconds", "summary",
	       "Time to collect and render the scrapes answered so far.");
	fprintf(out, "iotier_exporter_scrape_duration_seconds_sum %.9f\n"
		"iotier_exporter_scrape_duration_seconds_count %lu\n", e->scrape_seconds, e->scrapes);
	if (om)
		fprintf(out, "iotier_exporter_scrape_duration_seconds_created %.3f\n", e->start_time);
	gauge(out, om, "iotier_exporter_requests_in_flight", "HTTP requests being answered now.",
	      (double)atomic_load(&e->in_flight));
	counter(out, om, "iotier_exporter_requests_dropped",
		"HTTP requests refused with 503: too many in flight.", atomic_load(&e->dropped),
		e->start_time);
	counter(out, om, "iotier_exporter_bpf_missed_runs",
		"Tracer program runs the kernel skipped (recursion): requests not seen.",
		(unsigned long long)e->missed_runs, e->start_time);
	counter(out, om, "iotier_exporter_collect_errors", "Failed reads of the tracer's maps.",
		e->collect_errors, e->start_time);
	counter(out, om, "iotier_exporter_textfile_writes", "Textfile expositions written.",
		e->textfile_writes, e->start_time);
	counter(out, om, "iotier_exporter_textfile_errors", "Textfile expositions that failed.",
		e->textfile_errors, e->start_time);
}

void expo_render(FILE *out, const struct expo *e, bool openmetrics)
{
	if (openmetrics) {
		om_block(out, e);
		lat_coverage_prom(out, &e->total); /* gauges: the same lines in both formats */
	} else {
		lat_report_prom(out, &e->total, &e->report);
	}
	inflight_metrics(out, openmetrics, e);
	self_metrics(out, openmetrics, e);
	if (e->shim_dir)
		shim_metrics(out, openmetrics, &e->shim);
	if (openmetrics)
		fputs("# EOF\n", out);
}

char *expo_scrape(struct expo *e, bool openmetrics, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	double t0;

	if (!out)
		return NULL;
	pthread_mutex_lock(&e->lock);
	t0 = expo_now_monotonic();
	expo_collect(e);
	expo_render(out, e, openmetrics);
	e->scrape_seconds += expo_now_monotonic() - t0;
	e->scrapes++;
	pthread_mutex_unlock(&e->lock);
	if (fclose(out)) {
		free(buf);
		return NULL;
	}
	return buf;
}
