// SPDX-License-Identifier: MIT
/*
 * shim-cost.c: the loop that bench/micro/shim-cost times. It does one-byte pread()s of a small file
 * that sits in the page cache, so each call is almost all syscall entry and exit and any time
 * the shim's wrapper adds shows up undiluted.
 *
 * Shimmed and plain calls are compared inside one process, in alternating blocks: `pread`
 * (which is libiotier.so's wrapper when the shim is preloaded) against libc's own pread,
 * looked up in libc.so.6 directly so that it bypasses the shim. Each pair of neighbouring
 * blocks gives one ratio, and the median of those ratios is the figure: on a shared, noisy
 * machine, drift between processes or even seconds apart is larger than the cost being
 * measured, but two blocks 30 ms apart see the same machine. Run without the shim, both
 * sides are libc's pread, which measures the method's own bias (it should be 1.00).
 *
 * Optionally T-1 other threads are present; each does one I/O call first (so the shim knows
 * it, as it would know a database's threads) and then sleeps, since the question is whether
 * the shim's per-call work grows with the number of threads it tracks.
 *
 * Prints one line of key=value fields; shim= says whether libiotier.so's API is present in
 * the process, so the driver can refuse a "shimmed" figure that was not shimmed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define FILE_BYTES 4096
#define WARMUP_CALLS 200000
#define BLOCK_CALLS 50000 /* about 30 ms a block: short enough to share the machine's mood */

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

static int fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, done;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * ns per call of one block of @n preads through @fn; counts failures in *@failed. Not
 * inlined, so both sides are the same indirect call and differ only in the target.
 */
static double block(pread_fn fn, long n, long *failed) __attribute__((noinline));

/*
 * The loop thread's own CPU time, not wall time: on a shared 2-CPU machine a block that is
 * preempted would otherwise count someone else's work. A pread of a cached byte never
 * sleeps, so its CPU time is all of its cost.
 */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double block(pread_fn fn, long n, long *failed)
{
	double t0 = now_ns();
	char c;

	for (long i = 0; i < n; i++)
		if (fn(fd, &c, 1, i & (FILE_BYTES - 1)) != 1)
			(*failed)++;
	return (now_ns() - t0) / (double)n;
}

/* A thread that is present, known to the shim (one pread), and idle until the end. */
static void *bystander(void *arg)
{
	char name[16], c;

	snprintf(name, sizeof(name), "bystander-%u", (unsigned)(unsigned long)arg);
	prctl(PR_SET_NAME, name);
	if (pread(fd, &c, 1, 0) != 1)
		abort();
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&cond);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "calls", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char path[] = "/var/tmp/iotier-shim-cost.XXXXXX", buf[FILE_BYTES];
	long calls = 10 * 1000 * 1000, threads = 1;
	int (*get_tier)(void);
	pthread_t *tids = NULL;
	pread_fn volatile wrapped_ptr = pread;
	pread_fn wrapped = wrapped_ptr, libc_pread;
	double *ratio = NULL, shim_sum = 0, plain_sum = 0;
	long failed = 0, pairs;
	int opt, status = 1;
	void *libc;

	while ((opt = getopt_long(argc, argv, "n:t:h", options, NULL)) != -1) {
		switch (opt) {
		case 'n':
			calls = strtol(optarg, NULL, 10);
			break;
		case 't':
			threads = strtol(optarg, NULL, 10);
			break;
		case 'h':
			printf("usage: shim-cost [--calls N] [--threads T]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (calls < 1 || threads < 1 || threads > 100000) {
		fprintf(stderr, "shim-cost: --calls must be >= 1 and --threads 1..100000\n");
		return 2;
	}
	prctl(PR_SET_NAME, "shim-cost");
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	libc_pread = libc ? (pread_fn)dlsym(libc, "pread") : NULL;
	if (!libc_pread) {
		fprintf(stderr, "shim-cost: cannot find libc's own pread: %s\n", dlerror());
		return 1;
	}
	pairs = (calls + BLOCK_CALLS - 1) / BLOCK_CALLS;

	fd = mkstemp(path);
	if (fd < 0) {
		perror("shim-cost: mkstemp");
		return 1;
	}
	unlink(path);
	memset(buf, 'x', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		perror("shim-cost: write");
		goto out;
	}

	tids = calloc((size_t)threads, sizeof(*tids));
	ratio = calloc((size_t)pairs, sizeof(*ratio));
	if (!tids || !ratio)
		goto out;
	for (long i = 1; i < threads; i++)
		if ((errno = pthread_create(&tids[i], NULL, bystander, (void *)i))) {
			perror("shim-cost: pthread_create");
			threads = i; /* join what exists */
			goto join;
		}
	pthread_mutex_lock(&lock);
	while (ready < threads - 1)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	block(wrapped, WARMUP_CALLS, &failed);
	block(libc_pread, WARMUP_CALLS, &failed);
	for (long p = 0; p < pairs; p++) {
		double s, l;

		/* Alternate which side goes first, so neither always follows the other. */
		if (p & 1) {
			l = block(libc_pread, BLOCK_CALLS, &failed);
			s = block(wrapped, BLOCK_CALLS, &failed);
		} else {
			s = block(wrapped, BLOCK_CALLS, &failed);
			l = block(libc_pread, BLOCK_CALLS, &failed);
		}
		ratio[p] = s / l;
		shim_sum += s;
		plain_sum += l;
	}
	qsort(ratio, (size_t)pairs, sizeof(*ratio), cmp_double);

	get_tier = (int (*)(void))dlsym(RTLD_DEFAULT, "iotier_get_tier");
	if (failed)
		fprintf(stderr, "shim-cost: %ld preads failed\n", failed);
	else
		status = 0;
	printf("ratio=%.5f shim_ns=%.2f plain_ns=%.2f pairs=%ld calls=%ld threads=%ld shim=%s "
	       "tier=%d\n", ratio[pairs / 2], shim_sum / (double)pairs, plain_sum / (double)pairs,
	       pairs, pairs * BLOCK_CALLS, threads, get_tier ? "yes" : "no",
	       get_tier ? get_tier() : -1);
join:
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (long i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
out:
	free(ratio);
	free(tids);
	close(fd);
	return status;
}
