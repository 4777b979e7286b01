// SPDX-License-Identifier: MIT
/*
 * wal-stalls.c: what a low bulk writer costs a WAL, and what the dirty budget buys back.
 * One process runs a WAL writer ("wal": 4 KiB appends with fdatasync every 8, like a
 * database log) and, but in the first variant, a bulk buffered writer ("bulk-writer": 1 MiB
 * writes over a 512 MiB span) in DIR, a file system on the disk under test (bench/wal/wal-stalls.sh
 * builds it with bench/common/rig.sh: the reference disk, a loop device or a given disk, each with
 * driver depth 4 and mq-deadline), with vm.dirty_background_bytes and vm.dirty_bytes lowered
 * to 16 and 64 MiB for the run (restored after) so the throttle threshold is reached in
 * seconds. The variants run interleaved, round by round, so the machine's noise hits them
 * alike; every one under the shim:
 *   alone          the WAL writer only
 *   untagged       both, no thread low
 *   low            bulk-writer low (idle), steering on (the default, 1 MiB)
 *   low+budget     the same with IOTIER_DIRTY_BUDGET=16M
 * For each: append P50/P99/P99.9, fdatasync P99, the bulk writer's throughput, and the
 * stalls breakdown from bpf/stalls (tools/trace/stalls_session): the WAL's dirty_throttle,
 * writeback_wait and fsync time, the bulk writer's own throttle and wait time, and the
 * bytes it dirtied. Prints a Markdown table of medians over the rounds and whether the goal
 * (WAL append P99 <= 2x alone, bulk >= 50% of untagged) is met. Not a test.
 *
 * usage: wal-stalls SHIM DIR [ROUNDS] [SECONDS]     (as root)
 *        wal-stalls --worker DIR SECONDS BULK       (internal: the measured process)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "sysctl_guard.h"
#include "trace/stalls/stalls_session.h"

#define APPENDS_PER_SYNC 8
#define BULK_SPAN_MIB 512
#define MAX_ROUNDS 16
#define N_VARIANTS 4

/* ---- the measured process ------------------------------------------------------------ */

static _Atomic bool stop;

struct wal {
	const char *path;
	double *append, *sync; /* seconds each */
	size_t n_append, n_sync, cap;
};

static void *wal_main(void *arg)
{
	struct wal *w = arg;
	char buf[4096];
	int fd;

	prctl(PR_SET_NAME, "wal", 0, 0, 0);
	memset(buf, 0x57, sizeof(buf));
	fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0) {
		perror("wal");
		return NULL;
	}
	while (!stop && w->n_append < w->cap) {
		double t0 = bench_now();

		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("wal write");
			break;
		}
		w->append[w->n_append++] = bench_now() - t0;
		if (w->n_append % APPENDS_PER_SYNC)
			continue;
		t0 = bench_now();
		if (fdatasync(fd) < 0) {
			perror("fdatasync");
			break;
		}
		w->sync[w->n_sync++] = bench_now() - t0;
	}
	close(fd);
	return NULL;
}

struct bulk {
	const char *path;
	double bytes, seconds;
};

static void *bulk_main(void *arg)
{
	struct bulk *b = arg;
	char *buf = malloc(1 << 20);
	double start;
	int fd;

	prctl(PR_SET_NAME, "bulk-writer", 0, 0, 0);
	fd = open(b->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf) {
		perror("bulk");
		return NULL;
	}
	memset(buf, 0x42, 1 << 20);
	start = bench_now();
	for (unsigned i = 0; !stop; i++) {
		if (pwrite(fd, buf, 1 << 20, (off_t)(i % BULK_SPAN_MIB) << 20) != 1 << 20) {
			perror("bulk pwrite");
			break;
		}
		b->bytes += 1 << 20;
	}
	/* Throughput is what the writer got through write(); its last dirt is not waited for. */
	b->seconds = bench_now() - start;
	close(fd);
	free(buf);
	return NULL;
}

static double pct(double *v, size_t n, double p)
{
	size_t i = (size_t)((double)n * p / 100.0);

	return n ? v[i < n ? i : n - 1] : 0;
}

