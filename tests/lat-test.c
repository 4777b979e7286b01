// SPDX-License-Identifier: MIT
/*
 * Description: integration tests of `iotier lat` on throwaway loop devices. Each mode is one
 * meson test:
 *   exact SCHED [ATTACH [unmounted]]
 *                         N idle, M be:3 and K rt:0 direct reads of known sizes must appear
 *                         exactly, with their bytes, in the right class, level and op, under
 *                         scheduler SCHED (insert differs between mq-deadline and none);
 *                         percentiles are monotone, min <= max, and the in-flight map has
 *                         drained to zero with no drops once the load stops. With
 *                         unmounted, in a mount namespace without tracefs, debugfs or bpffs.
 *   pid [SCHED]           --pid counts only the named process while another process reads
 *                         the same device.
 *   children              --pid --children also counts what the process's child reads.
 *   lost                  --pid --children with every 3rd completion lost: the count comes
 *                         up short and the report, in JSON, text and Prometheus, says how
 *                         many may be missing, at least that many.
 *   cgroup                --cgroup counts only the processes in that cgroup v2 directory.
 *   drops SCHED [pid]     a 2-entry in-flight map under concurrent reads: every request is
 *                         either counted or reported as a drop, exactly once, and all I/O
 *                         completes; with pid, tracking starts at submit (block_io_start).
 *   text                  the text report has a row with the right count for the device
 *                         and priority, and histogram bars with -H.
 *   prom                  the Prometheus output passes `promtool check metrics` and its
 *                         +Inf buckets equal the request counts.
 *   schema SCHEMA         the JSON output validates against the documented JSON Schema.
 *   usage                 bad options exit 2 with one line naming the bad token.
 *   nocap                 without CAP_BPF/CAP_PERFMON, one line naming them and exit 1.
 *   nobtf                 without kernel BTF (hidden in a private mount namespace), one
 *                         line naming it and exit 1.
 *   interval              --interval with --count prints exactly N reports and exits by
 *                         itself; --duration stops by itself; SIGTERM prints the final report.
 *   coverage SCHED [drop] diskstats and the tracer agree to the request on a quiet device,
 *                         in JSON, with no warning; with drop, the tracer is made to lose
 *                         every 4th completion and the report says exactly how many.
 * Exits 0 pass, 1 fail, 77 skip (no root, no BTF, no loop devices; a failure under
 * IOTIER_TEST_STRICT=1).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/ioprio.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "coverage.h"
#include "lat_tracer.h"
#include "loopdev.h"
#include "run_capture.h"
#include "small_file.h"
#include "test_env.h"

#define DEV_BYTES (64u << 20)

static const char *iotier;
static struct loopdev dev;


/* ---- the tracer as a child process (tests/lib/lat_tracer.h), on the test's device ---- */

static int tracer_start(struct lat_tracer *t, const char *const *extra)
{
	return lat_tracer_start(t, iotier, dev.name, extra);
}

static int tracer_stop(struct lat_tracer *t, char **out)
{
	return lat_tracer_stop(t, out);
}

/* ---- the load: exact numbers of direct reads at a given priority ---- */

struct load {
	int ioclass, level;
	unsigned count;
	size_t size;
	off_t offset;       /* first read here; reads are spaced so none can merge */
	int ret;
};

static void *load_thread(void *arg)
{
	struct load *l = arg;
	void *buf = NULL;
	int fd = -1;

	l->ret = -1;
	/* IOPRIO_WHO_PROCESS with 0 is the calling thread only. */
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(l->ioclass, l->level)) < 0) {
		perror("ioprio_set");
		return NULL;
	}
	fd = open(dev.path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || posix_memalign(&buf, 4096, l->size)) {
		perror("open");
		goto out;
	}
	for (unsigned i = 0; i < l->count; i++) {
		off_t off = l->offset + (off_t)i * (off_t)(l->size + 4096);

		if (pread(fd, buf, l->size, off) != (ssize_t)l->size) {
			perror("pread");
			goto out;
		}
	}
	l->ret = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Run the loads one after another: a synchronous read at a time, so nothing merges. */
static int run_loads(struct load *loads, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, load_thread, &loads[i]) || pthread_join(th, NULL))
			return -1;
		if (loads[i].ret)
			return -1;
	}
	return 0;
}

/*
 * Trace @n loads with `iotier lat @extra`: start the tracer, run the loads, give the last
 * completion's handler @settle_ms to finish (no timing is asserted) and stop it. Returns 0
 * with the tracer's output in *@out, or says what failed and returns T_EXIT_FAIL.
 */
static int trace_loads(const char *const *extra, struct load *loads, size_t n,
		       unsigned settle_ms, char **out)
{
	struct lat_tracer t;
	int ret, st;

	if (tracer_start(&t, extra) < 0)
		return test_fail("iotier lat did not start");
	ret = run_loads(loads, n);
	usleep(settle_ms * 1000);
	st = tracer_stop(&t, out);
	if (ret)
		return test_fail("load failed");
	if (st != 0)
		return test_fail("iotier lat exited %d", st);
	return 0;
}

/* ---- checking the JSON ---- */

static json_t *last_report(const char *text)
{
	const char *line = text, *nl;
	json_t *obj = NULL;

	/* One object per line; the final report is the last line. */
	while (*line) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		if (nl > line) {
			json_error_t e;
			json_t *o = json_loadb(line, (size_t)(nl - line), 0, &e);

			if (!o) {
				fprintf(stderr, "bad JSON line: %s\n", e.text);
				json_decref(obj);
				return NULL;
			}
			json_decref(obj);
			obj = o;
		}
		line = *nl ? nl + 1 : nl;
	}
	return obj;
}

