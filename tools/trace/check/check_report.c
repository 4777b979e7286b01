// SPDX-License-Identifier: MIT
/*
 * check_report.c: aggregation, printing, JSON writing and reading of `iotier check`
 * reports. The JSON keeps the full histograms (non-empty buckets with their bounds in ns),
 * so a saved report can serve as a baseline for any percentile later, and survives a change
 * of bucket layout: buckets are read back by their bounds, not by index.
 */
#include "check_report.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "trace/common/ioprio_text.h"
#include "trace/common/json_text.h"
#include "trace/common/text_escape.h"
#include "trace/lat/lat_coverage_report.h" /* the coverage lines, as `lat` prints them */
#include "trace/lat/lat_snapshot.h" /* lat_percentile, lat_sum */
#include "trace/stalls/stalls_report.h"


struct check_report *check_report_new(void)
{
	return calloc(1, sizeof(struct check_report));
}

void check_report_free(struct check_report *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r);
}


static void cell_merge(struct check_cell *dst, const struct check_cell *src)
{
	dst->count += src->count;
	dst->bytes += src->bytes;
	dst->level_mask |= src->level_mask;
	lat_sum(&dst->lat, &src->lat);
}

/* The kernel's vocabulary (bpf/iotrack.h) in the report's (tools/expect.h). */
static int cause_of(const struct iotrack_key *k)
{
	switch (k->cause) {
	case IOTRACK_SUBMIT: return CAUSE_SUBMIT;
	case IOTRACK_WRITEBACK: return CAUSE_WRITEBACK;
	case IOTRACK_JOURNAL: return CAUSE_JOURNAL;
	default: return CAUSE_OTHER;
	}
}

static unsigned op_of(const struct iotrack_key *k)
{
	return k->op == IOTRACK_READ ? OP_READ : k->op == IOTRACK_WRITE ? OP_WRITE : OP_OTHER;
}

