// SPDX-License-Identifier: MIT
/*
 * lat_coverage.c: how many of a device's completions the latency tracer saw, against the
 * kernel's own diskstats (lat_coverage.h). The tracer's counts are exact by design, and this is
 * what lets a report vouch for that, or say when it does not hold. BPF-free, like
 * lat_snapshot.c, so that renderers and unit tests need no tracer.
 */
#include "lat_coverage.h"

#include "lat_snapshot.h"

/* The diskstats column an iolat op is counted in, or -1 for what is not compared. */
static int diskstats_op_of(__u32 op)
{
	switch (op) {
	case IOLAT_OP_READ:
		return DISKSTATS_READ;
	case IOLAT_OP_WRITE:
		return DISKSTATS_WRITE;
	case IOLAT_OP_DISCARD:
		return DISKSTATS_DISCARD;
	case IOLAT_OP_FLUSH:
		return DISKSTATS_FLUSH;
	default:
		return -1;
	}
}

static struct lat_coverage *find(struct lat_snapshot *snap, __u32 dev)
{
	for (size_t i = 0; i < snap->ncov; i++)
		if (snap->cov[i].dev == dev)
			return &snap->cov[i];
	return NULL;
}

void lat_coverage_count(struct lat_snapshot *snap)
{
	if (snap->coverage_filtered)
		return; /* traced is the device's count, read with the diskstats */
	for (size_t i = 0; i < snap->ncov; i++)
		for (int op = 0; op < DISKSTATS_NR_OPS; op++)
			snap->cov[i].traced[op] = 0;
	for (size_t r = 0; r < snap->nrows; r++) {
		struct lat_coverage *c = find(snap, snap->rows[r].dev);
		int op = diskstats_op_of(snap->rows[r].op);

		if (c && op >= 0)
			c->traced[op] += snap->rows[r].count;
	}
}

void lat_coverage_merge(struct lat_snapshot *dst, const struct lat_snapshot *src)
{
	dst->has_coverage = src->has_coverage;
	dst->coverage_filtered = src->coverage_filtered;
	for (size_t i = 0; i < src->ncov; i++) {
		const struct lat_coverage *s = &src->cov[i];
		struct lat_coverage *d = find(dst, s->dev);

		if (!d) {
			if (dst->ncov == LAT_MAX_COVERAGE)
				continue;
			d = &dst->cov[dst->ncov++];
			*d = (struct lat_coverage){ .dev = s->dev };
		}
		d->compared = s->compared;
		for (int op = 0; op < DISKSTATS_NR_OPS; op++) {
			d->kernel[op] += s->kernel[op];
			d->traced[op] += s->traced[op];
		}
	}
}

long long lat_coverage_missing(const struct lat_coverage *c, __u64 *kernel, __u64 *traced)
{
	*kernel = *traced = 0;
	for (int op = 0; op < DISKSTATS_NR_OPS; op++)
		if (c->compared & (1u << op)) {
			*kernel += c->kernel[op];
			*traced += c->traced[op];
		}
	return (long long)*kernel - (long long)*traced;
}

unsigned long long lat_coverage_may_be_missing(const struct lat_coverage *c, bool filtered,
					       __u64 missed_runs)
{
	__u64 kernel, traced;
	long long missing = lat_coverage_missing(c, &kernel, &traced);

	return (unsigned long long)(missing > 0 ? missing : 0) + (filtered ? missed_runs : 0);
}
