/* SPDX-License-Identifier: MIT */
/*
 * sim_device.h: a model disk to drive the adaptive controller in unit tests, on simulated
 * time and a seeded generator, so every run is the same run. One FIFO channel: a high read
 * takes base + jitter and waits behind the low I/Os in flight (min(cap, low threads) of
 * them, the first partly done), each taking setup + its size / bandwidth. The low tier moves
 * what the device served while the reader waited, or everything when the reader is off.
 * Optionally a database's L0: a flush adds a file at a fixed rate, and the low tier's bytes
 * compact them away; each window tells the controller L0 and its trigger, as the LOG would.
 * Optionally an open-loop reader: requests arrive at random (Poisson), each read starts at
 * its arrival or when the last ended, whichever is later, and what it feels (counted against
 * the bound) runs from its arrival; the controller sees the call, as the shim does, and
 * which reads began queued.
 */
#ifndef IOTIER_SIM_DEVICE_H
#define IOTIER_SIM_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "adaptive/adaptive.h"

struct sim_device {
	uint64_t base_ns, jitter_ns;   /* a read alone: base + uniform [0, jitter) */
	uint64_t setup_ns, ns_per_kib; /* a low I/O: setup + size / bandwidth */
	uint32_t low_threads;          /* low threads issuing back to back; 0: none */
	uint64_t low_request;          /* bytes per low request before splitting */
	uint32_t noise_permille;       /* reads hit by an outside spike ... */
	uint64_t noise_ns;             /* ... of this much */
	uint64_t disturb_ns;           /* added to every read (an outside load), 0 normally */
	bool reader_on;
	uint64_t arrival_ns;           /* open loop: the mean time between arrivals; 0: closed */
	uint64_t next_arrival_ns;      /* ... the next one (0: draw it) */
	uint64_t rng;
	uint32_t l0_trigger;           /* the slowdown trigger; 0: no database */
	uint64_t flush_every_ns;       /* a flush adds a file of ... */
	uint64_t file_bytes;           /* ... this much, which as many low bytes compact */
	uint64_t l0_bytes, next_flush_ns; /* L0 now, and when the next flush comes */
};

/* What happened over one sim_run, to assert on. */
struct sim_stats {
	uint64_t reads, reads_over;    /* reads, and reads over the bound given to sim_run (an
					  open loop's from their arrival) */
	uint32_t felt[HIST_NR_BUCKETS]; /* the reads' latency as felt (open loop: from arrival) */
	uint64_t low_bytes, ns;        /* low bytes moved and time, outside probes */
	uint64_t windows_run;          /* controller steps outside probes (windows and looks) */
	uint64_t windows_under_floor;  /* ... whose low rate was under the floor */
	uint32_t min_level, max_level; /* outside probes */
	uint64_t held_ns_run;          /* time at cap 0 outside probes */
	uint32_t max_l0;               /* the most L0 files a window ended with */
	uint64_t level_changes;        /* steps whose level differed from the one before */
	uint64_t floor_changes;        /* steps whose L0 floor differed from the one before */
	uint64_t windows_under_l0_floor; /* windows that ended below the controller's L0 floor */
};

/* The rig of issue 12's table: 150 us + 300 MB/s, 1 MiB low writes, one low thread. */
void sim_device_default(struct sim_device *d);

/* Advance @c from @*now to @until on @d; reads over @bound_ns are counted in @st. */
void sim_run(struct sim_device *d, struct adaptive *c, uint64_t *now, uint64_t until,
	     uint64_t bound_ns, struct sim_stats *st);

/* The low tier's rate on @d with the reader off and no limits, bytes per second. */
uint64_t sim_untagged_rate(const struct sim_device *d);

#endif