static json_t *find_row(json_t *report, const char *op, const char *ioclass, int level)
{
	json_t *rows = json_object_get(report, "rows"), *row;
	size_t i;

	json_array_foreach(rows, i, row) {
		if (strcmp(json_string_value(json_object_get(row, "device")), dev.name) ||
		    strcmp(json_string_value(json_object_get(row, "op")), op) ||
		    strcmp(json_string_value(json_object_get(row, "class")), ioclass) ||
		    json_integer_value(json_object_get(row, "level")) != level)
			continue;
		return row;
	}
	return NULL;
}

static long long geti(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Percentiles monotone, min <= max, and a latency for every request. */
static int check_rows_sane(json_t *report)
{
	json_t *rows = json_object_get(report, "rows"), *row;
	static const char *const order[] = { "min", "p50", "p90", "p99", "p999", "max" };
	size_t i;

	json_array_foreach(rows, i, row) {
		json_t *lat = json_object_get(row, "lat_ns");

		for (size_t k = 1; k < sizeof(order) / sizeof(order[0]); k++)
			if (geti(lat, order[k - 1]) > geti(lat, order[k]))
				return test_fail("row %zu: %s %lld > %s %lld", i, order[k - 1],
						 geti(lat, order[k - 1]), order[k],
						 geti(lat, order[k]));
		if (geti(row, "count") > 0 && geti(lat, "max") <= 0)
			return test_fail("row %zu: no latency measured", i);
		if (geti(row, "lat_count") != geti(row, "count"))
			return test_fail("row %zu: lat_count %lld != count %lld", i,
					 geti(row, "lat_count"), geti(row, "count"));
	}
	return T_EXIT_PASS;
}

static int expect_row(json_t *report, const char *ioclass, int level, const struct load *l)
{
	json_t *row = find_row(report, "read", ioclass, level);

	if (!row)
		return test_fail("no read row for %s:%d (expected %u requests)", ioclass, level,
				 l->count);
	if (geti(row, "count") != (long long)l->count)
		return test_fail("%s:%d read count %lld, expected %u", ioclass, level,
				 geti(row, "count"), l->count);
	if (geti(row, "bytes") != (long long)(l->count * l->size))
		return test_fail("%s:%d read bytes %lld, expected %zu", ioclass, level,
				 geti(row, "bytes"), l->count * l->size);
	return T_EXIT_PASS;
}

static int check_drained(json_t *report)
{
	if (geti(report, "inflight") != 0)
		return test_fail("in-flight map holds %lld requests after the load stopped",
				 geti(report, "inflight"));
	if (geti(report, "drops") != 0 || geti(report, "hist_drops") != 0)
		return test_fail("drops %lld, hist_drops %lld", geti(report, "drops"),
				 geti(report, "hist_drops"));
	return T_EXIT_PASS;
}

/* ---- modes ---- */

/* The requests of @loads not counted in @report's rows of this device and @op. */
static long long short_by(json_t *report, const char *op, const struct load *loads, size_t n)
{
	json_t *row;
	long long want = 0, got = 0;
	size_t i;

	for (i = 0; i < n; i++)
		want += loads[i].count;
	json_array_foreach(json_object_get(report, "rows"), i, row)
		if (!strcmp(json_string_value(json_object_get(row, "device")), dev.name) &&
		    !strcmp(json_string_value(json_object_get(row, "op")), op))
			got += geti(row, "count");
	return want - got;
}

/* exact: one traced run; how many requests short and how many the report says missing. */
static int exact_attempt(void *arg, long long *short_n, long long *missing)
{
	struct load loads[] = {
		{ IOPRIO_CLASS_IDLE, 0, 37, 4096, 0, 0 },
		{ IOPRIO_CLASS_BE, 3, 23, 8192, 16 << 20, 0 },
		{ IOPRIO_CLASS_RT, 0, 11, 16384, 32 << 20, 0 },
	};
	const char *attach = arg;
	const char *extra[] = { "--format", "json", "--attach", attach, NULL };
	char *out = NULL;
	json_t *rep;
	int ret;

	ret = trace_loads(extra, loads, 3, 100, &out);
	if (ret)
		return ret;
	rep = last_report(out);
	if (!rep)
		return test_fail("no JSON report in: %s", out);
	printf("%s", out);
	*short_n = short_by(rep, "read", loads, 3);
	*missing = coverage_missing_json(rep, dev.name);
	if (strcmp(json_string_value(json_object_get(rep, "attach")), attach) && strcmp(attach, "auto"))
		return test_fail("attach is %s, asked %s",
				 json_string_value(json_object_get(rep, "attach")), attach);
	ret = expect_row(rep, "idle", 0, &loads[0]);
	if (!ret)
		ret = expect_row(rep, "be", 3, &loads[1]);
	if (!ret)
		ret = expect_row(rep, "rt", 0, &loads[2]);
	if (!ret)
		ret = check_rows_sane(rep);
	if (!ret)
		ret = check_drained(rep);
	json_decref(rep);
	free(out);
	return ret;
}

/* A child process that waits for a byte on @go, then runs @l (in a child of its own with
 * @via_child) and exits 0 on success. */
static pid_t spawn_loader(struct load *l, int *go, bool via_child)
{
	int p[2], st;
	pid_t pid, gc;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		if (!via_child)
			_exit(run_loads(l, 1) ? 1 : 0);
		gc = fork();
		if (gc == 0)
			_exit(run_loads(l, 1) ? 1 : 0);
		if (gc < 0 || waitpid(gc, &st, 0) < 0 || !WIFEXITED(st))
			_exit(1);
		_exit(WEXITSTATUS(st));
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/*
 * The cgroup mode's iotier-lat-test.<pid> directory, removed on every way out we can catch
 * by a registered cleanup (cleanup.h: return, exit() and the signals that end a process; a
 * meson timeout sends SIGTERM). Only
 * async-signal-safe calls: the cgroup's processes are killed through cgroup.kill (and the
 * loader we moved there by pid), reaped, and the directory removed once it is empty.
 */
static char cg_dir[PATH_MAX];
static volatile pid_t cg_loader = -1, cg_tracer = -1;

static void cgroup_cleanup(void *unused)
{
	char path[PATH_MAX + 16];
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };
	size_t n = strlen(cg_dir);
	int fd;

	(void)unused;
	if (!cg_dir[0])
		return;
	if (cg_tracer > 0) { /* interrupted: the iotier lat we started would outlive us */
		kill(cg_tracer, SIGKILL);
		waitpid(cg_tracer, NULL, 0);
		cg_tracer = -1;
	}
	if (n + sizeof("/cgroup.kill") <= sizeof(path)) {
		memcpy(path, cg_dir, n);
		memcpy(path + n, "/cgroup.kill", sizeof("/cgroup.kill"));
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "1", 1) < 0) {
				/* older kernel: the pid below is the cgroup's only process */
			}
			close(fd);
		}
	}
	if (cg_loader > 0) {
		kill(cg_loader, SIGKILL);
		waitpid(cg_loader, NULL, 0);
		cg_loader = -1;
	}
	/* A killed task leaves the cgroup shortly after it dies: retry for up to 2 s. */
	for (int i = 0; i < 200 && rmdir(cg_dir) < 0 && errno == EBUSY; i++)
		nanosleep(&ms10, NULL);
	cg_dir[0] = '\0';
}

