// SPDX-License-Identifier: MIT
/*
 * refdisk-model: the timing model of bench/refdisk-fs (see refdisk-model.h): FIFO over N
 * channels, per-request latency plus size over bandwidth.
 */
#include "refdisk-model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

int refdisk_model_parse(struct refdisk_model *m, const char *text)
{
	unsigned long long lat_us, bw;
	int channels, used = 0;

	if (sscanf(text, "%llu %llu %d %n", &lat_us, &bw, &channels, &used) != 3 || text[used])
		return -EINVAL;
	/* at most 10 s per request: anything longer is a typo, and would trip hung-task checks */
	if (channels < 1 || channels > REFDISK_MAX_CHANNELS || lat_us > 10000000)
		return -EINVAL;
	m->lat_ns = (int64_t)lat_us * 1000;
	m->bw = bw;
	m->channels = channels;
	for (int i = 0; i < REFDISK_MAX_CHANNELS; i++)
		m->free_at[i] = 0;
	return 0;
}

int64_t refdisk_model_admit(struct refdisk_model *m, int64_t arrive_ns, int write, size_t len)
{
	int c = 0;

	for (int i = 1; i < m->channels; i++)
		if (m->free_at[i] < m->free_at[c])
			c = i;
	int64_t start = m->free_at[c] > arrive_ns ? m->free_at[c] : arrive_ns;
	/* 128-bit: a 1 MiB request at 1 byte/s must not overflow */
	int64_t transfer = m->bw ? (int64_t)((unsigned __int128)len * 1000000000u / m->bw) : 0;
	int64_t done = start + m->lat_ns + transfer;

	m->free_at[c] = done;
	m->requests[!!write]++;
	m->bytes[!!write] += len;
	if (len > m->max_request)
		m->max_request = len;
	m->service_ns += done - start;
	m->queued_ns += start - arrive_ns;
	return done;
}

void refdisk_model_finished(struct refdisk_model *m, int64_t late_ns)
{
	m->finished++;
	m->late_ns += late_ns;
	if (late_ns > m->late_max_ns)
		m->late_max_ns = late_ns;
}

void refdisk_model_format(const struct refdisk_model *m, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRId64 " %" PRIu64 " %d\n", m->lat_ns / 1000, m->bw, m->channels);
}

void refdisk_stats_format(const struct refdisk_model *m, char *buf, size_t len)
{
	snprintf(buf, len,
		 "reads %" PRIu64 "\nwrites %" PRIu64 "\nread_bytes %" PRIu64 "\nwrite_bytes %" PRIu64
		 "\nmax_request %" PRIu64 "\nservice_ns %" PRId64 "\nqueued_ns %" PRId64
		 "\nfinished %" PRIu64 "\nlate_ns %" PRId64 "\nlate_max_ns %" PRId64 "\n",
		 m->requests[0], m->requests[1], m->bytes[0], m->bytes[1], m->max_request,
		 m->service_ns, m->queued_ns, m->finished, m->late_ns, m->late_max_ns);
}
