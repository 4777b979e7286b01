// SPDX-License-Identifier: MIT
/*
 * Description: the cgroup v2 checks that run inside the throwaway VM (tests/vm/test-vm.sh),
 * on a real Debian kernel booted with cgroup_no_v1=all and bfq on two virtio disks. Static,
 * so it runs before anything else is set up; the programs it starts (cgroup-probe under
 * libiotier.so, `iotier run`) use the host's loader and libc copied into the initramfs.
 *   checks: io is enabled and a low process gets io.weight and io.bfq.weight, and its
 *           cgroup is removed when it ends (ten times over, by exit() and _exit()); v2 does not
 *           split a mixed process; `iotier run --cgroup-weight` places and cleans up;
 *           buffered writes of a low process appear in its io.stat after a sync run from
 *           the root cgroup; two direct readers at weights 100 and 1000 under bfq get
 *           throughput in that order.
 *   only NAME...: those checks alone (the kernel matrix leaves out bfq_weight_order, a
 *           throughput order that a loaded machine under TCG cannot promise).
 *   bench:  foreground 4 KiB direct-read latency (P50/P99) while a buffered writer runs
 *           in place against the same writer in a weight-10 iotier cgroup.
 * Prints "VMCHECK ok|FAIL NAME ..." and "VMCHECK DONE N failed", or "VMBENCH ..." lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroup_tier.h"
#include "core/config.h"
#include "small_file.h"
#include "test_env.h"

#define BIN "/iotier/bin/"
#define SHIM "/iotier/lib/libiotier.so"
#define CG "/sys/fs/cgroup"
#define MIB (1024L * 1024)

static int failed;

/* The first line of @text is @want (read_small drops only the last newline). */
static bool first_line_is(const char *text, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(text, want, n) && (text[n] == '\0' || text[n] == '\n');
}

/* The unified cgroup of @pid/@tid ("0::/x" → "/x"). */
static int cgroup_of(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64], text[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	if (read_small(path, text, sizeof(text)) < 0 || !(p = strstr(text, "0::")))
		return -1;
	p += 3;
	p[strcspn(p, "\n")] = '\0';
	snprintf(out, len, "%s", p);
	return 0;
}

/* Thread @tid of @pid is in cgroup @want; else say where it is. */
static bool in_cgroup(pid_t pid, pid_t tid, const char *want, const char *who)
{
	char cg[256] = "";

	return EXPECT(cgroup_of(pid, tid, cg, sizeof(cg)) == 0 && !strcmp(cg, want),
		      "%s: in %s, want %s", who, cg, want);
}

/* @file of cgroup @cg starts with the line @want ("default 10"). */
static bool weight_is(const char *cg, const char *file, const char *want)
{
	char path[256], text[256];

	snprintf(path, sizeof(path), CG "%s/%s", cg, file);
	return EXPECT(read_small(path, text, sizeof(text)) == 0 && first_line_is(text, want),
		      "%s '%s', want '%s'", path, text, want);
}