/*
 * Two processes read the same device at the same class and level at the same time; the
 * tracer, filtered by how ("pid", "children" or "cgroup"), must count only the first.
 * diskstats count every process, so the filtered report carries its device's coverage
 * instead: when the kernel skips the completion program for a request (docs/lat.md), the
 * report says how many of its requests may be missing, and an attempt short by no more
 * than that runs again (tests/lib/coverage.h).
 */
struct isolation {
	const char *how;
	const char *format;     /* --format: json, or text and prom for the lost mode */
	char cgdir[PATH_MAX];
};

/* Start both loaders and the filtered tracer, and stop it all; 0 or a verdict. */
static int isolation_trace(struct isolation *iso, const struct load *mine,
			   const struct load *other, char **out)
{
	bool children = !strcmp(iso->how, "children");
	const char *extra[8] = { "--format", iso->format ? iso->format : "json" };
	char pidbuf[16], procs[PATH_MAX + 16];
	int go_mine, go_other, st1 = -1, st2 = -1, st, ret = T_EXIT_FAIL;
	struct lat_tracer t;
	pid_t p1, p2;

	p1 = spawn_loader((struct load *)mine, &go_mine, children);
	p2 = spawn_loader((struct load *)other, &go_other, false);
	if (p1 < 0 || p2 < 0)
		return test_fail("fork");
	snprintf(pidbuf, sizeof(pidbuf), "%d", p1);
	if (iso->cgdir[0]) {
		cg_loader = p1;
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", iso->cgdir);
		if (write_file(procs, pidbuf) < 0) {
			fprintf(stderr, "FAIL: cannot move %s into %s\n", pidbuf, iso->cgdir);
			goto out_kill;
		}
		extra[2] = "--cgroup";
		extra[3] = iso->cgdir;
	} else {
		extra[2] = "--pid";
		extra[3] = pidbuf;
		extra[4] = children ? "--children" : NULL;
	}
	if (tracer_start(&t, extra) < 0) {
		fprintf(stderr, "FAIL: iotier lat did not start\n");
		goto out_kill;
	}
	if (iso->cgdir[0])
		cg_tracer = t.pid;
	if (write(go_other, "g", 1) != 1 || write(go_mine, "g", 1) != 1)
		perror("write");
	waitpid(p1, &st1, 0);
	cg_loader = -1;
	waitpid(p2, &st2, 0);
	close(go_mine);
	close(go_other);
	usleep(100 * 1000);
	st = tracer_stop(&t, out);
	cg_tracer = -1;
	if (!WIFEXITED(st1) || WEXITSTATUS(st1) || !WIFEXITED(st2) || WEXITSTATUS(st2))
		return test_fail("a loader failed");
	if (st != 0)
		return test_fail("iotier lat exited %d", st);
	return T_EXIT_PASS;
out_kill:
	kill(p1, SIGKILL);
	kill(p2, SIGKILL);
	waitpid(p1, NULL, 0);
	waitpid(p2, NULL, 0);
	cg_loader = -1; /* reaped */
	return ret;
}

static int isolation_attempt(void *arg, long long *short_n, long long *missing)
{
	struct isolation *iso = arg;
	struct load mine = { IOPRIO_CLASS_BE, 3, 29, 4096, 0, 0 };
	struct load other = { IOPRIO_CLASS_BE, 3, 41, 4096, 16 << 20, 0 };
	char *out = NULL;
	json_t *rep = NULL, *row;
	int ret;

	ret = isolation_trace(iso, &mine, &other, &out);
	if (ret)
		goto out;
	rep = last_report(out);
	if (!rep) {
		ret = test_fail("no JSON report in: %s", out);
		goto out;
	}
	printf("%s", out);
	*missing = coverage_missing_json(rep, dev.name);
	row = find_row(rep, "read", "be", 3);
	if (!row || geti(row, "count") != mine.count ||
	    json_array_size(json_object_get(rep, "rows")) != 1) {
		*short_n = (long long)mine.count - (row ? geti(row, "count") : 0);
		ret = test_fail("--%s: counted %lld reads in %zu rows, expected %u in 1 "
				"(the other process did %u)", iso->how, row ? geti(row, "count") : 0,
				json_array_size(json_object_get(rep, "rows")), mine.count,
				other.count);
		goto out;
	}
	ret = check_drained(rep);
out:
	json_decref(rep);
	free(out);
	return ret;
}