/* Waits for a byte on stdin (the tracer follows it first), runs, prints one line. */
static int worker(const char *dir, double seconds, bool with_bulk)
{
	char wpath[256], bpath[256], go;
	struct wal w = { wpath, NULL, NULL, 0, 0, 8u << 20 };
	struct bulk b = { bpath, 0, 0 };
	pthread_t wt, bt;

	snprintf(wpath, sizeof(wpath), "%s/wal.log", dir);
	snprintf(bpath, sizeof(bpath), "%s/bulk.dat", dir);
	w.append = malloc(w.cap * sizeof(double));
	w.sync = malloc(w.cap / APPENDS_PER_SYNC * sizeof(double));
	if (!w.append || !w.sync || read(0, &go, 1) != 1)
		return 1;
	pthread_create(&wt, NULL, wal_main, &w);
	if (with_bulk)
		pthread_create(&bt, NULL, bulk_main, &b);
	usleep((useconds_t)(seconds * 1e6));
	stop = true;
	pthread_join(wt, NULL);
	if (with_bulk)
		pthread_join(bt, NULL);
	if (!w.n_append || !w.n_sync)
		return 1;
	bench_sort(w.append, w.n_append);
	bench_sort(w.sync, w.n_sync);
	printf("%f %f %f %f %f %zu\n", pct(w.append, w.n_append, 50) * 1e6,
	       pct(w.append, w.n_append, 99) * 1e6, pct(w.append, w.n_append, 99.9) * 1e6,
	       pct(w.sync, w.n_sync, 99) * 1e3,
	       b.seconds > 0 ? b.bytes / b.seconds / 1048576 : 0, w.n_append);
	return 0;
}

/* ---- the driver -------------------------------------------------------------------- */

static const struct {
	const char *name, *low, *budget;
	bool bulk;
} variants[N_VARIANTS] = {
	{ "alone", "", "0", false },
	{ "untagged", "", "0", true },
	{ "low", "bulk-*", "0", true },
	{ "low+budget", "bulk-*", "16M", true },
};

/* One run's figures: the worker's, then the tracer's (ms; MiB). */
struct result {
	double p50_us, p99_us, p999_us, sync_p99_ms, bulk_mibs;
	double wal_throttle_ms, wal_wbwait_ms, wal_fsync_ms, bulk_throttle_ms, bulk_wait_ms;
	double bulk_dirtied_mib;
};

static const char *scratch_dir; /* the file system on the disk under test */

/* Sum the tracer's rows into @res by thread name: "wal" or "bulk-writer". */
static void add_stalls(const struct stalls_snapshot *snap, struct result *res)
{
	for (size_t i = 0; i < snap->n_rows; i++) {
		const struct stalls_row *r = &snap->rows[i];
		double ms = (double)r->lat.sum_ns / 1e6;

		if (!strcmp(r->thread, "wal")) {
			if (r->cause == STALL_DIRTY_THROTTLE)
				res->wal_throttle_ms += ms;
			else if (r->cause == STALL_WRITEBACK_WAIT)
				res->wal_wbwait_ms += ms;
			else
				res->wal_fsync_ms += ms;
		} else if (!strcmp(r->thread, "bulk-writer")) {
			if (r->cause == STALL_DIRTY_THROTTLE)
				res->bulk_throttle_ms += ms;
			else
				res->bulk_wait_ms += ms;
		}
	}
	for (size_t i = 0; i < snap->n_dirtiers; i++)
		if (!strcmp(snap->dirtiers[i].thread, "bulk-writer"))
			res->bulk_dirtied_mib += (double)snap->dirtiers[i].bytes / 1048576;
}

static int run_variant(const char *self, const char *shim, int v, double seconds,
		       struct stalls_session *s, struct result *res)
{
	struct stalls_snapshot snap = { 0 };
	int out[2], in[2], status, n;
	char secs[32], path[300];
	FILE *f;
	pid_t child;

