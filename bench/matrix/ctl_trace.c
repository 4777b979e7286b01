// SPDX-License-Identifier: MIT
/* ctl_trace.c: the controller's state per bucket, sampled from this process's region. */
#include "ctl_trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adaptive/adaptive_tier.h"

#define SAMPLE_NS 10000000L /* every 10 ms */

static struct {
	pthread_t tid;
	int running;
	atomic_int stop;
	int64_t t0, bucket_ns;
	int n;
	struct adaptive_region *region;
	int *lo, *hi, *probe;
	/* The controller's cumulative counts at the bucket's last sample. */
	uint64_t *misses, *queue_misses;
} t;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The shim's region in this process: a mapping of the memfd ADAPTIVE_REGION_NAME. */
static struct adaptive_region *find_region(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;
	struct adaptive_region *found = NULL;

	if (!maps)
		return NULL;
	while (!found && fgets(line, sizeof(line), maps))
		if (strstr(line, "/memfd:" ADAPTIVE_REGION_NAME) &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi > lo &&
		    adaptive_region_valid((struct adaptive_region *)lo, hi - lo))
			found = (struct adaptive_region *)lo;
	fclose(maps);
	return found;
}

static void sample(void)
{
	struct adaptive_view v;
	int64_t b = (mono_ns() - t.t0) / t.bucket_ns;
	int level;

	if (b < 0 || b >= t.n || adaptive_view_read(adaptive_view_copy_local, t.region, &v))
		return;
	level = (int)v.level;
	if (t.lo[b] < 0 || level < t.lo[b])
		t.lo[b] = level;
	if (level > t.hi[b])
		t.hi[b] = level;
	t.probe[b] |= v.probing != 0;
	t.misses[b] = v.misses;
	t.queue_misses[b] = v.queue_misses;
}

static void *sampler(void *unused)
{
	struct timespec pause = { 0, SAMPLE_NS };

	(void)unused;
	pthread_setname_np(pthread_self(), "ctl-trace");
	while (!atomic_load(&t.stop)) {
		sample();
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static void *zeroed(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("ctl_trace");
		exit(1);
	}
	return p;
}

void ctl_trace_start(int64_t t0_ns, int64_t bucket_ns, int nbuckets)
{
	t.t0 = t0_ns;
	t.bucket_ns = bucket_ns;
	t.n = nbuckets;
	t.lo = zeroed((size_t)nbuckets, sizeof(int));
	t.hi = zeroed((size_t)nbuckets, sizeof(int));
	t.probe = zeroed((size_t)nbuckets, sizeof(int));
	t.misses = zeroed((size_t)nbuckets, sizeof(uint64_t));
	t.queue_misses = zeroed((size_t)nbuckets, sizeof(uint64_t));
	for (int b = 0; b < nbuckets; b++)
		t.lo[b] = t.hi[b] = -1;
	/*
	 * The shim maps the region in its constructor, before main: none now, none later (no
	 * target, or no shim: the reference runs), and no thread beside their load.
	 */
	t.region = find_region();
	t.running = t.region && pthread_create(&t.tid, NULL, sampler, NULL) == 0;
}

void ctl_trace_stop(void)
{
	atomic_store(&t.stop, 1);
	if (t.running)
		pthread_join(t.tid, NULL);
	t.running = 0;
}

static void print_ints(const char *name, const int *values, int full)
{
	printf("\"%s\":[", name);
	for (int b = 0; b < full && b < t.n; b++)
		printf("%s%d", b ? "," : "", values[b]);
	printf("],");
}

/* A cumulative count, as what each bucket added (an unseen bucket adds nothing). */
static void print_deltas(const char *name, const uint64_t *counts, int full)
{
	uint64_t before = 0;

	printf("\"%s\":[", name);
	for (int b = 0; b < full && b < t.n; b++) {
		uint64_t now = t.lo[b] < 0 ? before : counts[b];

		printf("%s%llu", b ? "," : "", (unsigned long long)(now > before ? now - before : 0));
		before = now;
	}
	printf("],");
}

void ctl_trace_print(int full)
{
	print_ints("ctl_level_min", t.lo, full);
	print_ints("ctl_level_max", t.hi, full);
	print_deltas("ctl_misses", t.misses, full);
	print_deltas("ctl_queue_misses", t.queue_misses, full);
	print_ints("ctl_probe", t.probe, full);
}
