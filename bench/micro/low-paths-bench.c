// SPDX-License-Identifier: MIT
/*
 * low-paths-bench.c: what writeback steering buys a foreground reader. One process runs a
 * foreground 4 KiB O_DIRECT random reader ("fg-reader") and a buffered writer ("bg-writer",
 * 1 MiB writes, fsync only at the end) on ext4 on a shallow-queue loop device (nr_requests
 * 4, mq-deadline), with vm.dirty_background_bytes and vm.dirty_bytes lowered for the run and
 * restored after. Three variants run interleaved, round by round, so the machine's noise
 * hits them alike:
 *   untagged   the shim is loaded, no thread is low
 *   low        the writer is low (idle), steering off: IOTIER_WRITEBACK=0
 *   low+steer  the writer is low, steering on (default 1 MiB)
 * For each: foreground P50/P99 read latency, the writer's throughput, and the bytes written
 * to the device at a class other than idle (what the iolat tracer saw at request creation).
 * Prints a Markdown table of medians over the rounds. Not a test: numbers go to
 * docs/bench/low-paths.md.
 *
 * usage: low-paths-bench SHIM [ROUNDS] [SECONDS]         (as root)
 *        low-paths-bench --worker DIR SECONDS             (internal: the measured process)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "class_trace.h"
#include "iolat.h"
#include "bench_common.h"
#include "scratch_fs.h"
#include "sysctl_guard.h"

#define READ_FILE_MIB 256
#define WRITE_SPAN_MIB 512

/* ---- the measured process ------------------------------------------------------------ */

static _Atomic bool stop;

struct reader {
	const char *path;
	double *lat;
	size_t n, cap;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned seed = 12345;
	void *buf;
	int fd;

	prctl(PR_SET_NAME, "fg-reader", 0, 0, 0);
	fd = open(r->path, O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror("reader");
		return NULL;
	}
	while (!stop && r->n < r->cap) {
		off_t off = (off_t)(rand_r(&seed) % (READ_FILE_MIB * 256)) * 4096;
		double t0 = bench_now();

		if (pread(fd, buf, 4096, off) != 4096) {
			perror("pread");
			break;
		}
		r->lat[r->n++] = bench_now() - t0;
	}
	close(fd);
	free(buf);
	return NULL;
}

struct writer {
	const char *path;
	double bytes, seconds;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char *buf = malloc(1 << 20);
	double start;
	int fd;

	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	memset(buf, 0x77, 1 << 20);
	fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror("writer");
		return NULL;
	}
	start = bench_now();
	for (unsigned i = 0; !stop; i++) {
		if (pwrite(fd, buf, 1 << 20, (off_t)(i % WRITE_SPAN_MIB) << 20) != 1 << 20) {
			perror("pwrite");
			break;
		}
		w->bytes += 1 << 20;
	}
	fsync(fd);
	w->seconds = bench_now() - start;
	close(fd);
	free(buf);
	return NULL;
}

static int worker(const char *dir, double seconds)
{
	char rpath[256], wpath[256];
	struct reader r = { rpath, NULL, 0, 4u << 20 };
	struct writer w = { wpath, 0, 0 };
	pthread_t rt, wt;

	snprintf(rpath, sizeof(rpath), "%s/read.dat", dir);
	snprintf(wpath, sizeof(wpath), "%s/write.dat", dir);
	r.lat = malloc(r.cap * sizeof(double));
	pthread_create(&rt, NULL, reader_main, &r);
	pthread_create(&wt, NULL, writer_main, &w);
	usleep((useconds_t)(seconds * 1e6));
	stop = true;
	pthread_join(rt, NULL);
	pthread_join(wt, NULL);
	if (!r.n || w.seconds <= 0)
		return 1;
	bench_sort(r.lat, r.n);
	printf("%f %f %f %zu\n", r.lat[r.n / 2] * 1e3, r.lat[(size_t)(r.n * 0.99)] * 1e3,
	       w.bytes / w.seconds / 1048576, r.n);
	return 0;
}

/* ---- the driver -------------------------------------------------------------------- */

static struct scratch_fs fs;

