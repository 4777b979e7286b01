/* SPDX-License-Identifier: MIT */
/*
 * bench_common.h: what the benchmark programs share: the clock their latencies are taken
 * with, sorting and medians of samples, and a sync of the scratch file system between runs.
 */
#ifndef IOTIER_BENCH_COMMON_H
#define IOTIER_BENCH_COMMON_H

#include <stddef.h>

/* CLOCK_MONOTONIC in seconds. */
double bench_now(void);

/* Sort @n samples ascending. */
void bench_sort(double *v, size_t n);

/* The median of @n samples (sorts them); 0 for none. */
double bench_median(double *v, size_t n);

/* syncfs(2) on the file system holding directory @dir, so runs start clean. */
void bench_syncfs(const char *dir);

#endif