int check_report_add(struct check_report *r, enum expect_tier tier, const struct iotrack_key *k,
		     const struct iotrack_stats *st, bool leak)
{
	unsigned cls = ioprio_class(k->ioprio), op = op_of(k);
	int cause = cause_of(k);
	struct check_cell *c;
	struct check_row *row;

	if (cls >= CHECK_CLASSES)
		cls = 0;
	c = &r->cells[tier][op][cls];
	c->count += st->count;
	c->bytes += st->bytes;
	if (st->count)
		c->level_mask |= 1u << ioprio_level(k->ioprio);
	lat_sum(&c->lat, &st->lat);
	if (leak) {
		r->leaks[tier][op][cause].count += st->count;
		r->leaks[tier][op][cause].bytes += st->bytes;
	}
	if (r->n_rows == r->rows_cap) {
		size_t cap = r->rows_cap ? r->rows_cap * 2 : 64;
		struct check_row *rows = realloc(r->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		r->rows = rows;
		r->rows_cap = cap;
	}
	row = &r->rows[r->n_rows++];
	memset(row, 0, sizeof(*row));
	row->tier = tier;
	row->dev = k->dev;
	row->tgid = k->tgid;
	row->tid = k->tid;
	memcpy(row->comm, k->comm, sizeof(row->comm));
	row->comm[sizeof(row->comm) - 1] = '\0';
	memcpy(row->pcomm, k->pcomm, sizeof(row->pcomm));
	row->pcomm[sizeof(row->pcomm) - 1] = '\0';
	row->cause = cause;
	row->op = op;
	row->ioprio = k->ioprio;
	row->leak = leak;
	row->count = st->count;
	row->bytes = st->bytes;
	return 0;
}

double check_cell_percentile(const struct check_cell *c, double p)
{
	return c->lat.count ? (double)lat_percentile(&c->lat, p) : -1;
}

/* ---- expectation lookup ---- */

static void select_cells(const struct check_report *r, const struct expect_ref *ref,
			 struct check_cell *out, uint32_t *class_mask)
{
	memset(out, 0, sizeof(*out));
	*class_mask = 0;
	for (int op = 0; op < OP_COUNT; op++) {
		if (ref->op != OPS_ALL && ref->op != op)
			continue;
		for (int cls = 0; cls < CHECK_CLASSES; cls++) {
			const struct check_cell *c = &r->cells[ref->tier][op][cls];

			if (ref->ioclass >= 0 && ref->ioclass != cls)
				continue;
			cell_merge(out, c);
			if (c->count)
				*class_mask |= c->level_mask << (cls * 8);
		}
	}
}

int check_report_lookup(const struct expect_ref *ref, struct expect_value *out, void *ctx)
{
	const struct check_sources *src = ctx;
	const struct check_report *r = ref->baseline ? src->baseline : src->run;
	static struct check_cell sel; /* one lookup at a time; too big for the stack */
	uint64_t leak_count = 0, leak_bytes = 0;

	memset(out, 0, sizeof(*out));
	if (ref->stall)
		return src->stalls ? stalls_report_lookup(ref, out, (void *)src->stalls) : -1;
	if (!r || (unsigned)ref->tier >= TIER_COUNT)
		return -1;
	select_cells(r, ref, &sel, &out->class_mask);
	if (ref->leak) {
		for (int op = 0; op < OP_COUNT; op++) {
			if (ref->op != OPS_ALL && ref->op != op)
				continue;
			for (int cause = 0; cause < CAUSE_COUNT; cause++) {
				if (ref->cause != CAUSES_ALL && ref->cause != cause)
					continue;
				leak_count += r->leaks[ref->tier][op][cause].count;
				leak_bytes += r->leaks[ref->tier][op][cause].bytes;
			}
		}
	}
	switch (ref->metric) {
	case METRIC_BYTES:
		out->v = (double)(ref->leak ? leak_bytes : sel.bytes);
		return 0;
	case METRIC_COUNT:
		out->v = (double)(ref->leak ? leak_count : sel.count);
		return 0;
	case METRIC_RATIO:
		if (!sel.bytes)
			return -1;
		out->v = (double)leak_bytes / (double)sel.bytes;
		return 0;
	case METRIC_CLASS:
		return out->class_mask ? 0 : -1;
	case METRIC_PERCENTILE:
		out->v = check_cell_percentile(&sel, ref->percentile);
		return sel.lat.count ? 0 : -1;
	case METRIC_MAX:
		out->v = (double)sel.lat.max_ns;
		return sel.lat.count ? 0 : -1;
	case METRIC_MEAN:
		out->v = sel.lat.count ? (double)sel.lat.sum_ns / (double)sel.lat.count : 0;
		return sel.lat.count ? 0 : -1;
	case METRIC_TOTAL: /* stall paths only, answered above */
		return -1;
	}
	return -1;
}

/* ---- printing ---- */

static void fmt_time(double ns, char *buf, size_t len)
{
	struct expect_value v = { .v = ns };

	expect_format(DIM_TIME, &v, buf, len);
}

static void fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	struct expect_value v = { .v = (double)bytes };

	expect_format(DIM_BYTES, &v, buf, len);
}

static void class_levels(int cls, uint32_t level_mask, char *buf, size_t len)
{
	struct expect_value v = { .class_mask = level_mask << (cls * 8) };

	expect_format(DIM_CLASS, &v, buf, len);
}

