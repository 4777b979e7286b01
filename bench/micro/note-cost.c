// SPDX-License-Identifier: MIT
/*
 * note-cost.c: does the adaptive tier's one shared histogram contend when several high
 * threads note their reads at once? Each of T threads does one-byte preads of a cached file
 * (the fastest read there is, so a thread notes as often as it possibly can, far more often
 * than any device answers) and times each with two CLOCK_MONOTONIC reads, as the shim does.
 * The time then goes to:
 *   bare     nowhere, and the read is not timed either: the pread alone, the baseline of
 *            the others (fast minus bare is all a noted foreground read pays here);
 *   none     nowhere: the cost of the timing alone;
 *   shared   one histogram for all threads, one atomic add on a line every thread writes
 *            (all these reads land in the same bucket): the region's first design;
 *   cpu      the region's histogram slot of the CPU the thread runs on
 *            (adaptive_region_note_read): what the shim does;
 *   private  a histogram of the thread's own (a plain add on a line nobody else touches):
 *            the floor for any per-thread design;
 *   fast     cpu, and the fast path's count in flight, start and end stamps and gap
 *            (adaptive_region_fg_begin and _end on device slot 0: one line per device,
 *            which every high thread reading that device writes), and the load that
 *            leaves a read beside a probe's paced low piece out (adaptive_region_fg_alone);
 *            and the mark of a read that began as its thread's last one ended, from a
 *            thread-local stamp, in the same add as the read
 *            (adaptive_region_note_read_queued): here every read is back to back.
 * Prints ns of thread CPU time per call, the median over the threads of the median of
 * blocks: shared minus private is what contention adds per noted read.
 * usage: note-cost [--threads T] [--calls N] [--mode bare|none|shared|cpu|private|fast]
 */
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adaptive/adaptive_region.h"
#include "bench_common.h"

#define FILE_BYTES 4096
#define BLOCK_CALLS 20000
#define MAX_THREADS 64

enum mode { MODE_NONE, MODE_SHARED, MODE_CPU, MODE_PRIVATE, MODE_FAST, MODE_BARE };
static const char *const mode_names[] = { "none", "shared", "cpu", "private", "fast", "bare" };

static _Atomic uint32_t shared_hist[HIST_NR_BUCKETS];

static struct adaptive_region *region;
static int mode; /* enum mode */
static long calls = 2000000;
static pthread_barrier_t start;
static __thread __attribute__((tls_model("initial-exec"))) uint64_t last_read_end_ns;

struct worker {
	pthread_t tid;
	int fd;        /* a file of its own: the page's refcount is not shared either */
	double ns_per_call;
	_Alignas(64) uint32_t hist[HIST_NR_BUCKETS]; /* MODE_PRIVATE: this thread's own */
};

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *reader(void *arg)
{
	struct worker *w = arg;
	long blocks = (calls + BLOCK_CALLS - 1) / BLOCK_CALLS;
	double *per_block = calloc((size_t)blocks, sizeof(*per_block));
	char c;

	if (!per_block)
		abort();
	pthread_barrier_wait(&start);
	for (long b = 0; b < blocks; b++) {
		uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		for (long i = 0; i < BLOCK_CALLS; i++) {
			uint64_t t0, ns;

			if (mode == MODE_BARE) {
				if (pread(w->fd, &c, 1, i & (FILE_BYTES - 1)) != 1)
					abort();
				continue;
			}
			t0 = clock_ns(CLOCK_MONOTONIC);

			if (mode == MODE_FAST)
				adaptive_region_fg_begin(region, 0, t0);
			if (pread(w->fd, &c, 1, i & (FILE_BYTES - 1)) != 1)
				abort();
			ns = clock_ns(CLOCK_MONOTONIC) - t0;
			if (mode == MODE_FAST)
				adaptive_region_fg_end(region, 0, t0 + ns);
			if (mode == MODE_SHARED)
				atomic_fetch_add_explicit(&shared_hist[hist_bucket(ns)], 1,
							  memory_order_relaxed);
			else if (mode == MODE_CPU)
				adaptive_region_note_read(region, ns);
			else if (mode == MODE_FAST) {
				bool queued = t0 - last_read_end_ns < ADAPTIVE_QUEUED_GAP_NS;

				last_read_end_ns = t0 + ns;
				if (adaptive_region_fg_alone(region, 0, t0))
					adaptive_region_note_read_queued(region, ns, queued);
			}
			else if (mode == MODE_PRIVATE)
				w->hist[hist_bucket(ns)]++;
		}
		per_block[b] = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / BLOCK_CALLS;
	}
	w->ns_per_call = bench_median(per_block, (size_t)blocks);
	free(per_block);
	return NULL;
}

static int parse_mode(const char *name)
{
	for (int m = 0; m < (int)(sizeof(mode_names) / sizeof(mode_names[0])); m++)
		if (!strcmp(name, mode_names[m]))
			return m;
	return -1;
}

static int parse(int argc, char **argv, long *threads)
{
	static const struct option options[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "calls", required_argument, NULL, 'n' },
		{ "mode", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "t:n:m:", options, NULL)) != -1) {
		if (opt == 't')
			*threads = strtol(optarg, NULL, 10);
		else if (opt == 'n')
			calls = strtol(optarg, NULL, 10);
		else if (opt != 'm' || (mode = parse_mode(optarg)) < 0)
			break;
	}
	if (opt != -1 || optind != argc || *threads < 1 || *threads > MAX_THREADS || calls < 1) {
		fprintf(stderr, "usage: note-cost [--threads 1..%d] [--calls N] "
			"[--mode bare|none|shared|cpu|private|fast]\n", MAX_THREADS);
		return -1;
	}
	return 0;
}

/* A small cached file for each thread, unlinked at once. */
static int open_files(struct worker *workers, long threads)
{
	char buf[FILE_BYTES] = { 0 };

	for (long i = 0; i < threads; i++) {
		char path[] = "/var/tmp/iotier-note-cost.XXXXXX";

		workers[i].fd = mkstemp(path);
		if (workers[i].fd < 0)
			return -1;
		unlink(path);
		if (write(workers[i].fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS];
	struct adaptive_target target = { .set = true, .permille = 990, .latency_ns = 5000000000ull };
	struct adaptive_params p;
	double ns[MAX_THREADS];
	long threads = 1;

	if (parse(argc, argv, &threads) < 0)
		return 2;
	adaptive_params_default(&p);
	region = adaptive_region_create(&p, &target, clock_ns(CLOCK_MONOTONIC));
	if (!region || open_files(workers, threads) < 0) {
		perror("note-cost");
		return 1;
	}
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&workers[i].tid, NULL, reader, &workers[i]) != 0)
			abort();
	for (long i = 0; i < threads; i++) {
		pthread_join(workers[i].tid, NULL);
		ns[i] = workers[i].ns_per_call;
	}
	printf("mode=%s threads=%ld ns_per_call=%.1f\n", mode_names[mode], threads,
	       bench_median(ns, (size_t)threads));
	return 0;
}
