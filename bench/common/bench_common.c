// SPDX-License-Identifier: MIT
/*
 * bench_common.c: see bench_common.h.
 */
#include "bench_common.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_double);
}

double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	bench_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_syncfs(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
}