static int mode_isolation(const char *how)
{
	struct isolation iso = { .how = how };
	int ret;

	if (!strcmp(how, "cgroup")) {
		if (access("/sys/fs/cgroup/unified/cgroup.procs", W_OK) == 0)
			snprintf(iso.cgdir, sizeof(iso.cgdir),
				 "/sys/fs/cgroup/unified/iotier-lat-test.%d", getpid());
		else if (access("/sys/fs/cgroup/cgroup.subtree_control", R_OK) == 0)
			snprintf(iso.cgdir, sizeof(iso.cgdir), "/sys/fs/cgroup/iotier-lat-test.%d",
				 getpid());
		else
			return test_skip("no cgroup v2 hierarchy");
		if (mkdir(iso.cgdir, 0755) < 0)
			return test_skip("cannot create a cgroup v2 directory");
		snprintf(cg_dir, sizeof(cg_dir), "%s", iso.cgdir);
		test_cleanup_add(cgroup_cleanup, NULL);
	}
	ret = coverage_run(isolation_attempt, &iso, how);
	if (iso.cgdir[0])
		cgroup_cleanup(NULL);
	return ret;
}

static void *spin_reads(void *arg)
{
	return load_thread(arg);
}

static int drops_attempt(void *pid_arg, long long *short_n, long long *missing)
{
	bool by_pid = pid_arg != NULL;
	enum { THREADS = 6, EACH = 40 };
	struct load loads[THREADS];
	char self[16];
	const char *extra[] = { "--format", "json", "--inflight-max", "2", by_pid ? "--pid" : NULL,
				self, NULL };
	pthread_t th[THREADS];
	long long counted = 0;
	struct lat_tracer t;
	char *out = NULL;
	json_t *rep, *row;
	size_t i;
	int st, failed = 0;

	snprintf(self, sizeof(self), "%d", getpid());
	if (tracer_start(&t, extra) < 0)
		return test_fail("iotier lat did not start");
	for (int k = 0; k < THREADS; k++) {
		loads[k] = (struct load){ IOPRIO_CLASS_BE, 5, EACH, 4096, (off_t)k * (8 << 20), 0 };
		pthread_create(&th[k], NULL, spin_reads, &loads[k]);
	}
	for (int k = 0; k < THREADS; k++) {
		pthread_join(th[k], NULL);
		failed |= loads[k].ret;
	}
	usleep(100 * 1000);
	st = tracer_stop(&t, &out);
	if (failed)
		return test_fail("reads failed with a full in-flight map: I/O must never stall or fail");
	if (st != 0)
		return test_fail("iotier lat exited %d", st);
	rep = last_report(out);
	if (!rep)
		return test_fail("no JSON report");
	printf("%s", out);
	json_array_foreach(json_object_get(rep, "rows"), i, row)
		if (!strcmp(json_string_value(json_object_get(row, "class")), "be") &&
		    geti(row, "level") == 5)
			counted += geti(row, "count");
	/* Requests the full map kept untracked are missing from diskstats' view too. */
	*short_n = THREADS * EACH - counted - geti(rep, "drops");
	/* Unfiltered, the untracked are missing from the rows' coverage too; with --pid the
	 * device count still sees them complete. */
	*missing = coverage_missing_json(rep, dev.name) - (by_pid ? 0 : geti(rep, "drops"));
	if (counted + geti(rep, "drops") != THREADS * EACH)
		return test_fail("counted %lld + dropped %lld != %d requests issued", counted,
				 geti(rep, "drops"), THREADS * EACH);
	if (geti(rep, "inflight") != 0)
		return test_fail("in-flight map holds %lld requests after the load",
				 geti(rep, "inflight"));
	json_decref(rep);
	free(out);
	return T_EXIT_PASS;
}

/* The text report's read count in the row of @prio on this device, or -1. */
static long long text_count(const char *out, const char *prio)
{
	char head[64];
	unsigned long long n;
	int len = snprintf(head, sizeof(head), "%-10s %-7s %-7s ", dev.name, "read", prio);

	for (const char *p = strstr(out, head); p; p = strstr(p + 1, head))
		if ((p == out || p[-1] == '\n') && sscanf(p + len, "%llu", &n) == 1)
			return (long long)n;
	return -1;
}

static int text_attempt(void *unused, long long *short_n, long long *missing)
{
	struct load loads[] = { { IOPRIO_CLASS_IDLE, 0, 9, 4096, 0, 0 } };
	const char *extra[] = { "-H", NULL };
	char *out = NULL, want[128];
	int st;

	(void)unused;
	st = trace_loads(extra, loads, 1, 100, &out);
	if (st)
		return st;
	printf("%s", out);
	*missing = coverage_missing_text(out, dev.name);
	*short_n = 9 - text_count(out, "idle:0");
	snprintf(want, sizeof(want), "%-10s %-7s %-7s %9u ", dev.name, "read", "idle:0", 9);
	if (!strstr(out, "DEVICE") || !strstr(out, "P99.9") || !strstr(out, want))
		return test_fail("no row '%s' under a header", want);
	if (!strstr(out, "distribution") || !strstr(out, "|*"))
		return test_fail("no histogram bars with -H");
	/* biolatency's labels: "usecs : count" and plain integer ranges, never 4.096 or 1e+04. */
	if (!strstr(out, "usecs : count"))
		return test_fail("the bars do not say their unit");
	for (const char *p = strstr(out, " -> "); p; p = strstr(p + 4, " -> ")) {
		const char *line = p;
		unsigned long long lo, hi;
		char c;

		while (line > out && line[-1] != '\n')
			line--;
		if (sscanf(line, " %llu -> %llu %c", &lo, &hi, &c) != 3 || c != ':' ||
		    hi + 1 != (lo ? 2 * lo : 2))
			return test_fail("bar label is not an integer range: %.40s", line);
	}
	free(out);
	return T_EXIT_PASS;
}

