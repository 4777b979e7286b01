/* SPDX-License-Identifier: MIT */
/*
 * hist.h: the log-linear latency histogram shared by every iotier tracer, on both sides.
 * A value in nanoseconds maps to a bucket index and a bucket index maps back to its bounds.
 * Each power of two is split into HIST_SUB (16) equal sub-buckets, so a bucket is at most
 * 1/16 = 6.25% of its lower bound wide and a percentile reported at a bucket's midpoint is
 * within about 3% of the true value; bcc's power-of-two log2 buckets are up to 100% off,
 * which is too coarse to compare priority classes. Values are counted in 64 ns units: below
 * 1.024 us (16 units) buckets are linear, 64 ns wide; from 1.024 us on
 * they are log-linear; from 2^36 ns (68.7 s) on, one overflow bucket.
 *
 * Everything is static inline over fixed-width types and free of loops and libc, so the
 * same code compiles into BPF programs (with vmlinux.h) and into user space (with
 * <linux/types.h>). Changing the layout changes every consumer's map value size; bump
 * HIST_LAYOUT_VERSION when you do, it is reported in the JSON output.
 */
#ifndef IOTIER_HIST_H
#define IOTIER_HIST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HIST_LAYOUT_VERSION 1
#define HIST_UNIT_SHIFT 6                          /* 64 ns units */
#define HIST_SUB_BITS 4
#define HIST_SUB (1u << HIST_SUB_BITS)             /* sub-buckets per power of two */
#define HIST_MAX_MSB 29                            /* top octave ends at 2^30 units = 2^36 ns = 68.7 s */
/* Linear buckets 0..15, then (HIST_MAX_MSB - HIST_SUB_BITS + 1) log-linear octaves. */
#define HIST_NR_REGULAR ((HIST_MAX_MSB - HIST_SUB_BITS + 2) * HIST_SUB)
#define HIST_OVERFLOW HIST_NR_REGULAR              /* index of the overflow bucket */
#define HIST_NR_BUCKETS (HIST_NR_REGULAR + 1)

/* Index of the most significant set bit of a non-zero @v, without loops (BPF-friendly). */
static inline __u32 hist_msb(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* Bucket index of a latency of @ns nanoseconds; always < HIST_NR_BUCKETS. */
static inline __u32 hist_bucket(__u64 ns)
{
	__u64 u = ns >> HIST_UNIT_SHIFT;
	__u32 msb, sub;

	if (u < HIST_SUB)
		return (__u32)u;
	msb = hist_msb(u);
	if (msb > HIST_MAX_MSB)
		return HIST_OVERFLOW;
	sub = (__u32)(u >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1);
	return (msb - HIST_SUB_BITS + 1) * HIST_SUB + sub;
}

/* Smallest latency in ns that falls into bucket @i (inclusive lower bound). */
static inline __u64 hist_bucket_low(__u32 i)
{
	__u32 octave, sub;

	if (i < HIST_SUB)
		return (__u64)i << HIST_UNIT_SHIFT;
	if (i >= HIST_OVERFLOW)
		return (__u64)1 << (HIST_MAX_MSB + 1 + HIST_UNIT_SHIFT);
	octave = i / HIST_SUB - 1;                 /* msb - HIST_SUB_BITS */
	sub = i % HIST_SUB;
	return ((__u64)(HIST_SUB + sub) << octave) << HIST_UNIT_SHIFT;
}

/* Exclusive upper bound in ns of bucket @i; the overflow bucket has none (~0). */
static inline __u64 hist_bucket_high(__u32 i)
{
	if (i >= HIST_OVERFLOW)
		return ~(__u64)0;
	return hist_bucket_low(i + 1);
}

#endif
