/* SPDX-License-Identifier: MIT */
/*
 * adaptive_hist.h: what the controller reads from a window's histogram of the high tier's
 * read latencies (bpf/hist.h's buckets): how many, how many over a bound, a percentile, how
 * long they took.
 * Pure functions of the buckets, tested in tests/unit/check-adaptive.c.
 */
#ifndef IOTIER_ADAPTIVE_HIST_H
#define IOTIER_ADAPTIVE_HIST_H

#include <stdint.h>

uint64_t adaptive_hist_count(const uint32_t *hist);
/* Reads over @bound_ns; the bucket holding the bound counts in proportion. */
uint64_t adaptive_hist_over(const uint32_t *hist, uint64_t bound_ns);
/* The @permille percentile (bucket midpoint), 0 for an empty histogram. */
uint64_t adaptive_hist_percentile(const uint32_t *hist, uint32_t permille);
/* The reads' summed latency, each at its bucket's lower bound: at most the true sum. */
uint64_t adaptive_hist_time_floor(const uint32_t *hist);

#endif