static int mode_text(void)
{
	return coverage_run(text_attempt, NULL, "lat text");
}

/* The "diskstats" entry of this test's device in @report, or NULL. */
static json_t *find_diskstats(json_t *report)
{
	json_t *ds = json_object_get(report, "diskstats"), *d;
	size_t i;

	json_array_foreach(ds, i, d)
		if (!strcmp(json_string_value(json_object_get(d, "device")), dev.name))
			return d;
	return NULL;
}

/* The coverage load: 40 + 24 reads from run_loads, then direct writes from dd. */
#define COVERAGE_READS 64
#define COVERAGE_WRITES 32

/* Reads from run_loads and direct writes from dd, on the quiet test device. */
static int coverage_load(const struct load *loads, size_t n, unsigned writes)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "dd if=/dev/zero of=%s bs=4k count=%u oflag=direct "
		 "status=none", dev.path, writes);
	if (run_loads((struct load *)loads, n) || system(cmd) != 0)
		return -1;
	usleep(100 * 1000);
	return 0;
}

/*
 * The completions the kernel ran no BPF program for on the test device, as a witness `iotier
 * lat` started before the traced run and stopped after it reports them (its diskstats
 * "missing"; filtered with --pid 1, so that it counts the device's completions, tracked or
 * not), or -1 when its report cannot be read.
 */
static long long witness_stop(struct lat_tracer *w)
{
	char *out = NULL;
	json_t *report, *d;
	long long k = -1;

	if (tracer_stop(w, &out) != 0)
		return -1;
	report = last_report(out);
	d = find_diskstats(report);
	if (d)
		k = geti(d, "missing");
	else
		fprintf(stderr, "witness: no diskstats for %s in: %s\n", dev.name, out);
	json_decref(report);
	free(out);
	return k;
}

/*
 * One traced run of the coverage load, with @extra, beside a witness: its output in *@out
 * and the completions the witness saw the kernel skip in *@k. 0, or a verdict.
 */
static int coverage_pass(bool drop, const char *const *extra, char **out, long long *k)
{
	const struct load loads[] = { { IOPRIO_CLASS_BE, 2, 40, 4096, 0, 0 },
				      { IOPRIO_CLASS_IDLE, 0, 24, 8192, 16 << 20, 0 } };
	const char *wextra[] = { "--format", "json", "--pid", "1", NULL };
	struct lat_tracer t, w;
	int ret = 0;

	unsetenv("IOTIER_TEST_DROP_COMPLETIONS"); /* the witness loses nothing on purpose */
	if (tracer_start(&w, wextra) < 0)
		return test_fail("the witness iotier lat did not start");
	if (drop)
		setenv("IOTIER_TEST_DROP_COMPLETIONS", "4", 1);
	if (tracer_start(&t, extra) < 0)
		ret = test_fail("iotier lat did not start");
	else if (coverage_load(loads, 2, COVERAGE_WRITES) || tracer_stop(&t, out) != 0)
		ret = test_fail("iotier lat or the load failed");
	unsetenv("IOTIER_TEST_DROP_COMPLETIONS");
	*k = witness_stop(&w);
	if (!ret && *k < 0)
		ret = test_fail("the witness iotier lat gave no report for %s", dev.name);
	if (!ret && *k > 0)
		fprintf(stderr, "coverage: the kernel ran no tracer for %lld completions "
			"(the witness saw the same)\n", *k);
	return ret;
}

/*
 * coverage [drop]: the tracer's completions against the kernel's diskstats. On the quiet
 * test device both see exactly the reads and writes done: 100%, no warning. With drop, the
 * BPF side forgets every 4th completion it runs for (IOTIER_TEST_DROP_COMPLETIONS): the JSON
 * says how many are missing, to the request, and the text warns in one line. Exactly with
 * what a witness tracer saw the kernel skip (k): on this kernel the programs on
 * block_rq_complete are now and then not run at all for a completion, for every tracer
 * alike (docs/lat.md, "The lost completions seen on this kernel"; 5 of 96 once).
 */
static int mode_coverage(bool drop)
{
	const char *json[] = { "--format", "json", NULL };
	const long long total = COVERAGE_READS + COVERAGE_WRITES;
	char *out = NULL, want[256];
	json_t *report, *d, *r, *w;
	long long k, lost;
	int ret;

	if ((ret = coverage_pass(drop, json, &out, &k)))
		return ret;
	printf("%s", out);
	/* numbered 0, 1, ... among those the program ran for; every 4th (3, 7, ...) forgotten */
	lost = k + (drop ? (total - k) / 4 : 0);
	report = last_report(out);
	d = find_diskstats(report);
	if (!d)
		return test_fail("no diskstats entry for %s", dev.name);
	r = json_object_get(d, "reads");
	w = json_object_get(d, "writes");
	if (geti(r, "completed") != COVERAGE_READS || geti(w, "completed") != COVERAGE_WRITES)
		return test_fail("diskstats counted %lld reads and %lld writes, expected %d and %d",
		     geti(r, "completed"), geti(w, "completed"), COVERAGE_READS, COVERAGE_WRITES);
	if (geti(r, "traced") + geti(w, "traced") != total - lost ||
	    geti(d, "missing") != lost ||
	    geti(r, "missing") + geti(w, "missing") != lost)
		return test_fail("traced %lld + %lld, missing %lld: expected %lld missing (%lld "
				 "skipped by the kernel, as the witness saw)",
		     geti(r, "traced"), geti(w, "traced"), geti(d, "missing"), lost, k);
	if (!lost && json_real_value(json_object_get(d, "coverage")) != 1.0)
		return test_fail("coverage is not 1 on a quiet device");
	json_decref(report);
	free(out);

	if ((ret = coverage_pass(drop, NULL, &out, &k)))
		return ret;
	printf("%s", out);
	lost = k + (drop ? (total - k) / 4 : 0);
	snprintf(want, sizeof(want), "warning: %s: traced %lld of the %lld requests diskstats "
		 "counted as completed", dev.name, total - lost, total);
	if (lost && !strstr(out, want))
		return test_fail("no warning '%s'", want);
	if (!lost && strstr(out, "warning:"))
		return test_fail("a warning on a fully traced device");
	free(out);
	return T_EXIT_PASS;
}

