// SPDX-License-Identifier: MIT
/*
 * iotier-demo.c: the program behind README command 1. One process, two threads, one disk:
 * a foreground thread does 4 KiB random O_DIRECT reads (a database serving point lookups)
 * and a background thread named "compactor" does 1 MiB O_DIRECT writes (a database
 * compacting). It reports the foreground's read latency (P50/P99) and the compactor's
 * throughput. Run it plain and it shows the damage background writes do to foreground
 * latency; run it under `iotier run --low 'compactor*'` and the compactor is tagged idle by
 * name, without a line of this program knowing about iotier. run-demo does both.
 *
 * The disk is a throwaway loop device with a shallow queue (see make_device for why), created
 * here and gone when the process exits, even when it is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/ioprio.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "loopdev.h"
#include "core/rules.h"

#define READ_SIZE 4096
#define WRITE_SIZE (1024 * 1024)
#define DEVICE_BYTES (512ull * 1024 * 1024)
/* Reads stay in the first half of the device and writes in the second, so they never touch
 * the same blocks and the only thing they share is the queue. */
#define READ_SPAN (DEVICE_BYTES / 2)
#define WRITE_BASE (DEVICE_BYTES / 2)
#define WRITE_SPAN (DEVICE_BYTES / 2)
#define SHALLOW_DEPTH 4

static const char usage_text[] =
	"usage: iotier-demo [OPTIONS]\n"
	"\n"
	"One foreground thread does 4 KiB random direct reads while a background thread named\n"
	"\"compactor\" does 1 MiB direct writes, on a throwaway loop device with a shallow queue.\n"
	"Prints the foreground's P50/P99 read latency and the compactor's MB/s. Needs root.\n"
	"\n"
	"options:\n"
	"  -t, --seconds N      measure for N seconds (default 10, after a 1 s warm-up)\n"
	"  -F, --fg-only        no compactor: the foreground alone, the baseline\n"
	"      --bg-idle        the compactor sets itself idle with ioprio_set(2): what iotier\n"
	"                       does from outside, done from inside, to check the rig\n"
	"  -d, --device PATH    use this block device instead of a loop device (DESTROYS DATA\n"
	"                       in its first GiB)\n"
	"  -k, --think-us N     the foreground pauses N us after each read (default 0: back to\n"
	"                       back), as a service between requests; the disk then has gaps\n"
	"  -w, --warmup N       seconds before measuring (default 1); the adaptive tier needs\n"
	"                       a few to measure its baseline (run-demo gives it 6)\n"
	"  -c, --cdf FILE       write the foreground's latency CDF to FILE: lines of\n"
	"                       \"MICROSECONDS FRACTION\" (bench/common/cdf.gp's input)\n"
	"  -q, --quiet          print only the RESULT line\n"
	"\n"
	"examples:\n"
	"  iotier-demo                                  # plain: compactor at the default class\n"
	"  iotier run --low 'compactor*' -- iotier-demo # compactor tagged idle by iotier\n"
	"  examples/demo/run-demo                       # all three runs, side by side\n";

