// SPDX-License-Identifier: MIT
/*
 * expo_collect.c: move what the tracer counted into the exporter's cumulative totals. A row
 * is kept from its first request until its disk disappears from /sys/dev/block (or, like a
 * detached loop device, shrinks to nothing); then it is dropped with its creation time, so
 * a disk that comes back starts a new series (with a new _created) and the totals stay
 * bounded however many disks come and go over days.
 */
#include "expo_collect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "expo_shim.h"
#include "expo_state.h"

static double clock_seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double expo_now_realtime(void)
{
	return clock_seconds(CLOCK_REALTIME);
}

double expo_now_monotonic(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

static bool same_series(const struct expo_created *c, const struct lat_row *row)
{
	return c->dev == row->dev && c->op == row->op && c->ioclass == row->ioclass &&
	       c->level == row->level;
}

double expo_created_at(const struct expo *e, const struct lat_row *row)
{
	for (size_t i = 0; i < e->ncreated; i++)
		if (same_series(&e->created[i], row))
			return e->created[i].at;
	return e->start_time;
}

/* Give every row of the totals a creation time: now, for the ones seen the first time. */
static int note_created(struct expo *e, double now)
{
	for (size_t r = 0; r < e->total.nrows; r++) {
		const struct lat_row *row = &e->total.rows[r];
		size_t i;

		for (i = 0; i < e->ncreated && !same_series(&e->created[i], row); i++)
			;
		if (i < e->ncreated)
			continue;
		if (e->ncreated == e->capcreated) {
			size_t cap = e->capcreated ? 2 * e->capcreated : 32;
			struct expo_created *n = realloc(e->created, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			e->created = n;
			e->capcreated = cap;
		}
		e->created[e->ncreated++] = (struct expo_created){
			.dev = row->dev, .op = row->op, .ioclass = row->ioclass,
			.level = row->level, .at = now };
	}
	return 0;
}

/* Gone: removed (hot-unplug), or of size 0 (a detached loop device, a medium taken out). */
static bool disk_present(__u32 dev)
{
	char path[64], size[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/size", dev >> 20, dev & 0xfffff);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(size, sizeof(size), f))
		size[0] = '\0';
	fclose(f);
	return strtoull(size, NULL, 10) > 0;
}

/* Drop the rows, coverage and creation times of disks that are gone. */
static void drop_gone_disks(struct expo *e)
{
	size_t kept = 0;

	for (size_t r = 0; r < e->total.nrows; r++)
		if (disk_present(e->total.rows[r].dev))
			e->total.rows[kept++] = e->total.rows[r];
	e->total.nrows = kept;
	kept = 0;
	for (size_t i = 0; i < e->total.ncov; i++)
		if (disk_present(e->total.cov[i].dev))
			e->total.cov[kept++] = e->total.cov[i];
	e->total.ncov = kept;
	kept = 0;
	for (size_t i = 0; i < e->ncreated; i++)
		if (disk_present(e->created[i].dev))
			e->created[kept++] = e->created[i];
	e->ncreated = kept;
}

/* In-flight requests by class, and the age of each class's oldest: a starved class waits. */
static int note_inflight(struct expo *e)
{
	__u64 oldest[IOLAT_NR_CLASSES];
	struct timespec now;
	int ret = lat_session_inflight_by_class(e->session, e->inflight, oldest);

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (int c = 0; c < IOLAT_NR_CLASSES; c++) {
		double age = oldest[c] ? ((double)now.tv_sec * 1e9 + (double)now.tv_nsec -
					  (double)oldest[c]) / 1e9 : 0;

		e->oldest_s[c] = age > 0 ? age : 0;
	}
	return ret;
}

int expo_collect(struct expo *e)
{
	int ret = lat_session_read(e->session, &e->delta, false);

	if (!ret && e->report.by_class)
		ret = lat_snapshot_by_class(&e->delta);
	if (!ret)
		ret = lat_snapshot_merge(&e->total, &e->delta);
	if (!ret) {
		drop_gone_disks(e);
		ret = note_created(e, expo_now_realtime());
	}
	if (!ret)
		ret = lat_session_missed_runs(e->session, &e->missed_runs);
	if (!ret)
		ret = note_inflight(e);
	if (ret)
		e->collect_errors++;
	if (e->shim_dir)
		expo_shim_scan(e);
	return ret;
}
