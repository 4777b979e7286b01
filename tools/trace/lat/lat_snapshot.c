// SPDX-License-Identifier: MIT
/*
 * lat_snapshot.c: the BPF-free half of the latency tracer (lat_snapshot.h): latency
 * snapshots (rows, merging, sorting), percentiles from the log-linear buckets of bpf/hist.h, and the names and parsers
 * of operations and classes. Kept apart from lat_session.c so that unit tests and
 * renderers need neither libbpf nor a loaded tracer.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lat_snapshot.h"
#include "core/core.h"

void lat_sum(struct iolat_lat *dst, const struct iolat_lat *src)
{
	if (!src->count)
		return;
	if (!dst->count || src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	for (__u32 i = 0; i < HIST_NR_BUCKETS; i++)
		dst->slots[i] += src->slots[i];
}

void lat_snapshot_init(struct lat_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
}

void lat_snapshot_free(struct lat_snapshot *snap)
{
	free(snap->rows);
	memset(snap, 0, sizeof(*snap));
}

struct lat_row *lat_snapshot_row(struct lat_snapshot *snap, __u32 dev, __u32 op, __u32 ioclass,
				 int level)
{
	struct lat_row *row;

	for (size_t i = 0; i < snap->nrows; i++) {
		row = &snap->rows[i];
		if (row->dev == dev && row->op == op && row->ioclass == ioclass && row->level == level)
			return row;
	}
	if (snap->nrows == snap->cap) {
		size_t cap = snap->cap ? 2 * snap->cap : 16;
		struct lat_row *n = realloc(snap->rows, cap * sizeof(*n));

		if (!n)
			return NULL;
		snap->rows = n;
		snap->cap = cap;
	}
	row = &snap->rows[snap->nrows++];
	memset(row, 0, sizeof(*row));
	row->dev = dev;
	row->op = op;
	row->ioclass = ioclass;
	row->level = level;
	return row;
}

static int merge_row(struct lat_snapshot *dst, const struct lat_row *src, int level)
{
	struct lat_row *row = lat_snapshot_row(dst, src->dev, src->op, src->ioclass, level);

	if (!row)
		return -ENOMEM;
	row->count += src->count;
	row->bytes += src->bytes;
	lat_sum(&row->q2c, &src->q2c);
	lat_sum(&row->d2c, &src->d2c);
	return 0;
}

int lat_snapshot_merge(struct lat_snapshot *dst, const struct lat_snapshot *src)
{
	for (size_t i = 0; i < src->nrows; i++)
		if (merge_row(dst, &src->rows[i], src->rows[i].level))
			return -ENOMEM;
	if (dst->start.tv_sec == 0)
		dst->start = src->start;
	dst->end = src->end;
	dst->drops = src->drops;
	dst->hist_drops = src->hist_drops;
	dst->requeues = src->requeues;
	dst->merges = src->merges;
	dst->inflight = src->inflight;
	dst->inflight_max = src->inflight_max;
	dst->attach = src->attach;
	dst->missed_runs += src->missed_runs;
	lat_coverage_merge(dst, src);
	lat_snapshot_sort(dst);
	return 0;
}

int lat_snapshot_by_class(struct lat_snapshot *snap)
{
	struct lat_snapshot out = *snap;

	out.rows = NULL;
	out.nrows = out.cap = 0;
	for (size_t i = 0; i < snap->nrows; i++)
		if (merge_row(&out, &snap->rows[i], -1)) {
			free(out.rows);
			return -ENOMEM;
		}
	free(snap->rows);
	*snap = out;
	lat_snapshot_sort(snap);
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct lat_row *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->ioclass != y->ioclass)
		return x->ioclass < y->ioclass ? -1 : 1;
	return (x->level > y->level) - (x->level < y->level);
}

void lat_snapshot_sort(struct lat_snapshot *snap)
{
	if (snap->nrows > 1)
		qsort(snap->rows, snap->nrows, sizeof(*snap->rows), row_cmp);
}

__u64 lat_percentile(const struct iolat_lat *l, double p)
{
	double want = p / 100.0 * (double)l->count;
	__u64 rank = (__u64)want, cum = 0;

	if (!l->count)
		return 0;
	if ((double)rank < want)
		rank++;
	if (rank < 1)
		rank = 1;
	/* The last rank is the max, which is known exactly; no need to estimate it. */
	if (rank >= l->count)
		return l->max_ns;
	for (__u32 i = 0; i < HIST_NR_BUCKETS; i++) {
		__u64 mid;

		cum += l->slots[i];
		if (cum < rank)
			continue;
		if (i == HIST_OVERFLOW)
			return l->max_ns;
		mid = hist_bucket_low(i) + (hist_bucket_high(i) - hist_bucket_low(i)) / 2;
		if (mid < l->min_ns)
			mid = l->min_ns;
		if (mid > l->max_ns)
			mid = l->max_ns;
		return mid;
	}
	return l->max_ns;
}

static const char *const op_names[IOLAT_NR_OPS] = { "read", "write", "flush", "discard", "other" };

const char *lat_op_name(__u32 op)
{
	return op < IOLAT_NR_OPS ? op_names[op] : "other";
}

const char *lat_class_name(__u32 ioclass)
{
	const char *name = ioprio_class_name(ioclass);

	return name ? name : "none";
}

int lat_parse_ops(const char *list, __u32 *mask, char *bad, size_t badlen)
{
	const char *p = list;

	*mask = 0;
	while (1) {
		size_t n = strcspn(p, ",");
		unsigned op;

		for (op = 0; op < IOLAT_NR_OPS; op++)
			if (n == strlen(op_names[op]) && !strncmp(p, op_names[op], n))
				break;
		if (op == IOLAT_NR_OPS) {
			snprintf(bad, badlen, "%.*s", (int)n, p);
			return -1;
		}
		*mask |= 1u << op;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}