static int row_by_bytes(const void *a, const void *b)
{
	const struct check_row *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

#define ROWS_PRINTED 30

static void print_rows(const struct check_report *r, struct check_row *rows, FILE *out);
static void print_warnings(const struct check_report *r, FILE *out);

void check_report_print(const struct check_report *r, FILE *out)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], cls_text[64];
	struct check_row *rows;
	bool any = false;

	fprintf(out, "%-13s %-6s %-10s %8s %10s %9s %9s %9s %9s\n", "tier", "op", "class",
		"requests", "bytes", "p50", "p99", "p99.9", "max");
	for (int t = 0; t < TIER_COUNT; t++)
		for (int op = 0; op < OP_COUNT; op++)
			for (int cls = 0; cls < CHECK_CLASSES; cls++) {
				const struct check_cell *c = &r->cells[t][op][cls];

				if (!c->count && !c->bytes)
					continue;
				any = true;
				class_levels(cls, c->level_mask, cls_text, sizeof(cls_text));
				fmt_bytes(c->bytes, b1, sizeof(b1));
				fmt_time(check_cell_percentile(c, 50), b2, sizeof(b2));
				fmt_time(check_cell_percentile(c, 99), b3, sizeof(b3));
				fmt_time(check_cell_percentile(c, 99.9), b4, sizeof(b4));
				fmt_time((double)c->lat.max_ns, b5, sizeof(b5));
				fprintf(out, "%-13s %-6s %-10s %8llu %10s %9s %9s %9s %9s\n",
					expect_tier_name(t), expect_op_name(op), cls_text,
					(unsigned long long)c->count, b1, b2, b3, b4, b5);
			}
	if (!any)
		fprintf(out, "(no block I/O from the command on the traced devices)\n");

	fprintf(out, "\nleaks (I/O a tier caused that reached the device at another class):\n");
	for (int t = TIER_LOW; t <= TIER_HIGH; t++) {
		uint64_t total = 0, by_cause[CAUSE_COUNT] = { 0 };

		for (int op = 0; op < OP_COUNT; op++)
			for (int cause = 0; cause < CAUSE_COUNT; cause++) {
				by_cause[cause] += r->leaks[t][op][cause].bytes;
				total += r->leaks[t][op][cause].bytes;
			}
		bool first = true;

		fmt_bytes(total, b1, sizeof(b1));
		fprintf(out, "  %-5s %s", expect_tier_name(t), b1);
		for (int cause = 0; cause < CAUSE_COUNT; cause++) {
			if (!by_cause[cause])
				continue;
			fmt_bytes(by_cause[cause], b2, sizeof(b2));
			fprintf(out, "%s%s %s", first ? " (" : ", ", expect_cause_name(cause), b2);
			first = false;
		}
		fputs(first ? "\n" : ")\n", out);
	}

	rows = r->n_rows ? malloc(r->n_rows * sizeof(*rows)) : NULL;
	if (rows)
		print_rows(r, rows, out);
	free(rows);
	print_warnings(r, out);
}

static void print_rows(const struct check_report *r, struct check_row *rows, FILE *out)
{
	char b1[32], b2[32], comm[4 * IOTRACK_COMM_LEN + 1], pcomm[4 * IOTRACK_COMM_LEN + 1];

	memcpy(rows, r->rows, r->n_rows * sizeof(*rows));
	qsort(rows, r->n_rows, sizeof(*rows), row_by_bytes);
	fprintf(out, "\nby thread (unattributed: kernel I/O with no known dirtier):\n");
	fprintf(out, "  %-13s %7s %7s %-16s %-16s %-9s %-6s %-6s %8s %10s\n", "tier", "pid", "tid",
		"thread", "process", "cause", "op", "class", "requests", "bytes");
	for (size_t i = 0; i < r->n_rows && i < ROWS_PRINTED; i++) {
		const struct check_row *w = &rows[i];

		fmt_bytes(w->bytes, b1, sizeof(b1));
		/* Names are the threads' own choice: shown escaped, never raw (text_escape.h). */
		text_escape(comm, sizeof(comm), w->comm);
		text_escape(pcomm, sizeof(pcomm), w->tgid ? w->pcomm : "-");
		fprintf(out, "  %-13s %7u %7u %-16s %-16s %-9s %-6s %-6s %8llu %10s%s\n",
			expect_tier_name(w->tier), w->tgid, w->tid, comm, pcomm, expect_cause_name(w->cause),
			expect_op_name(w->op), ioprio_text(w->ioprio, b2, sizeof(b2)),
			(unsigned long long)w->count, b1, w->leak ? "  LEAK" : "");
	}
	if (r->n_rows > ROWS_PRINTED)
		fprintf(out, "  ... %zu more rows in the --json report\n", r->n_rows - ROWS_PRINTED);
}

static void print_warnings(const struct check_report *r, FILE *out)
{
	char b1[32];

	if (r->counters[IOTRACK_MISSED])
		fprintf(out, "\nwarning: the kernel skipped %llu runs of the tracer (nested on a CPU); "
			"as many requests may be missing\n",
			(unsigned long long)r->counters[IOTRACK_MISSED]);
	if (r->counters[IOTRACK_LOST_START] || r->counters[IOTRACK_LOST_STATS] ||
	    r->counters[IOTRACK_LOST_DIRTY] || r->counters[IOTRACK_LOST_EVENTS])
		fprintf(out, "\nwarning: not recorded: %llu requests untimed, %llu uncounted, %llu "
			"dirtied inodes, %llu process events (tables full)\n",
			(unsigned long long)r->counters[IOTRACK_LOST_START],
			(unsigned long long)r->counters[IOTRACK_LOST_STATS],
			(unsigned long long)r->counters[IOTRACK_LOST_DIRTY],
			(unsigned long long)r->counters[IOTRACK_LOST_EVENTS]);
	if (r->ncov) {
		fputc('\n', out);
		lat_coverage_text(out, r->cov, r->ncov, false, 0);
	}
	if (r->counters[IOTRACK_FOREIGN_BYTES]) {
		fmt_bytes(r->counters[IOTRACK_FOREIGN_BYTES], b1, sizeof(b1));
		fprintf(out, "note: %s on the traced devices came from processes outside the "
			"command (not counted above)\n", b1);
	}
}

