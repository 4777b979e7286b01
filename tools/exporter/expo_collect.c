// SPDX-License-Identifier: MIT
/*
 * expo_collect.c: move what the tracer counted into the exporter's cumulative totals. A row
 * is kept from its first request until its disk disappears from /sys/dev/block; then it is
 * dropped with its creation time, so a disk that comes back starts a new series (with a new
 * _created) and the totals stay bounded however many disks come and go over days.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static bool disk_present(__u32 dev)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", dev >> 20, dev & 0xfffff);
	return access(path, F_OK) == 0;
}

/* Drop the rows, and creation times, of disks that are gone. */
static void drop_gone_disks(struct expo *e)
{
	size_t kept = 0;

	for (size_t r = 0; r < e->total.nrows; r++)
		if (disk_present(e->total.rows[r].dev))
			e->total.rows[kept++] = e->total.rows[r];
	e->total.nrows = kept;
	kept = 0;
	for (size_t i = 0; i < e->ncreated; i++)
		if (disk_present(e->created[i].dev))
			e->created[kept++] = e->created[i];
	e->ncreated = kept;
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
	if (ret)
		e->collect_errors++;
	if (e->shim_dir)
		expo_shim_scan(e);
	return ret;
}