static const struct option options[] = {
	{ "seconds", required_argument, NULL, 't' },
	{ "fg-only", no_argument, NULL, 'F' },
	{ "bg-idle", no_argument, NULL, 'I' },
	{ "device", required_argument, NULL, 'd' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "think-us", required_argument, NULL, 'k' },
	{ "cdf", required_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *device_path;
static long think_us;
static int bg_idle;
static atomic_int stop;
static atomic_int measuring;

/* Foreground latencies in microseconds; only the foreground thread writes here. */
static float *lat_us;
static size_t lat_count, lat_cap;
static atomic_ullong bg_bytes;
static int fg_error, bg_error;
/* The compactor's I/O priority as the kernel reports it after its first write: proof of
 * whether anything (iotier, or --bg-idle) tagged it. -1 until known. */
static atomic_int bg_ioprio = -1;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *foreground(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	void *buf = NULL;
	int fd;

	(void)arg;
	prctl(PR_SET_NAME, "foreground");
	fd = open(device_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || posix_memalign(&buf, 4096, READ_SIZE)) {
		fg_error = errno;
		goto out;
	}
	while (!atomic_load(&stop)) {
		off_t off = (off_t)(xorshift(&seed) % (READ_SPAN / READ_SIZE)) * READ_SIZE;
		double t0 = now_s(), t1;

		if (pread(fd, buf, READ_SIZE, off) != READ_SIZE) {
			fg_error = errno ? errno : EIO;
			break;
		}
		t1 = now_s();
		if (!atomic_load(&measuring))
			continue;
		if (lat_count == lat_cap) {
			size_t cap = lat_cap ? lat_cap * 2 : 1 << 16;
			float *grown = realloc(lat_us, cap * sizeof(*grown));

			if (!grown) {
				fg_error = ENOMEM;
				break;
			}
			lat_us = grown;
			lat_cap = cap;
		}
		lat_us[lat_count++] = (float)((t1 - t0) * 1e6);
		if (think_us) {
			struct timespec ts = { think_us / 1000000, think_us % 1000000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static void *compactor(void *arg)
{
	off_t off = 0;
	void *buf = NULL;
	int fd;

	(void)arg;
	/*
	 * The name is all iotier needs: a rule 'compactor*' matches it, and the shim gives this
	 * thread the low class before its first write below. The program itself knows nothing.
	 */
	prctl(PR_SET_NAME, "compactor");
	if (bg_idle &&
	    syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0))) {
		bg_error = errno;
		return NULL;
	}
	fd = open(device_path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || posix_memalign(&buf, 4096, WRITE_SIZE)) {
		bg_error = errno;
		goto out;
	}
	memset(buf, 0xc5, WRITE_SIZE);
	while (!atomic_load(&stop)) {
		if (pwrite(fd, buf, WRITE_SIZE, WRITE_BASE + off) != WRITE_SIZE) {
			bg_error = errno ? errno : EIO;
			break;
		}
		if (atomic_load(&bg_ioprio) < 0)
			atomic_store(&bg_ioprio,
				     (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
		off = (off + WRITE_SIZE) % WRITE_SPAN;
		if (atomic_load(&measuring))
			atomic_fetch_add(&bg_bytes, WRITE_SIZE);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

static double percentile(double p)
{
	size_t i;

	if (!lat_count)
		return 0;
	i = (size_t)(p / 100.0 * (double)(lat_count - 1) + 0.5);
	return lat_us[i];
}

/* As iotier names classes, except that no class at all reads "default" here. */
static void format_class(int ioprio, char *out, size_t len)
{
	if (ioprio < 0 || !ioprio_class_name(IOPRIO_PRIO_CLASS(ioprio)))
		snprintf(out, len, "-");
	else if (IOPRIO_PRIO_CLASS(ioprio) == IOPRIO_CLASS_NONE)
		snprintf(out, len, "default");
	else
		ioprio_format(ioprio, out, len);
}

/*
 * Give the read half real blocks. The backing file starts sparse, and a direct read of a
 * hole is answered by the host filesystem without touching its disk: the reads would be
 * unrealistically cheap, and their latency nothing like a database's.
 */
static int prefill(const char *path)
{
	void *buf = NULL;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || posix_memalign(&buf, 4096, WRITE_SIZE)) {
		ret = -errno;
		goto out;
	}
	memset(buf, 0x5a, WRITE_SIZE);
	for (off_t off = 0; off < (off_t)READ_SPAN && !atomic_load(&stop); off += WRITE_SIZE)
		if (pwrite(fd, buf, WRITE_SIZE, off) != WRITE_SIZE) {
			ret = errno ? -errno : -EIO;
			break;
		}
	if (!ret && fdatasync(fd) < 0)
		ret = -errno;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

/*
 * Why the shallow queue: an I/O priority class only changes anything where requests wait
 * in the I/O scheduler, and they wait there only when the device's request budget
 * (queue/nr_requests) is used up. A loop device accepts 128 requests at once, far more than
 * one reader and one writer ever have in flight, so every request goes straight through to
 * the backing file and mq-deadline never gets to choose. A real saturated disk is the
 * opposite: its queue is full and the scheduler picks what goes next. nr_requests 4 (which
 * the kernel only accepts while the scheduler is none, so loopdev_create sets it first and
 * then switches to mq-deadline) gives the loop device that depth. mq-deadline then serves
 * the reader's default-class reads ahead of the compactor's idle-class writes.
 */
static int make_device(struct loopdev *dev, int quiet)
{
	int ret = loopdev_create(dev, NULL, DEVICE_BYTES, "mq-deadline", SHALLOW_DEPTH);

	if (ret < 0) {
		fprintf(stderr, "iotier-demo: cannot create a loop device: %s%s\n", strerror(-ret),
			ret == -EPERM || ret == -EACCES ? " (run as root)" : "");
		return -1;
	}
	if (!quiet)
		printf("device: %s, scheduler mq-deadline, nr_requests %d (a loop device takes 128\n"
		       "        requests at once, so without a shallow queue nothing ever waits in\n"
		       "        the scheduler and priority has nothing to reorder)\n",
		       dev->path, SHALLOW_DEPTH);
	return 0;
}

/*
 * The CDF for bench/common/cdf.gp: points spaced evenly on its tail axis (-log10 of the fraction
 * above), so the tail gets as many points as the body: 400 points from the median's side
 * down to the last read. lat_us must be sorted.
 */
static int write_cdf(const char *path)
{
	FILE *f = fopen(path, "w");
	double span;

	if (!f)
		return -errno;
	span = lat_count > 1 ? log10((double)lat_count) : 0;
	for (int j = 0; j <= 400 && lat_count; j++) {
		double frac = 1.0 - pow(10.0, -span * j / 400.0);
		size_t i = (size_t)(frac * (double)(lat_count - 1) + 0.5);

		fprintf(f, "%.1f %.6f\n", lat_us[i], (double)(i + 1) / (double)lat_count);
	}
	if (fclose(f))
		return -errno;
	return 0;
}

struct demo_args {
	int seconds, warmup, fg_only, quiet;
	const char *cdf;
};

/* 0, or the exit status: 2 for bad usage, 1 (after printing the help) for --help. */
static int parse_args(int argc, char **argv, struct demo_args *a)
{
	int opt;
	char *end;

	while ((opt = getopt_long(argc, argv, "t:w:k:c:Fd:qh", options, NULL)) != -1) {
		switch (opt) {
		case 't':
		case 'w': {
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < (opt == 't') || v > 3600) {
				fprintf(stderr, "iotier-demo: bad --%s '%s' (%d..3600)\n",
					opt == 't' ? "seconds" : "warmup", optarg, opt == 't');
				return 2;
			}
			*(opt == 't' ? &a->seconds : &a->warmup) = (int)v;
			break;
		}
		case 'k':
			errno = 0;
			think_us = strtol(optarg, &end, 10);
			if (errno || *end || think_us < 0 || think_us > 1000000) {
				fprintf(stderr, "iotier-demo: bad --think-us '%s' (0..1000000)\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			a->cdf = optarg;
			break;
		case 'F':
			a->fg_only = 1;
			break;
		case 'I':
			bg_idle = 1;
			break;
		case 'd':
			device_path = optarg;
			break;
		case 'q':
			a->quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "iotier-demo: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

/* Sleep for s seconds in 100 ms steps, so that a signal ends it at once. */
static void nap(int s)
{
	for (int i = 0; i < s * 10 && !atomic_load(&stop); i++)
		usleep(100 * 1000);
}

int main(int argc, char **argv)
{
	struct loopdev dev = { .index = -1 };
	struct demo_args a = { .seconds = 10, .warmup = 1 };
	pthread_t fg, bg;
	int status = 1, ret;
	char bg_class[16], bg_mbps[32] = "-";
	double t0, elapsed;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret == 1 ? 0 : ret;

	/* Ctrl-C stops the threads; the loop device goes away with the process either way. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!device_path) {
		if (make_device(&dev, a.quiet) < 0)
			return 1;
		device_path = dev.path;
		if ((ret = prefill(device_path)) < 0) {
			fprintf(stderr, "iotier-demo: cannot fill %s: %s\n", device_path,
				strerror(-ret));
			goto cleanup;
		}
	}

	if (pthread_create(&fg, NULL, foreground, NULL)) {
		perror("iotier-demo: pthread_create");
		goto cleanup;
	}
	if (!a.fg_only && pthread_create(&bg, NULL, compactor, NULL)) {
		perror("iotier-demo: pthread_create");
		atomic_store(&stop, 1);
		pthread_join(fg, NULL);
		goto cleanup;
	}
	/* The warm-up lets the compactor get going and the queue fill before we count. */
	nap(a.warmup);
	atomic_store(&measuring, 1);
	atomic_store(&bg_bytes, 0);
	t0 = now_s();
	nap(a.seconds);
	elapsed = now_s() - t0;
	atomic_store(&stop, 1);
	pthread_join(fg, NULL);
	if (!a.fg_only)
		pthread_join(bg, NULL);

	if (fg_error || bg_error) {
		fprintf(stderr, "iotier-demo: I/O failed on %s: %s\n", device_path,
			strerror(fg_error ? fg_error : bg_error));
		goto cleanup;
	}
	qsort(lat_us, lat_count, sizeof(*lat_us), cmp_float);
	format_class(a.fg_only ? -1 : atomic_load(&bg_ioprio), bg_class, sizeof(bg_class));
	if (!a.fg_only)
		snprintf(bg_mbps, sizeof(bg_mbps), "%.0f", (double)bg_bytes / 1e6 / elapsed);
	if (!a.quiet) {
		printf("foreground: %zu reads in %.1f s, P50 %.0f us, P99 %.0f us\n", lat_count,
		       elapsed, percentile(50), percentile(99));
		if (!a.fg_only)
			printf("compactor:  %s MB/s, I/O class %s\n", bg_mbps, bg_class);
	}
	printf("RESULT fg_reads=%zu fg_p50_us=%.0f fg_p99_us=%.0f bg_mbps=%s bg_class=%s\n",
	       lat_count, percentile(50), percentile(99), bg_mbps, bg_class);
	if (a.cdf && (ret = write_cdf(a.cdf)) < 0) {
		fprintf(stderr, "iotier-demo: cannot write %s: %s\n", a.cdf, strerror(-ret));
		goto cleanup;
	}
	status = 0;
cleanup:
	loopdev_destroy(&dev);
	free(lat_us);
	return status;
}