/* ---- JSON ---- */

static const char *const counter_keys[IOTRACK_NR_COUNTERS] = {
	"lost_untimed_requests", "lost_uncounted_requests", "lost_dirtied_inodes",
	"lost_process_events", "foreign_bytes", "merged_requests", "missed_program_runs",
};

static json_t *cell_json(const struct check_cell *c)
{
	json_t *o = json_object(), *hist = json_array();
	const struct iolat_lat *l = &c->lat;

	json_object_set_new(o, "count", json_integer((json_int_t)c->count));
	json_object_set_new(o, "bytes", json_integer((json_int_t)c->bytes));
	json_object_set_new(o, "level_mask", json_integer(c->level_mask));
	json_object_set_new(o, "lat_count", json_integer((json_int_t)l->count));
	json_object_set_new(o, "lat_sum_ns", json_integer((json_int_t)l->sum_ns));
	json_object_set_new(o, "lat_min_ns", json_integer((json_int_t)l->min_ns));
	json_object_set_new(o, "lat_max_ns", json_integer((json_int_t)l->max_ns));
	json_object_set_new(o, "p50_ns", json_integer(l->count ? (json_int_t)lat_percentile(l, 50) : 0));
	json_object_set_new(o, "p99_ns", json_integer(l->count ? (json_int_t)lat_percentile(l, 99) : 0));
	json_object_set_new(o, "p99.9_ns",
			    json_integer(l->count ? (json_int_t)lat_percentile(l, 99.9) : 0));
	for (unsigned i = 0; i < HIST_NR_BUCKETS; i++) {
		if (!l->slots[i])
			continue;
		json_array_append_new(hist, json_pack("[I, I, I]", (json_int_t)hist_bucket_low(i),
				      i == HIST_OVERFLOW ? (json_int_t)-1 :
				      (json_int_t)hist_bucket_high(i), (json_int_t)l->slots[i]));
	}
	json_object_set_new(o, "hist_ns", hist);
	return o;
}

static json_t *report_json(const struct check_report *r)
{
	json_t *tiers = json_object();

	for (int t = 0; t < TIER_COUNT; t++) {
		json_t *tier = json_object(), *ops = json_object();
		uint64_t bytes = 0, count = 0, leak_bytes = 0, leak_count = 0;

		for (int op = 0; op < OP_COUNT; op++) {
			json_t *o = json_object(), *classes = json_object(), *leak = json_object();
			json_t *causes = json_object();
			uint64_t ob = 0, oc = 0, lb = 0, lc = 0;

			for (int cls = 0; cls < CHECK_CLASSES; cls++) {
				const struct check_cell *c = &r->cells[t][op][cls];

				ob += c->bytes;
				oc += c->count;
				if (c->count || c->bytes)
					json_object_set_new(classes, ioprio_class_names[cls], cell_json(c));
			}
			for (int cause = 0; cause < CAUSE_COUNT; cause++) {
				const struct check_leak *l = &r->leaks[t][op][cause];

				lb += l->bytes;
				lc += l->count;
				json_object_set_new(causes, expect_cause_name(cause),
						    json_pack("{s:I, s:I}", "bytes", (json_int_t)l->bytes,
							      "count", (json_int_t)l->count));
			}
			json_object_set_new(leak, "bytes", json_integer((json_int_t)lb));
			json_object_set_new(leak, "count", json_integer((json_int_t)lc));
			json_object_set_new(leak, "causes", causes);
			json_object_set_new(o, "bytes", json_integer((json_int_t)ob));
			json_object_set_new(o, "count", json_integer((json_int_t)oc));
			json_object_set_new(o, "classes", classes);
			json_object_set_new(o, "leak", leak);
			json_object_set_new(ops, expect_op_name(op), o);
			bytes += ob;
			count += oc;
			leak_bytes += lb;
			leak_count += lc;
		}
		json_object_set_new(tier, "bytes", json_integer((json_int_t)bytes));
		json_object_set_new(tier, "count", json_integer((json_int_t)count));
		json_object_set_new(tier, "leak_bytes", json_integer((json_int_t)leak_bytes));
		json_object_set_new(tier, "leak_count", json_integer((json_int_t)leak_count));
		json_object_set_new(tier, "ops", ops);
		json_object_set_new(tiers, expect_tier_name(t), tier);
	}
	return tiers;
}