	memset(res, 0, sizeof(*res));
	snprintf(secs, sizeof(secs), "%g", seconds);
	bench_syncfs(scratch_dir);
	if (pipe(out) < 0 || pipe(in) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		/* Not left writing to the disk when the driver is interrupted: it goes too. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		dup2(out[1], 1);
		dup2(in[0], 0);
		close(out[0]);
		close(in[1]);
		setenv("LD_PRELOAD", shim, 1);
		setenv("IOTIER_LOW", variants[v].low, 1);
		setenv("IOTIER_DIRTY_BUDGET", variants[v].budget, 1);
		execl(self, self, "--worker", scratch_dir, secs, variants[v].bulk ? "1" : "0",
		      (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	/* Follow the worker, then drop what was counted before it started, then let it go. */
	if (stalls_session_follow(s, child, false) < 0 || stalls_session_read(s, &snap) < 0 ||
	    write(in[1], "g", 1) != 1)
		return -1;
	close(in[1]);
	f = fdopen(out[0], "r");
	n = f ? fscanf(f, "%lf %lf %lf %lf %lf", &res->p50_us, &res->p99_us, &res->p999_us,
		       &res->sync_p99_ms, &res->bulk_mibs) : 0;
	if (f)
		fclose(f);
	waitpid(child, &status, 0);
	if (stalls_session_read(s, &snap) == 0)
		add_stalls(&snap, res);
	stalls_snapshot_free(&snap);
	snprintf(path, sizeof(path), "%s/bulk.dat", scratch_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/wal.log", scratch_dir);
	unlink(path);
	bench_syncfs(scratch_dir);
	return n != 5 || !WIFEXITED(status) || WEXITSTATUS(status) ? -1 : 0;
}

/* The median over the rounds of the field at byte @off of struct result. */
static double median_of(struct result res[][N_VARIANTS], int rounds, int v, size_t off)
{
	double col[MAX_ROUNDS];

	for (int r = 0; r < rounds; r++)
		col[r] = *(const double *)((const char *)&res[r][v] + off);
	return bench_median(col, (size_t)rounds);
}

#define MED(field) median_of(res, rounds, v, offsetof(struct result, field))

static void print_table(struct result res[][N_VARIANTS], int rounds)
{
	double alone_p99 = 0, untagged_mibs = 0;

	printf("| variant | append P50 (µs) | P99 (µs) | P99.9 (µs) | fdatasync P99 (ms) | "
	       "bulk MiB/s | WAL throttled (ms) | WAL writeback wait (ms) | WAL fsync (ms) | "
	       "bulk throttled (ms) | bulk waits (ms) | bulk dirtied (MiB) |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < N_VARIANTS; v++) {
		printf("| %s | %.0f | %.0f | %.0f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | "
		       "%.1f | %.0f |\n", variants[v].name, MED(p50_us), MED(p99_us),
		       MED(p999_us), MED(sync_p99_ms), MED(bulk_mibs), MED(wal_throttle_ms),
		       MED(wal_wbwait_ms), MED(wal_fsync_ms), MED(bulk_throttle_ms),
		       MED(bulk_wait_ms), MED(bulk_dirtied_mib));
		if (v == 0)
			alone_p99 = MED(p99_us);
		if (v == 1)
			untagged_mibs = MED(bulk_mibs);
	}
	printf("\n");
	for (int v = 2; v < N_VARIANTS; v++) {
		double p99 = MED(p99_us), mibs = MED(bulk_mibs);
		bool met = p99 <= 2 * alone_p99 && mibs >= 0.5 * untagged_mibs;

		printf("goal for %s (append P99 <= 2x alone, bulk >= 50%% of untagged): %s "
		       "(P99 %.1fx alone, bulk %.0f%% of untagged)\n", variants[v].name,
		       met ? "met" : "missed", alone_p99 > 0 ? p99 / alone_p99 : 0,
		       untagged_mibs > 0 ? 100 * mibs / untagged_mibs : 0);
	}
}

static int setup(struct stalls_session **s)
{
	struct stalls_options o = { .filter_pids = true, .n_devs = 1 };
	struct stat st;
	uint32_t dev;
	char err[512];

	if (stat(scratch_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "wal-stalls: %s is not a directory\n", scratch_dir);
		return -1;
	}
	/* Lowered for the run, put back on every exit (sysctl_guard.h). */
	if (sysctl_save("vm/dirty_background_ratio") || sysctl_save("vm/dirty_ratio") ||
	    sysctl_set("vm/dirty_background_bytes", "16777216") ||
	    sysctl_set("vm/dirty_bytes", "67108864")) {
		fprintf(stderr, "cannot lower the dirty limits\n");
		return -1;
	}
	/* the tracer's device: the kernel's dev_t of the disk the file system is on */
	dev = major(st.st_dev) << 20 | minor(st.st_dev);
	o.devs = &dev;
	if (stalls_session_open(s, &o, err, sizeof(err)) < 0 ||
	    stalls_session_attach(*s, err, sizeof(err)) < 0) {
		fprintf(stderr, "tracer: %s\n", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct result res[MAX_ROUNDS][N_VARIANTS];
	struct stalls_session *s = NULL;
	int rounds;
	double seconds;

	if (argc == 5 && !strcmp(argv[1], "--worker"))
		return worker(argv[2], atof(argv[3]), argv[4][0] == '1');
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: wal-stalls SHIM DIR [ROUNDS] [SECONDS]\n");
		return 2;
	}
	scratch_dir = argv[2];
	rounds = argc > 3 ? atoi(argv[3]) : 3;
	seconds = argc > 4 ? atof(argv[4]) : 10;
	if (rounds < 1 || rounds > MAX_ROUNDS || seconds <= 0) {
		fprintf(stderr, "wal-stalls: ROUNDS 1..%d, SECONDS > 0\n", MAX_ROUNDS);
		return 2;
	}
	if (setup(&s) < 0)
		return 1;
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < N_VARIANTS; i++) {
			int v = (i + r) % N_VARIANTS; /* a different order each round */
			struct result *x = &res[r][v];

			if (run_variant(argv[0], argv[1], v, seconds, s, x) < 0) {
				fprintf(stderr, "variant %s failed\n", variants[v].name);
				stalls_session_close(s);
				return 1;
			}
			fprintf(stderr, "round %d %-10s append P99 %.0f us, fdatasync P99 %.2f ms, "
				"bulk %.1f MiB/s, WAL throttled %.1f ms\n", r + 1, variants[v].name,
				x->p99_us, x->sync_p99_ms, x->bulk_mibs, x->wal_throttle_ms);
		}
	stalls_session_close(s);
	print_table(res, rounds);
	return 0;
}
