// SPDX-License-Identifier: MIT
/*
 * class_trace.c: per-class byte counts for one device, from a lat_session snapshot. The
 * tests use it to prove where I/O landed, not how fast it was.
 */
#include "class_trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trace/lat/lat_session.h"

int class_trace_open(struct class_trace *t, unsigned major, unsigned minor, uint32_t op_mask,
		     int filter_tgid, char *err, size_t errlen)
{
	struct lat_options opt;

	memset(&opt, 0, sizeof(opt));
	t->session = NULL;
	if (lat_preflight(err, errlen) < 0)
		return -EPERM;
	opt.ndevs = 1;
	opt.devs[0] = (major << 20) | minor;
	opt.op_mask = op_mask;
	opt.filter_tgid = filter_tgid;
	opt.follow_forks = filter_tgid;
	return lat_session_open(&t->session, &opt, err, errlen);
}

int class_trace_track(struct class_trace *t, pid_t tgid)
{
	return lat_session_track(t->session, (__u32)tgid);
}

int class_trace_read(struct class_trace *t, struct class_bytes *out)
{
	struct lat_snapshot snap;
	int ret;

	memset(out, 0, sizeof(*out));
	lat_snapshot_init(&snap);
	ret = lat_session_read(t->session, &snap, false);
	for (size_t i = 0; ret == 0 && i < snap.nrows; i++) {
		const struct lat_row *r = &snap.rows[i];

		if (r->ioclass < 4 && r->level >= 0 && r->level < 8)
			out->bytes[r->ioclass][r->level] += r->bytes;
		out->total += r->bytes;
	}
	for (size_t i = 0; ret == 0 && snap.has_coverage && i < snap.ncov; i++) {
		__u64 kernel, traced;

		out->missing += lat_coverage_missing(&snap.cov[i], &kernel, &traced);
	}
	lat_snapshot_free(&snap);
	return ret;
}

void class_trace_close(struct class_trace *t)
{
	if (t->session)
		lat_session_close(t->session);
	t->session = NULL;
}

uint64_t class_bytes_not_idle(const struct class_bytes *c)
{
	uint64_t idle = 0;

	for (int l = 0; l < 8; l++)
		idle += c->bytes[3][l];
	return c->total - idle;
}