/* One row of the by-thread table; NULL when out of memory. */
static json_t *row_json(const struct check_row *w)
{
	json_t *o = json_object();
	char cls[16];

	if (!o)
		return NULL;
	/* Names are text from outside: json_set_text keeps them valid UTF-8 and recoverable. */
	if (json_object_set_new(o, "tier", json_string(expect_tier_name(w->tier))) ||
	    json_object_set_new(o, "device",
				json_sprintf("%u:%u", w->dev >> 20, w->dev & 0xfffff)) ||
	    json_object_set_new(o, "pid", json_integer((json_int_t)w->tgid)) ||
	    json_object_set_new(o, "tid", json_integer((json_int_t)w->tid)) ||
	    json_set_text(o, "thread", w->comm) ||
	    json_set_text(o, "process", w->tgid ? w->pcomm : "") ||
	    json_object_set_new(o, "cause", json_string(expect_cause_name(w->cause))) ||
	    json_object_set_new(o, "op", json_string(expect_op_name(w->op))) ||
	    json_object_set_new(o, "class",
				json_string(ioprio_text(w->ioprio, cls, sizeof(cls)))) ||
	    json_object_set_new(o, "leak", json_boolean(w->leak)) ||
	    json_object_set_new(o, "count", json_integer((json_int_t)w->count)) ||
	    json_object_set_new(o, "bytes", json_integer((json_int_t)w->bytes))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *rows_json(const struct check_report *r)
{
	json_t *rows = json_array();

	for (size_t i = 0; rows && i < r->n_rows; i++)
		if (json_array_append_new(rows, row_json(&r->rows[i])) < 0) {
			json_decref(rows);
			return NULL;
		}
	return rows;
}

static json_t *outcome_json(const struct check_outcome *oc)
{
	json_t *o = json_object();

	if (!o || json_set_text(o, "expr", oc->expr) ||
	    json_object_set_new(o, "holds", json_boolean(oc->result.holds)) ||
	    json_object_set_new(o, "no_data", json_boolean(oc->result.no_data)) ||
	    json_set_text(o, "measured", oc->result.measured) ||
	    json_set_text(o, "limit", oc->result.limit)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *rules_json(const struct check_meta *meta)
{
	json_t *o = json_object();

	if (!o || json_set_text(o, "low", meta->low_rules ? meta->low_rules : "") ||
	    json_set_text(o, "high", meta->high_rules ? meta->high_rules : "") ||
	    json_set_text(o, "low_class", meta->low_class ? meta->low_class : "idle") ||
	    json_set_text(o, "high_class", meta->high_class ? meta->high_class : "keep")) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The whole report as one JSON object; NULL when out of memory. */
static json_t *check_json(const struct check_report *r, const struct check_meta *meta,
			  const struct check_outcome *outcomes, int n_outcomes)
{
	json_t *root = json_object(), *exps = json_array(), *counters = json_object();
	int bad = !root || !exps || !counters;

	for (int i = 0; !bad && i < n_outcomes; i++)
		bad = json_array_append_new(exps, outcome_json(&outcomes[i])) < 0;
	for (int i = 0; !bad && i < IOTRACK_NR_COUNTERS; i++)
		bad = json_object_set_new(counters, counter_keys[i],
					  json_integer((json_int_t)r->counters[i])) < 0;
	if (bad) {
		json_decref(root);
		json_decref(exps);
		json_decref(counters);
		return NULL;
	}
	/* Not short-circuited: each json_object_set_new takes its value, failing or not. */
	bad |= json_object_set_new(root, "iotier_check_format", json_integer(1));
	bad |= json_object_set_new(root, "hist_layout", json_integer(HIST_LAYOUT_VERSION));
	bad |= json_set_text_list(root, "command", meta->argv);
	bad |= json_object_set_new(root, "exit_status", json_integer(meta->exit_status));
	bad |= json_object_set_new(root, "seconds", json_real(meta->seconds));
	bad |= json_object_set_new(root, "rules", rules_json(meta));
	bad |= json_set_text_list(root, "devices", meta->devices);
	bad |= json_object_set_new(root, "tiers", report_json(r));
	bad |= json_object_set_new(root, "threads", rows_json(r));
	bad |= json_object_set_new(root, "counters", counters);
	bad |= json_object_set_new(root, "diskstats", lat_coverage_json(r->has_coverage, r->cov,
									 r->ncov, false, 0));
	bad |= json_object_set_new(root, "expectations", exps);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

int check_report_write_json(const struct check_report *r, const struct check_meta *meta,
			    const struct check_outcome *outcomes, int n_outcomes, const char *path,
			    char *err, size_t errlen)
{
	json_t *root = check_json(r, meta, outcomes, n_outcomes);
	int ret;

	if (!root) {
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}
	ret = json_dump_file(root, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (ret < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int read_cell(json_t *o, struct check_cell *c)
{
	json_t *hist = json_object_get(o, "hist_ns"), *b;
	size_t i;

	c->count = (uint64_t)json_integer_value(json_object_get(o, "count"));
	c->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
	c->level_mask = (uint32_t)json_integer_value(json_object_get(o, "level_mask"));
	c->lat.count = (uint64_t)json_integer_value(json_object_get(o, "lat_count"));
	c->lat.sum_ns = (uint64_t)json_integer_value(json_object_get(o, "lat_sum_ns"));
	c->lat.min_ns = (uint64_t)json_integer_value(json_object_get(o, "lat_min_ns"));
	c->lat.max_ns = (uint64_t)json_integer_value(json_object_get(o, "lat_max_ns"));
	if (!json_is_array(hist))
		return -1;
	json_array_foreach(hist, i, b) {
		json_int_t low = json_integer_value(json_array_get(b, 0));
		json_int_t n = json_integer_value(json_array_get(b, 2));

		/* By bound, not index: a baseline from another bucket layout still reads. */
		c->lat.slots[hist_bucket((uint64_t)low)] += (uint64_t)n;
	}
	return 0;
}

struct check_report *check_report_read_json(const char *path, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *tiers;
	struct check_report *r;

	if (!root) {
		snprintf(err, errlen, "%s: line %d: %s", path, jerr.line, jerr.text);
		return NULL;
	}
	tiers = json_object_get(root, "tiers");
	if (json_integer_value(json_object_get(root, "iotier_check_format")) != 1 ||
	    !json_is_object(tiers)) {
		snprintf(err, errlen, "%s: not a report written by 'iotier check --json'", path);
		json_decref(root);
		return NULL;
	}
	r = check_report_new();
	if (!r) {
		snprintf(err, errlen, "out of memory");
		json_decref(root);
		return NULL;
	}
	for (int t = 0; t < TIER_COUNT; t++) {
		json_t *ops = json_object_get(json_object_get(tiers, expect_tier_name(t)), "ops");

		for (int op = 0; op < OP_COUNT; op++) {
			json_t *o = json_object_get(ops, expect_op_name(op));
			json_t *classes = json_object_get(o, "classes");
			json_t *causes = json_object_get(json_object_get(o, "leak"), "causes");

			for (int cls = 0; cls < CHECK_CLASSES; cls++) {
				json_t *c = json_object_get(classes, ioprio_class_names[cls]);

				if (c && read_cell(c, &r->cells[t][op][cls]) < 0) {
					snprintf(err, errlen, "%s: tiers.%s.ops.%s.classes.%s has no "
						 "hist_ns", path, expect_tier_name(t),
						 expect_op_name(op), ioprio_class_names[cls]);
					json_decref(root);
					check_report_free(r);
					return NULL;
				}
			}
			for (int cause = 0; cause < CAUSE_COUNT; cause++) {
				json_t *l = json_object_get(causes, expect_cause_name(cause));

				r->leaks[t][op][cause].bytes =
					(uint64_t)json_integer_value(json_object_get(l, "bytes"));
				r->leaks[t][op][cause].count =
					(uint64_t)json_integer_value(json_object_get(l, "count"));
			}
		}
	}
	json_decref(root);
	return r;
}
