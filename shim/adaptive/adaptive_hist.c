// SPDX-License-Identifier: MIT
/*
 * adaptive_hist.c: what the controller reads from a window's latency histogram (the
 * log-linear buckets of bpf/hist.h, so the shim's timing and the tracer agree on a
 * latency's bucket): the number of reads, how many were over the target, a percentile, the
 * time they took.
 */
#include "adaptive_hist.h"

#include "hist.h"

uint64_t adaptive_hist_count(const uint32_t *hist)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
		n += hist[i];
	return n;
}

/*
 * A bucket is up to 6.25% wide. Counting the bound's own bucket whole or not at all would
 * move the target by that much; counting it in proportion keeps the miss fraction honest
 * when the reads cluster near the target, which is exactly where the controller settles.
 */
uint64_t adaptive_hist_over(const uint32_t *hist, uint64_t bound_ns)
{
	uint32_t b = hist_bucket(bound_ns);
	uint64_t over = 0, low = hist_bucket_low(b), high = hist_bucket_high(b);

	for (uint32_t i = b + 1; i < HIST_NR_BUCKETS; i++)
		over += hist[i];
	if (b < HIST_OVERFLOW && high > low)
		over += (uint64_t)hist[b] * (high - 1 - bound_ns) / (high - low);
	return over;
}

uint64_t adaptive_hist_percentile(const uint32_t *hist, uint32_t permille)
{
	uint64_t n = adaptive_hist_count(hist), rank, seen = 0;

	if (!n)
		return 0;
	rank = (n * permille + 999) / 1000; /* the smallest value with permille of reads at or below */
	if (!rank)
		rank = 1;
	for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++) {
		seen += hist[i];
		if (seen >= rank)
			return i >= HIST_OVERFLOW ? hist_bucket_low(i)
						  : (hist_bucket_low(i) + hist_bucket_high(i)) / 2;
	}
	return hist_bucket_low(HIST_OVERFLOW);
}

/* Saturating: billions of reads in the overflow bucket would not fit a 64-bit sum. */
uint64_t adaptive_hist_time_floor(const uint32_t *hist)
{
	uint64_t ns = 0, part;

	for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
		if (__builtin_mul_overflow((uint64_t)hist[i], hist_bucket_low(i), &part) ||
		    __builtin_add_overflow(ns, part, &ns))
			return UINT64_MAX;
	return ns;
}