static bool exists(const char *path)
{
	struct stat s;

	return stat(path, &s) == 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- cgroup-probe under the shim ---- */

struct probe {
	pid_t pid, bg, fg;
	int in_w;
};

static int probe_start(struct probe *p, char *const env[], char *const argv[])
{
	int in[2], out[2];
	char line[128];
	ssize_t n;

	memset(p, 0, sizeof(*p));
	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	p->pid = fork();
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_w = in[1];
	n = read(out[0], line, sizeof(line) - 1);
	close(out[0]);
	line[n > 0 ? n : 0] = '\0';
	return sscanf(line, "ready %*d %d %d", &p->bg, &p->fg) == 2 ? 0 : -1;
}

static int probe_finish(struct probe *p)
{
	int status;

	close(p->in_w);
	waitpid(p->pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *const base_env[] = { "LD_PRELOAD=" SHIM, "IOTIER_LOW=comm:cgroup-probe",
				  "IOTIER_LOW_WEIGHT=10", "PATH=/bin", NULL };

/* The probe ended well and its low cgroup @cg went with it. */
static bool probe_ends_clean(struct probe *p, const char *cg)
{
	char path[256];

	snprintf(path, sizeof(path), CG "%s", cg);
	return EXPECT(probe_finish(p) == 0, "probe failed") &&
	       EXPECT(!exists(path), "%s left behind", path);
}

static int check_weights(void)
{
	char *argv[] = { BIN "cgroup-probe", "exit", NULL };
	char want[64], text[256];
	struct probe p;

	if (!EXPECT(probe_start(&p, base_env, argv) == 0, "probe did not start"))
		return 1;
	snprintf(want, sizeof(want), "/iotier-low.%d", (int)p.pid);
	if (!in_cgroup(p.pid, p.pid, want, "main"))
		return 1;
	if (!in_cgroup(p.pid, p.bg, want, "bg"))
		return 1;
	if (!EXPECT(read_small(CG "/cgroup.subtree_control", text, sizeof(text)) == 0 &&
		    strstr(text, "io") && strstr(text, "memory"), "subtree_control '%s'", text))
		return 1;
	if (!weight_is(want, "io.weight", "default 10"))
		return 1;
	if (!weight_is(want, "io.bfq.weight", "default 10"))
		return 1;
	return probe_ends_clean(&p, want) ? 0 : 1;
}

/*
 * The low cgroup is gone once the process is, every time: its threads have just ended when
 * it exits, and a thread joined a moment ago may still hold the cgroup (the shim retries).
 * Repeated, since that race shows only now and then.
 */
static int check_exit_cleanup(void)
{
	char *argv[] = { BIN "cgroup-probe", "exit", NULL };
	char path[256];
	int left = 0;

	for (int round = 0; round < 10; round++) {
		struct probe p;

		argv[1] = round % 2 ? "_exit" : "exit";
		if (!EXPECT(probe_start(&p, base_env, argv) == 0, "probe did not start"))
			return 1;
		if (!EXPECT(probe_finish(&p) == 0, "probe failed"))
			return 1;
		snprintf(path, sizeof(path), CG "/iotier-low.%d", (int)p.pid);
		left += exists(path);
	}
	if (!EXPECT(left == 0, "%d of 10 low cgroups left behind", left))
		return 1;
	return 0;
}

/* v2's io controller is a domain controller: a low thread of a mixed process stays put. */
static int check_no_thread_split(void)
{
	char *env[] = { "LD_PRELOAD=" SHIM, "IOTIER_LOW=bg-*", "PATH=/bin", NULL };
	char *argv[] = { BIN "cgroup-probe", "exit", NULL };
	struct probe p;
	long prio;

	if (!EXPECT(probe_start(&p, env, argv) == 0, "probe did not start"))
		return 1;
	if (!in_cgroup(p.pid, p.bg, "/", "bg"))
		return 1;
	prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, p.bg);
	if (!EXPECT(prio == IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0), "bg ioprio %lx", prio))
		return 1;
	if (!EXPECT(probe_finish(&p) == 0, "probe failed"))
		return 1;
	return 0;
}

static int check_cli(void)
{
	char *env[] = { "IOTIER_SHIM=" SHIM, "PATH=/bin", NULL };
	char *argv[] = { BIN "iotier", "run", "--cgroup-weight", "250", "--", BIN "cgroup-probe",
			 "_exit", NULL };
	char want[64];
	struct probe p;

	if (!EXPECT(probe_start(&p, env, argv) == 0, "iotier run did not start"))
		return 1;
	snprintf(want, sizeof(want), "/iotier-low.%d", (int)p.pid);
	if (!in_cgroup(p.pid, p.fg, want, "fg"))
		return 1;
	if (!weight_is(want, "io.weight", "default 250"))
		return 1;
	return probe_ends_clean(&p, want) ? 0 : 1;
}

/* wbytes of @dev ("MAJ:MIN") in @cgroup's io.stat */
static long long wbytes(const char *cgroup, const char *dev)
{
	char path[256], text[4096], *line;
	long long v = -1;

	snprintf(path, sizeof(path), CG "%s/io.stat", cgroup);
	if (read_small(path, text, sizeof(text)) < 0)
		return -1;
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, dev, strlen(dev)) && line[strlen(dev)] == ' ') {
			char *w = strstr(line, "wbytes=");

			if (w)
				v = atoll(w + 7);
		}
	return v;
}

static void dev_of(const char *node, char *out, size_t len)
{
	struct stat s;

	if (stat(node, &s) == 0)
		snprintf(out, len, "%u:%u", major(s.st_rdev), minor(s.st_rdev));
	else
		snprintf(out, len, "?");
}