/* Run shell command @cmd with @input on its stdin; its wait status. */
static int pipe_into(const char *cmd, const char *input)
{
	FILE *p = popen(cmd, "w");

	if (!p)
		return -1;
	fputs(input, p);
	return pclose(p);
}

/* The value after @prefix in the Prometheus text @out, or 0. */
static long long prom_value(const char *out, const char *prefix)
{
	const char *p = strstr(out, prefix);

	return p ? strtoll(p + strlen(prefix), NULL, 10) : 0;
}

static int prom_attempt(void *unused, long long *short_n, long long *missing)
{
	struct load loads[] = {
		{ IOPRIO_CLASS_IDLE, 7, 13, 4096, 0, 0 },
		{ IOPRIO_CLASS_BE, 0, 17, 4096, 16 << 20, 0 },
	};
	const char *extra[] = { "--format", "prom", NULL };
	char *out = NULL, want[256];
	int st;

	(void)unused;
	st = trace_loads(extra, loads, 2, 100, &out);
	if (st)
		return st;
	printf("%s", out);
	*missing = coverage_missing_prom(out, dev.name);
	snprintf(want, sizeof(want), "iotier_block_queue_latency_seconds_bucket{device=\"%s\","
		 "op=\"read\",class=\"idle\",level=\"7\",le=\"+Inf\"} ", dev.name);
	*short_n = 13 - prom_value(out, want);
	snprintf(want, sizeof(want), "iotier_block_bytes_total{device=\"%s\",op=\"read\","
		 "class=\"be\",level=\"0\"} ", dev.name);
	*short_n += 17 - prom_value(out, want) / 4096;
	st = pipe_into("promtool check metrics", out);
	if (st != 0)
		return test_fail("promtool check metrics rejected the output (status %d)", st);
	snprintf(want, sizeof(want), "iotier_block_queue_latency_seconds_bucket{device=\"%s\","
		 "op=\"read\",class=\"idle\",level=\"7\",le=\"+Inf\"} 13\n", dev.name);
	if (!strstr(out, want))
		return test_fail("missing: %s", want);
	snprintf(want, sizeof(want), "iotier_block_bytes_total{device=\"%s\",op=\"read\","
		 "class=\"be\",level=\"0\"} %u\n", dev.name, 17 * 4096);
	if (!strstr(out, want))
		return test_fail("missing: %s", want);
	/* Every completion traced: coverage against diskstats is whole. */
	snprintf(want, sizeof(want), "iotier_trace_coverage_ratio{device=\"%s\"} 1\n"
		 "# HELP iotier_trace_missing_requests", dev.name);
	if (!strstr(out, want))
		return test_fail("missing: %s", want);
	snprintf(want, sizeof(want), "iotier_trace_missing_requests{device=\"%s\"} 0\n", dev.name);
	if (!strstr(out, want))
		return test_fail("missing: %s", want);
	free(out);
	return T_EXIT_PASS;
}

static int mode_prom(void)
{
	return coverage_run(prom_attempt, NULL, "lat prom");
}

/* The count of the only read row of a text or Prometheus report of this device, or -1. */
static long long lost_count(const char *format, const char *out)
{
	char head[256];

	if (!strcmp(format, "text"))
		return text_count(out, "be:3");
	snprintf(head, sizeof(head), "iotier_block_requests_total{device=\"%s\",op=\"read\","
		 "class=\"be\",level=\"3\"} ", dev.name);
	return strstr(out, head) ? prom_value(out, head) : -1;
}

/*
 * lost: under --pid --children, with the tracer made to forget every 3rd completion on the
 * device (IOTIER_TEST_DROP_COMPLETIONS), the traced process's count comes up short, and
 * the report says so in every format: in JSON its diskstats entry is marked filtered with
 * may_be_missing at least the shortfall; in text a warning ends "up to N of these may be
 * missing"; in Prometheus iotier_trace_may_be_missing_requests is at least the shortfall.
 * Before filtered reports carried their device's coverage, each said nothing (diskstats
 * null, no warning, no gauge).
 */
static int mode_lost(void)
{
	static const char *const formats[] = { "json", "text", "prom" };
	struct load mine = { IOPRIO_CLASS_BE, 3, 29, 4096, 0, 0 };
	struct load other = { IOPRIO_CLASS_BE, 3, 41, 4096, 16 << 20, 0 };

	setenv("IOTIER_TEST_DROP_COMPLETIONS", "3", 1);
	for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		struct isolation iso = { .how = "children", .format = formats[f] };
		long long got, may;
		char *out = NULL;
		json_t *rep = NULL, *row;
		int ret = isolation_trace(&iso, &mine, &other, &out);

		if (ret)
			return ret;
		printf("---- --pid --children --format %s\n%s", formats[f], out);
		if (!strcmp(formats[f], "json")) {
			json_t *d;

			rep = last_report(out);
			row = rep ? find_row(rep, "read", "be", 3) : NULL;
			got = row ? geti(row, "count") : -1;
			d = rep ? find_diskstats(rep) : NULL;
			may = d ? geti(d, "may_be_missing") : -1;
			if (!d || !json_is_true(json_object_get(d, "filtered")))
				return test_fail("json: no diskstats entry for %s marked filtered",
						 dev.name);
			json_decref(rep);
		} else {
			got = lost_count(formats[f], out);
			may = !strcmp(formats[f], "text") ? coverage_missing_text(out, dev.name) :
			      coverage_missing_prom(out, dev.name);
		}
		free(out);
		if (got < 0 || got >= mine.count)
			return test_fail("%s: counted %lld of %u reads with every 3rd completion lost: "
					 "want fewer", formats[f], got, mine.count);
		if (may < mine.count - got)
			return test_fail("%s: the report says up to %lld may be missing, but %lld are",
					 formats[f], may, mine.count - got);
		fprintf(stderr, "%s: %lld of %u counted, the report says up to %lld missing\n",
			formats[f], got, mine.count, may);
	}
	unsetenv("IOTIER_TEST_DROP_COMPLETIONS");
	return T_EXIT_PASS;
}

