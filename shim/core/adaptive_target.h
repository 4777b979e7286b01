/* SPDX-License-Identifier: MIT */
/*
 * adaptive_target.h: the latency target of the adaptive low tier (IOTIER_TARGET, `iotier run
 * --target`), e.g. "read.p99<=2x" (relative to the reads' own unloaded latency) or
 * "read.p99<=1.5ms" (absolute). Parsed by the shared core, so the CLI refuses exactly what
 * the shim would refuse. Grammar and bounds are in docs/adaptive.md.
 */
#ifndef IOTIER_ADAPTIVE_TARGET_H
#define IOTIER_ADAPTIVE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The percentile, in tenths of a percent: 990 is p99, 999 is p99.9. */
#define TARGET_PERMILLE_MAX 999

/* Bounds, so that a typo (2000x, 1ns) is an error rather than a silent nonsense target. */
#define TARGET_FACTOR_MIN_MILLI 1100     /* 1.1x: below that the baseline's noise decides */
#define TARGET_FACTOR_MAX_MILLI 100000   /* 100x */
#define TARGET_ABS_MIN_NS 10000ull       /* 10us: below any block device's read */
#define TARGET_ABS_MAX_NS 10000000000ull /* 10s */

struct adaptive_target {
	bool set;                  /* false: no target, the adaptive controller is off */
	uint16_t permille;         /* which percentile of the high tier's reads */
	bool relative;             /* factor_milli of a measured baseline, else latency_ns */
	uint32_t factor_milli;     /* 2x is 2000 */
	uint64_t latency_ns;       /* the absolute bound */
};

/*
 * Parse @text into @out. Returns 0, or -1 with one line in @err that names the bad token.
 * An empty @text means no target (out->set is false).
 */
int adaptive_target_parse(const char *text, struct adaptive_target *out, char *err,
			  size_t errlen);

/* Write @t back in the canonical form ("read.p99<=2x", "read.p99.9<=1500us"). */
void adaptive_target_format(const struct adaptive_target *t, char *buf, size_t len);

#endif
