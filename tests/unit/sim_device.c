// SPDX-License-Identifier: MIT
/*
 * sim_device.c: the model disk of sim_device.h and the loop that plays the shim's part:
 * accumulate a window of measurements, hand it to the controller at its deadline, obey the
 * cap and chunk it answers with.
 */
#include "sim_device.h"

#include <math.h>
#include <string.h>

#define MS 1000000ull

void sim_device_default(struct sim_device *d)
{
	memset(d, 0, sizeof(*d));
	d->base_ns = 300000;
	d->jitter_ns = 100000;
	d->setup_ns = 150000;
	d->ns_per_kib = 3413; /* 300 MB/s */
	d->low_threads = 1;
	d->low_request = 1u << 20;
	d->reader_on = true;
	d->rng = 0x9e3779b97f4a7c15ull;
}

/* xorshift64*: deterministic, good enough to shape a latency distribution. */
static uint64_t next_random(struct sim_device *d)
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return d->rng * 2685821657736338717ull;
}

/* Uniform in [0, n). */
static uint64_t uniform(struct sim_device *d, uint64_t n)
{
	return n ? (next_random(d) >> 11) % n : 0;
}

/* Exponential with mean @mean_ns: the gap between two Poisson arrivals. */
static uint64_t exponential(struct sim_device *d, uint64_t mean_ns)
{
	double u = (double)((next_random(d) >> 11) + 1) / 9007199254740993.0; /* (0, 1) */

	return (uint64_t)(-log(u) * (double)mean_ns);
}

static uint64_t low_io_size(const struct sim_device *d, uint32_t chunk)
{
	return chunk < d->low_request ? chunk : d->low_request;
}

static uint64_t service_ns(const struct sim_device *d, uint64_t size)
{
	return d->setup_ns + size * d->ns_per_kib / 1024;
}

static uint32_t low_in_flight(const struct sim_device *d, uint32_t cap)
{
	return cap < d->low_threads ? cap : d->low_threads;
}

uint64_t sim_untagged_rate(const struct sim_device *d)
{
	return d->low_request * 1000000000ull / service_ns(d, d->low_request);
}

/* One read under @cap/@chunk: its latency, and the low bytes served while it waited. */
static uint64_t sim_read(struct sim_device *d, uint32_t cap, uint32_t chunk, uint64_t *low)
{
	uint64_t size = low_io_size(d, chunk), s = service_ns(d, size), wait = 0;
	uint32_t q = low_in_flight(d, cap);
	uint64_t lat = d->base_ns + uniform(d, d->jitter_ns) + d->disturb_ns;

	if (q)
		wait = (q - 1) * s + uniform(d, s);
	if (uniform(d, 1000) < d->noise_permille)
		lat += d->noise_ns;
	*low = s ? wait * size / s : 0;
	return lat + wait;
}

static void note_window(const struct adaptive *c, bool in_probe, uint64_t bytes, uint64_t ns,
			struct sim_stats *st)
{
	if (in_probe)
		return;
	st->windows_run++;
	if (c->p.floor_rate && ns && bytes * 1000000000ull / ns < c->p.floor_rate)
		st->windows_under_floor++;
}

/* The database: flushes add to L0 until @now, the low tier's @low bytes compact it. */
static void sim_l0(struct sim_device *d, uint64_t now, uint64_t low)
{
	if (!d->l0_trigger)
		return;
	for (; d->next_flush_ns <= now; d->next_flush_ns += d->flush_every_ns)
		d->l0_bytes += d->file_bytes;
	d->l0_bytes -= low < d->l0_bytes ? low : d->l0_bytes;
}

/* L0 in files as the LOG's lsm_state would say, into @w and the stats. */
static void note_l0(const struct sim_device *d, struct adaptive_window *w, struct sim_stats *st)
{
	if (!d->l0_trigger)
		return;
	w->l0_files = (uint32_t)((d->l0_bytes + d->file_bytes - 1) / d->file_bytes);
	w->l0_trigger = d->l0_trigger;
	if (w->l0_files > st->max_l0)
		st->max_l0 = w->l0_files;
}

/* Simulate until the controller's deadline: fill @w, return the new time. */
static uint64_t sim_window(struct sim_device *d, struct adaptive *c, uint64_t now,
			   uint64_t bound_ns, struct adaptive_window *w, struct sim_stats *st)
{
	bool in_probe = c->phase != PHASE_RUN;

	while (now < c->deadline_ns) {
		uint64_t low = 0, dt;

		if (d->reader_on) {
			uint64_t idle = 0, arrival = now, call, low_waited;

			if (d->arrival_ns) {
				if (!d->next_arrival_ns)
					d->next_arrival_ns = now + exponential(d, d->arrival_ns);
				arrival = d->next_arrival_ns;
				d->next_arrival_ns += exponential(d, d->arrival_ns);
				idle = arrival > now ? arrival - now : 0;
			}
			/* Waiting for its request, the reader leaves the low tier the channel. */
			if (idle && low_in_flight(d, c->cap))
				low = idle * low_io_size(d, c->chunk) /
				      service_ns(d, low_io_size(d, c->chunk));
			call = sim_read(d, c->cap, c->chunk, &low_waited);
			low += low_waited;
			dt = idle + call;
			w->hist[hist_bucket(call)]++;
			w->queued += !idle; /* back to back: a closed loop's every read */
			if (!in_probe) {
				uint64_t felt = now + dt - arrival;

				st->reads++;
				st->reads_over += felt > bound_ns;
				st->felt[hist_bucket(felt)]++;
			}
		} else {
			/* The fast path: with the reader idle, the low tier goes at full. */
			uint64_t size = low_io_size(d, ADAPTIVE_UNLIMITED);

			dt = MS;
			if (low_in_flight(d, ADAPTIVE_UNLIMITED))
				low = dt * size / service_ns(d, size);
		}
		if (d->reader_on && (d->low_threads > c->cap || d->low_request > c->chunk))
			w->low_limited++;
		w->low_bytes += low;
		if (!in_probe) {
			st->low_bytes += low;
			st->ns += dt;
			if (c->cap == 0)
				st->held_ns_run += dt;
		}
		now += dt;
		sim_l0(d, now, low);
	}
	note_l0(d, w, st);
	return now;
}

void sim_run(struct sim_device *d, struct adaptive *c, uint64_t *now, uint64_t until,
	     uint64_t bound_ns, struct sim_stats *st)
{
	static struct adaptive_window w;

	memset(st, 0, sizeof(*st));
	st->min_level = UINT32_MAX;
	while (*now < until) {
		bool in_probe = c->phase != PHASE_RUN;
		uint64_t start = *now;
		uint32_t level = c->level, floor = c->l0_floor;

		if (!in_probe) {
			if (c->level < st->min_level)
				st->min_level = c->level;
			if (c->level > st->max_level)
				st->max_level = c->level;
		}
		memset(&w, 0, sizeof(w));
		*now = sim_window(d, c, *now, bound_ns, &w, st);
		note_window(c, in_probe, w.low_bytes, *now - start, st);
		adaptive_step(c, *now, &w);
		st->level_changes += c->phase == PHASE_RUN && !in_probe && c->level != level;
		st->floor_changes += c->l0_floor != floor;
		st->windows_under_l0_floor += c->phase == PHASE_RUN && c->level < c->l0_floor;
	}
}