static int mode_schema(const char *schema)
{
	struct load loads[] = { { IOPRIO_CLASS_RT, 4, 5, 4096, 0, 0 } };
	const char *extra[] = { "--format", "json", "--interval", "0.2", "--by", "class", NULL };
	const char *extra2[] = { "--format", "json", "--device", NULL };
	char self[16];
	const char *extra3[] = { "--format", "json", "--pid", self, NULL };
	char cmd[PATH_MAX + 256], path[] = "/tmp/iotier-lat-json.XXXXXX";
	char *out = NULL, *out2 = NULL, *out3 = NULL;
	FILE *f;
	int fd, st;

	/* Three runs: per-interval reports merged by class, one device-latency report, and one
	 * filtered by pid (its diskstats are the device's, marked filtered). */
	snprintf(self, sizeof(self), "%d", getpid());
	if ((st = trace_loads(extra, loads, 1, 500, &out)) ||
	    (st = trace_loads(extra2, loads, 1, 100, &out2)) ||
	    (st = trace_loads(extra3, loads, 1, 100, &out3)))
		return st;
	if (!strstr(out3, "\"filtered\":true"))
		return test_fail("the --pid report has no diskstats entry marked filtered");
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return test_fail("mkstemp");
	fputs(out, f);
	fputs(out2, f);
	fputs(out3, f);
	fclose(f);
	printf("%s%s%s", out, out2, out3);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json, sys, jsonschema\n"
		 "schema = json.load(open(sys.argv[1]))\n"
		 "n = 0\n"
		 "for line in open(sys.argv[2]):\n"
		 "    jsonschema.validate(json.loads(line), schema); n += 1\n"
		 "assert n >= 3, n\n"
		 "print(\"validated\", n, \"reports\")' '%s' '%s'", schema, path);
	st = system(cmd);
	unlink(path);
	free(out);
	free(out2);
	free(out3);
	if (st != 0)
		return test_fail("JSON output does not match %s", schema);
	return T_EXIT_PASS;
}

static int expect_usage(const char *const *args, const char *token)
{
	const char *argv[16] = { iotier, "lat" }, *first = args[0];
	char buf[1024] = "";
	int n = 2, status;

	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	status = run_capture(argv, buf, sizeof(buf), NULL);
	if (status != 2)
		return test_fail("'iotier lat %s ...' should exit 2, got %d: %s", first, status,
				 buf);
	if (!strstr(buf, token) || strchr(buf, '\n') != buf + strlen(buf) - 1)
		return test_fail("expected one line naming '%s', got: %s", token, buf);
	return T_EXIT_PASS;
}