static int sh(const char *cmd)
{
	int status = system(cmd);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct result {
	double p50, p99, mibs, leaked_mib;
};

static const struct {
	const char *name, *low, *writeback;
} variants[3] = {
	{ "untagged", "", "0" },
	{ "low", "bg-*", "0" },
	{ "low+steer", "bg-*", "1M" },
};

static int run_variant(const char *self, const char *shim, int v, double seconds,
		       struct class_trace *trace, struct result *res)
{
	char cmd[1024], secs[32];
	struct class_bytes c;
	int pipefd[2], status;
	FILE *out;
	pid_t child;

	snprintf(secs, sizeof(secs), "%g", seconds);
	bench_syncfs(fs.mnt);
	class_trace_read(trace, &c);
	if (pipe(pipefd) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		setenv("LD_PRELOAD", shim, 1);
		setenv("IOTIER_LOW", variants[v].low, 1);
		setenv("IOTIER_WRITEBACK", variants[v].writeback, 1);
		execl(self, self, "--worker", fs.mnt, secs, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	out = fdopen(pipefd[0], "r");
	if (!out || fscanf(out, "%lf %lf %lf", &res->p50, &res->p99, &res->mibs) != 3)
		res->mibs = -1;
	if (out)
		fclose(out);
	waitpid(child, &status, 0);
	class_trace_read(trace, &c);
	res->leaked_mib = (double)class_bytes_not_idle(&c) / 1048576;
	snprintf(cmd, sizeof(cmd), "%s/write.dat", fs.mnt);
	unlink(cmd);
	bench_syncfs(fs.mnt);
	return res->mibs < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ? -1 : 0;
}

int main(int argc, char **argv)
{
	/* No journal, no lazy init: no kernel thread writes to the device on its own. */
	static const char *const ext4_args[] = { "-O", "^has_journal", "-E",
						 "lazy_itable_init=0,lazy_journal_init=0", NULL };
	struct class_trace trace = { 0 };
	struct result res[16][3];
	char err[256], cmd[512];
	int rounds;
	double seconds;

	if (argc == 4 && !strcmp(argv[1], "--worker"))
		return worker(argv[2], atof(argv[3]));
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: low-paths-bench SHIM [ROUNDS] [SECONDS]\n");
		return 2;
	}
	rounds = argc > 2 ? atoi(argv[2]) : 3;
	seconds = argc > 3 ? atof(argv[3]) : 10;
	if (rounds < 1 || rounds > 16 || seconds <= 0) {
		fprintf(stderr, "low-paths-bench: ROUNDS 1..16, SECONDS > 0\n");
		return 2;
	}
	/* A shallow queue, so a queue forms in mq-deadline and classes have something to order. */
	if (scratch_fs_create(&fs, &(const struct scratch_fs_opts){
			.bytes = 2ull << 30, .scheduler = "mq-deadline", .nr_requests = 4,
			.type = "ext4", .mkfs_args = ext4_args, .mnt = "/tmp/iotier-lowpaths.XXXXXX" }))
		return 1;
	snprintf(cmd, sizeof(cmd), "dd if=/dev/urandom of=%s/read.dat bs=1M count=%d "
		 "conv=fsync status=none", fs.mnt, READ_FILE_MIB);
	if (sh(cmd))
		return 1;
	/* Lowered for the run, put back on every exit (sysctl_guard.h). */
	if (sysctl_save("vm/dirty_background_ratio") || sysctl_save("vm/dirty_ratio") ||
	    sysctl_set("vm/dirty_background_bytes", "8388608") ||
	    sysctl_set("vm/dirty_bytes", "33554432")) {
		fprintf(stderr, "cannot lower the dirty limits\n");
		return 1;
	}
	if (class_trace_open(&trace, fs.dev.major, fs.dev.minor, 1u << IOLAT_OP_WRITE, 0, err,
			     sizeof(err)) < 0) {
		fprintf(stderr, "tracer: %s\n", err);
		return 1;
	}
	for (int r = 0; r < rounds; r++)
		for (int v = 0; v < 3; v++) {
			if (run_variant(argv[0], argv[1], v, seconds, &trace, &res[r][v]) < 0) {
				fprintf(stderr, "variant %s failed\n", variants[v].name);
				return 1;
			}
			fprintf(stderr, "round %d %-9s p50 %.2f ms p99 %.2f ms writer %.1f MiB/s "
				"not idle %.1f MiB\n", r + 1, variants[v].name, res[r][v].p50,
				res[r][v].p99, res[r][v].mibs, res[r][v].leaked_mib);
		}
	class_trace_close(&trace);

	printf("| variant | fg read P50 (ms) | fg read P99 (ms) | writer MiB/s | "
	       "written not at idle (MiB) |\n|---|---:|---:|---:|---:|\n");
	for (int v = 0; v < 3; v++) {
		double col[4][16];

		for (int r = 0; r < rounds; r++) {
			col[0][r] = res[r][v].p50;
			col[1][r] = res[r][v].p99;
			col[2][r] = res[r][v].mibs;
			col[3][r] = res[r][v].leaked_mib;
		}
		printf("| %s | %.2f | %.2f | %.1f | %.1f |\n", variants[v].name,
		       bench_median(col[0], (size_t)rounds), bench_median(col[1], (size_t)rounds),
		       bench_median(col[2], (size_t)rounds), bench_median(col[3], (size_t)rounds));
	}
	return 0;
}
