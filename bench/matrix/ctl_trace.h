/* SPDX-License-Identifier: MIT */
/*
 * ctl_trace.h: the adaptive controller's state over a matrix-load run, per 100 ms bucket
 * beside the background's bytes and the reader's slow reads: the lowest and highest level,
 * the misses the controller cut, whether a probe held the tier. It reads the region the shim
 * maps in this very process (found in /proc/self/maps by its memfd's name), through the
 * seqlocked view `iotier threads` uses, every 10 ms from a thread of its own that makes no
 * I/O. Without a target (no region at the start) no thread runs and every bucket is
 * unseen. What a run's trace is for: why a run stayed near held, where the level was when
 * the slow reads came.
 */
#ifndef IOTIER_CTL_TRACE_H
#define IOTIER_CTL_TRACE_H

#include <stdint.h>

/* Start sampling into @nbuckets buckets of @bucket_ns from @t0_ns (CLOCK_MONOTONIC). */
void ctl_trace_start(int64_t t0_ns, int64_t bucket_ns, int nbuckets);
/* Stop, and wait for the sampler. */
void ctl_trace_stop(void);
/*
 * The JSON fields, each followed by a comma, for the first @full buckets:
 * "ctl_level_min":[...],"ctl_level_max":[...] (-1: no sample), "ctl_misses":[...] (misses
 * counted in the bucket), "ctl_probe":[...] (1: a probe held the tier in it).
 */
void ctl_trace_print(int full);

#endif