static int mode_usage(void)
{
	static const char *const cases[][6] = {
		{ "--op", "read,bogus", NULL, "bogus" },
		{ "--format", "yaml", NULL, "yaml" },
		{ "-d", "/nonexistent-disk", NULL, "/nonexistent-disk" },
		{ "--interval", "-1", NULL, "-1" },
		{ "--count", "3", NULL, "--count" },
		{ "--by", "thread", NULL, "thread" },
		{ "--queue", "--device", NULL, "--device" },
		{ "--frobnicate", NULL, "--frobnicate" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *c = cases[i];
		size_t n = 0;

		while (c[n])
			n++;
		if (expect_usage(c, c[n + 1]))
			return T_EXIT_FAIL;
	}
	return T_EXIT_PASS;
}

/* Run iotier lat with @args to completion; its stdout in @out, its exit status returned. */
static int run_to_end(const char *const *args, char **out, int sig_after_banner)
{
	struct lat_tracer t;

	if (tracer_start(&t, args) < 0)
		return -1;
	if (!sig_after_banner) {
		size_t len = 0, cap = 1 << 16;
		char *buf = malloc(cap);
		int status;
		ssize_t r;

		while (buf && (r = read(t.out, buf + len, cap - len - 1)) > 0) {
			len += (size_t)r;
			if (cap - len < 4096)
				buf = realloc(buf, cap *= 2);
		}
		if (buf)
			buf[len] = '\0';
		close(t.out);
		close(t.err);
		waitpid(t.pid, &status, 0);
		*out = buf;
		return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	}
	/* tracer_stop() sends SIGINT; send SIGTERM first to check that it reports too. */
	kill(t.pid, sig_after_banner);
	return tracer_stop(&t, out);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static int mode_interval(void)
{
	const char *a1[] = { "--format", "json", "--interval", "0.2", "--count", "3", NULL };
	const char *a2[] = { "--format", "json", "--duration", "0.3", NULL };
	const char *a3[] = { "--format", "json", NULL };
	char *out = NULL;
	int st;

	st = run_to_end(a1, &out, 0);
	if (st != 0 || !out || count_lines(out) != 3)
		return test_fail("--interval 0.2 --count 3: exit %d, %d reports, expected 0 and 3",
				 st, out ? count_lines(out) : -1);
	free(out);
	st = run_to_end(a2, &out, 0);
	if (st != 0 || !out || count_lines(out) != 1)
		return test_fail("--duration 0.3: exit %d, %d reports, expected 0 and 1", st,
				 out ? count_lines(out) : -1);
	free(out);
	st = run_to_end(a3, &out, SIGTERM);
	if (st != 0 || !out || count_lines(out) != 1 || !strstr(out, "\"schema\":\"iotier.lat/1\""))
		return test_fail("SIGTERM: exit %d, output '%s', expected 0 and one report", st,
				 out ? out : "");
	free(out);
	return T_EXIT_PASS;
}

/*
 * Run `iotier lat --duration 1` with its output captured into @buf; with @as_nobody the
 * child drops to user nobody first. Returns the exit status, or -1.
 */
static int run_lat_captured(bool as_nobody, char *buf, size_t size)
{
	const char *argv[] = { iotier, "lat", "--duration", "1", NULL };

	return run_capture(argv, buf, size, as_nobody ? run_as_nobody : NULL);
}

static int mode_nobtf(void)
{
	char buf[1024] = "";
	int st;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("/dev/null", "/sys/kernel/btf/vmlinux", NULL, MS_BIND, NULL))
		return test_skip("cannot hide kernel BTF in a private mount namespace");
	st = run_lat_captured(false, buf, sizeof(buf));
	if (st != 1)
		return test_fail("without BTF: exit %d, expected 1: %s", st, buf);
	if (!strstr(buf, "BTF") || count_lines(buf) != 1)
		return test_fail("expected one line naming the missing BTF, got: %s", buf);
	return T_EXIT_PASS;
}

static int mode_nocap(void)
{
	char buf[1024] = "";
	int st = run_lat_captured(true, buf, sizeof(buf));

	if (st != 1)
		return test_fail("without capabilities: exit %d, expected 1: %s", st, buf);
	if (!strstr(buf, "CAP_BPF") || !strstr(buf, "CAP_PERFMON") || count_lines(buf) != 1)
		return test_fail("expected one line naming CAP_BPF and CAP_PERFMON, got: %s", buf);
	return T_EXIT_PASS;
}

/* Enter a private mount namespace with tracefs, debugfs and bpffs gone: the tracer must not
 * need them. Returns 0, or -errno (the caller skips: no mount namespaces here). */
static int unmount_tracing_fs(void)
{
	static const char *const paths[] = { "/sys/kernel/debug/tracing", "/sys/kernel/tracing",
					     "/sys/kernel/debug", "/sys/fs/bpf" };
	char line[1024];
	FILE *m;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (int k = 0; k < 8 && umount2(paths[i], MNT_DETACH) == 0; k++)
			; /* stacked mounts come off one at a time */
	m = fopen("/proc/self/mounts", "r");
	if (!m)
		return -errno;
	while (fgets(line, sizeof(line), m))
		if (strstr(line, " tracefs ") || strstr(line, " debugfs ") || strstr(line, " bpf ")) {
			fprintf(stderr, "still mounted: %s", line);
			fclose(m);
			return -EBUSY;
		}
	fclose(m);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s IOTIER MODE [ARGS]\n", argv[0]);
		return T_EXIT_FAIL;
	}
	iotier = argv[1];
	mode = argv[2];
	if (!strcmp(mode, "usage"))
		return mode_usage();
	if (geteuid() != 0)
		return test_skip("needs root for BPF and loop devices");
	if (!strcmp(mode, "nocap"))
		return mode_nocap();
	if (!strcmp(mode, "nobtf"))
		return mode_nobtf();
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return test_skip("no kernel BTF");
	ret = loopdev_create(&dev, NULL, DEV_BYTES, strcmp(mode, "schema") && argc > 3 ?
			     argv[3] : "mq-deadline", 0);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO || ret == -EACCES)
		return test_skip("cannot create a loop device");
	if (ret < 0)
		return test_fail("loopdev_create: %s", strerror(-ret));
	/* Stray reads from udev probing a new device must not land inside the measurement. */
	loopdev_settle();
	if (!strcmp(mode, "exact") && argc > 5 && !strcmp(argv[5], "unmounted") &&
	    (ret = unmount_tracing_fs()) < 0) {
		loopdev_destroy(&dev);
		if (ret == -EBUSY)
			return T_EXIT_FAIL;
		return test_skip("cannot unmount tracefs/bpffs in a private mount namespace");
	}
	if (!strcmp(mode, "exact"))
		ret = coverage_run(exact_attempt, (void *)(argc > 4 ? argv[4] : "auto"), "lat exact");
	else if (!strcmp(mode, "pid") || !strcmp(mode, "children") || !strcmp(mode, "cgroup"))
		ret = mode_isolation(mode);
	else if (!strcmp(mode, "drops"))
		ret = coverage_run(drops_attempt, argc > 4 && !strcmp(argv[4], "pid") ? argv[4] : NULL,
				   "lat drops");
	else if (!strcmp(mode, "lost"))
		ret = mode_lost();
	else if (!strcmp(mode, "prom"))
		ret = mode_prom();
	else if (!strcmp(mode, "text"))
		ret = mode_text();
	else if (!strcmp(mode, "interval"))
		ret = mode_interval();
	else if (!strcmp(mode, "coverage"))
		ret = mode_coverage(argc > 4 && !strcmp(argv[4], "drop"));
	else if (!strcmp(mode, "schema") && argc > 3)
		ret = mode_schema(argv[3]);
	else {
		fprintf(stderr, "unknown mode %s\n", mode);
		ret = T_EXIT_FAIL;
	}
	loopdev_destroy(&dev);
	return ret;
}
