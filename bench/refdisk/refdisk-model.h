/* SPDX-License-Identifier: MIT */
/*
 * refdisk-model: the reference disk's timing model, kept apart from FUSE so that a unit
 * test can drive it with made-up clocks. N channels, each busy for LAT + size / BW per
 * request; a request takes the channel that frees first, in arrival order (FIFO, no
 * priority). Not thread-safe: the caller holds its lock around every call.
 */
#ifndef REFDISK_MODEL_H
#define REFDISK_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define REFDISK_MAX_CHANNELS 64

struct refdisk_model {
	int64_t lat_ns;   /* per request, on its channel */
	uint64_t bw;      /* bytes per second per channel; 0 = no transfer time */
	int channels;
	int64_t free_at[REFDISK_MAX_CHANNELS]; /* CLOCK_MONOTONIC ns a channel is free from */

	/* counters, read through the stats file */
	uint64_t requests[2], bytes[2]; /* [0] reads, [1] writes */
	uint64_t max_request;
	int64_t service_ns; /* model time handed out: the channels' busy time */
	int64_t queued_ns;  /* time requests waited for a channel */
	uint64_t finished;
	int64_t late_ns, late_max_ns; /* how much later than the model the sleeps woke */
};

/* Set the model from "LAT_US BW_BYTES_PER_S CHANNELS"; keeps the counters. -EINVAL if bad. */
int refdisk_model_parse(struct refdisk_model *m, const char *text);

/* One request of len bytes arriving at arrive_ns: its finish time in ns. */
int64_t refdisk_model_admit(struct refdisk_model *m, int64_t arrive_ns, int write, size_t len);

/* A request's sleep ended late_ns after its finish time. */
void refdisk_model_finished(struct refdisk_model *m, int64_t late_ns);

void refdisk_model_format(const struct refdisk_model *m, char *buf, size_t len);
void refdisk_stats_format(const struct refdisk_model *m, char *buf, size_t len);

#endif