static int check_writeback(void)
{
	char *argv[] = { BIN "cgroup-probe", "exit", "/mnt/wb-file", "32", NULL };
	char cg[64], dev[32];
	struct probe p;
	long long before, after;

	dev_of("/dev/vda", dev, sizeof(dev));
	if (!EXPECT(probe_start(&p, base_env, argv) == 0, "writer did not start"))
		return 1;
	snprintf(cg, sizeof(cg), "/iotier-low.%d", (int)p.pid);
	before = wbytes(cg, dev);
	sync(); /* from the root cgroup: the flusher must still charge the low cgroup */
	after = wbytes(cg, dev);
	printf("VMINFO writeback: %s wbytes %lld before sync, %lld after (wrote 32 MiB)\n", cg,
	       before, after);
	if (!EXPECT(after >= 24 * MIB, "only %lld bytes of writeback charged to %s", after, cg))
		return 1;
	if (!EXPECT(probe_finish(&p) == 0, "writer failed"))
		return 1;
	unlink("/mnt/wb-file");
	return 0;
}

/* ---- direct readers in their own iotier cgroups ---- */

static void place(unsigned weight)
{
	struct config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.cgroup_mode = CGROUP_V2;
	cfg.low_weight = weight;
	cfg.log = LOG_WARN;
	if (cgroup_tier_init(&cfg) == 0)
		cgroup_tier_process(true);
}

/* Read @dev sequentially with O_DIRECT from @offset for @seconds; report bytes on @fd. */
static void reader(const char *dev, off_t offset, off_t span, double seconds, unsigned weight,
		   int ready, int go, int report)
{
	static char buf[128 * 1024] __attribute__((aligned(4096)));
	long long bytes = 0;
	double end;
	off_t pos = 0;
	char c;
	int fd;

	place(weight);
	fd = open(dev, O_RDONLY | O_DIRECT);
	if (write(ready, "r", 1) < 0 || read(go, &c, 1) < 0)
		_exit(1);
	if (fd < 0)
		bytes = -1;
	end = now() + seconds;
	while (fd >= 0 && now() < end) {
		ssize_t n = pread(fd, buf, sizeof(buf), offset + pos);

		if (n <= 0)
			break;
		bytes += n;
		pos = (pos + n) % span;
	}
	if (write(report, &bytes, sizeof(bytes)) < 0)
		_exit(1);
	cgroup_tier_exit();
	_exit(0);
}

static int check_bfq_order(void)
{
	unsigned weights[2] = { 100, 1000 };
	long long bytes[2] = { 0, 0 };
	int ready[2], go[2], report[2][2];
	pid_t pids[2];
	char c;

	if (pipe(ready) < 0 || pipe(go) < 0)
		return 1;
	for (int i = 0; i < 2; i++) {
		if (pipe(report[i]) < 0)
			return 1;
		pids[i] = fork();
		if (pids[i] == 0) {
			close(go[1]); /* or the go signal, EOF, never comes */
			reader("/dev/vdb", (off_t)i * 96 * MIB, 96 * MIB, 4.0, weights[i], ready[1],
			       go[0], report[i][1]);
		}
	}
	for (int i = 0; i < 2; i++)
		if (!EXPECT(read(ready[0], &c, 1) == 1, "reader not ready"))
			return 1;
	close(go[1]); /* both start at once */
	for (int i = 0; i < 2; i++) {
		if (!EXPECT(read(report[i][0], &bytes[i], sizeof(bytes[i])) == sizeof(bytes[i]),
			    "report"))
			return 1;
		waitpid(pids[i], NULL, 0);
	}
	close(go[0]);
	printf("VMINFO bfq: weight 100 read %lld MiB, weight 1000 read %lld MiB in 4 s\n",
	       bytes[0] / MIB, bytes[1] / MIB);
	if (!EXPECT(bytes[0] > 0 && bytes[1] > bytes[0], "weight 1000 got %lld, weight 100 %lld",
		    bytes[1], bytes[0]))
		return 1;
	return 0;
}

/* ---- bench: foreground read P99 against a buffered background writer ---- */

static void bench_reader(double seconds, const char *label);

static volatile sig_atomic_t stop_writer;

static void on_term(int sig)
{
	(void)sig;
	stop_writer = 1;
}

