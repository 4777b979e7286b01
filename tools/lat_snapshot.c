// SPDX-License-Identifier: MIT
/*
 * lat_snapshot.c: the BPF-free half of tools/lat_session.h: latency snapshots (rows, merging,
 * sorting), percentiles from the log-linear buckets of bpf/hist.h, and the names and parsers
 * of operations, classes and devices. Kept apart from lat_session.c so that unit tests and
 * renderers need neither libbpf nor a loaded tracer.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lat_session.h"

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
static const char *const class_names[IOLAT_NR_CLASSES] = { "none", "rt", "be", "idle" };

const char *lat_op_name(__u32 op)
{
	return op < IOLAT_NR_OPS ? op_names[op] : "other";
}

const char *lat_class_name(__u32 ioclass)
{
	return ioclass < IOLAT_NR_CLASSES ? class_names[ioclass] : "none";
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

int lat_resolve_dev(const char *name, __u32 *dev)
{
	char path[PATH_MAX];
	unsigned maj, min;
	struct stat st;
	char extra;

	if (sscanf(name, "%u:%u%c", &maj, &min, &extra) == 2) {
		*dev = (maj << 20) | min;
		return 0;
	}
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/dev/%s", name);
	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	maj = major(st.st_rdev);
	min = minor(st.st_rdev);
	/* Requests are counted per whole disk: a partition stands for its disk. */
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", maj, min);
	if (access(path, F_OK) == 0) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", maj, min);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%u:%u", &maj, &min) != 2)
				maj = major(st.st_rdev), min = minor(st.st_rdev);
			fclose(f);
		}
	}
	*dev = (maj << 20) | min;
	return 0;
}

void lat_dev_name(__u32 dev, char *buf, size_t len)
{
	char path[64], target[PATH_MAX];
	ssize_t n;
	char *base;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", dev >> 20, dev & 0xfffff);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		base = strrchr(target, '/');
		snprintf(buf, len, "%s", base ? base + 1 : target);
		return;
	}
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
}