static void writer(bool low)
{
	static char chunk[1 << 20];
	long long written = 0;
	int fd;

	signal(SIGTERM, on_term);
	if (low)
		place(10);
	memset(chunk, 'b', sizeof(chunk));
	fd = open("/mnt/bg-file", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while (fd >= 0 && !stop_writer) {
		if (write(fd, chunk, sizeof(chunk)) < 0)
			break;
		written += (long long)sizeof(chunk);
		if (written % (160 * MIB) == 0)
			lseek(fd, 0, SEEK_SET); /* rewrite: keeps the disk size bounded */
	}
	close(fd);
	printf("VMINFO writer wrote %lld MiB\n", written / MIB);
	fflush(stdout);
	cgroup_tier_exit();
	_exit(0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * @low: the writer goes to an iotier cgroup at weight 10. @fg_group: the reader too, in its
 * own at weight 1000 (a control: weights only mean something between groups).
 */
static void bench_round(bool low, bool fg_group, double seconds)
{
	const char *label = !low ? "writer=in-place reader=root"
			    : fg_group ? "writer=low-cgroup reader=own-cgroup-1000"
				       : "writer=low-cgroup reader=root";
	pid_t w;

	w = fork();
	if (w == 0)
		writer(low);
	sleep(2); /* let dirty pages build up and writeback start */
	if (fg_group) {
		pid_t r = fork();

		if (r == 0) {
			place(1000);
			bench_reader(seconds, label);
			cgroup_tier_exit();
			_exit(0);
		}
		waitpid(r, NULL, 0);
	} else {
		bench_reader(seconds, label);
	}
	kill(w, SIGTERM);
	waitpid(w, NULL, 0);
	unlink("/mnt/bg-file");
	sync();
	int dc = open("/proc/sys/vm/drop_caches", O_WRONLY);

	if (dc >= 0) {
		if (write(dc, "3", 1) < 0)
			perror("drop_caches");
		close(dc);
	}
}

static void bench_reader(double seconds, const char *label)
{
	static double lat[200000];
	static char buf[4096] __attribute__((aligned(4096)));
	size_t n = 0;
	double end;
	int fd;

	fd = open("/dev/vda", O_RDONLY | O_DIRECT);
	srand(42);
	end = now() + seconds;
	while (fd >= 0 && now() < end && n < sizeof(lat) / sizeof(lat[0])) {
		off_t off = (off_t)(rand() % (int)(256 * MIB / 4096)) * 4096;
		double t0 = now();

		if (pread(fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf))
			break;
		lat[n++] = (now() - t0) * 1e6;
	}
	close(fd);
	qsort(lat, n, sizeof(lat[0]), cmp_double);
	printf("VMBENCH %s reads=%zu p50_us=%.0f p99_us=%.0f\n", label, n, n ? lat[n / 2] : 0,
	       n ? lat[n * 99 / 100] : 0);
	fflush(stdout);
}

/* Whether @name is one of the @n names in @names. */
static bool named(const char *name, int n, char **names)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} checks[] = {
		{ "io_weight", check_weights },
		{ "exit_cleanup", check_exit_cleanup },
		{ "v2_no_thread_split", check_no_thread_split },
		{ "cli_cgroup_weight", check_cli },
		{ "writeback_charged", check_writeback },
		{ "bfq_weight_order", check_bfq_order },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	test_log_to(stdout, "VMCHECK "); /* the console: the host picks out VMCHECK lines */
	alarm(600); /* whatever hangs, the VM still powers off and the host sees why */
	if (argc > 1 && !strcmp(argv[1], "bench")) {
		double seconds = argc > 2 ? atof(argv[2]) : 10;

		for (int round = 0; round < 2; round++) {
			bench_round(false, false, seconds);
			bench_round(true, false, seconds);
			bench_round(true, true, seconds);
		}
		printf("VMBENCH DONE\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		int ret;

		if (argc > 1 && !strcmp(argv[1], "only") && !named(checks[i].name, argc - 2, argv + 2))
			continue;
		ret = checks[i].run();

		printf("VMCHECK %s %s\n", ret ? "FAIL" : "ok", checks[i].name);
		failed += ret != 0;
	}
	printf("VMCHECK DONE %d failed\n", failed);
	return failed ? 1 : 0;
}
