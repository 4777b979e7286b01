// SPDX-License-Identifier: MIT
/*
 * Description: the low tier holds on every path. Runs paths-worker with libiotier.so
 * preloaded (IOTIER_LOW=bg-*) and judges, with the iolat block tracer, the class each
 * request had when the block layer created it:
 *   uring, uring-sqpoll, uring-raw, aio: direct reads of a throwaway loop device by an
 *     untagged control thread, a low thread and a low thread with an explicit be:2; every
 *     byte must land in its class exactly (SQPOLL: the ring is set up by an untagged thread,
 *     so only the stamped SQE can carry idle).
 *   steer: a buffered low writer on ext4 on a loop device with vm.dirty_background_bytes at
 *     8 MiB (restored on every exit): bytes written back at a class other than idle must
 *     drop by >= 90% with steering on (and in strict mode) against steering off, summed
 *     over three interleaved rounds.
 *   steer-check: the same through `iotier check` (argument IOTIER): its leak ratio with
 *     steering on and strict must be at most a tenth of the one with steering off.
 *   drop, rate: drop-behind and the rate limit, judged by the worker itself (mincore, bytes
 *     over elapsed time).
 *   hot: with steering and a rate on, a high thread's reads and writes make none of the
 *     shim's own syscalls (a seccomp filter traps and counts them); a low thread's do.
 * What a scenario changes on the host is put back even when it is killed (tests/lib): the
 * ext4 file system is mounted in a private mount namespace (it goes when the test and its
 * children do, and with it the last user of the auto-clearing loop device), and the
 * guardian, a process outside that namespace and outside the test's process group, waits
 * for the test to end, by any means including SIGKILL, then restores vm.dirty_background_*
 * if they still hold the test's value and removes the scratch directory
 * (/tmp/iotier-paths.*, with the steer-check baseline JSON in it,
 * /var/tmp/iotier-{drop,hot}.* or /dev/shm/iotier-rate.*). Catchable signals also run the
 * same cleanup at once, in the test itself.
 * Usage: paths-test WORKER SHIM SCENARIO [IOTIER]. Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "class_trace.h"
#include "coverage.h"
#include "iolat.h"
#include "cleanup.h"
#include "loopdev.h"
#include "core/rules.h"
#include "scratch_fs.h"
#include "sysctl_guard.h"
#include "test_env.h"

static const char *worker, *shim, *iotier;
static struct loopdev dev = { .index = -1 }; /* the reads scenarios' raw device */
static struct scratch_fs fs;                  /* ext4 at scratch/fs, for writeback */
static char scratch[64];                      /* the scenario's directory */

#define DIRTY_BG_BYTES "8388608" /* what steer and steer-check set vm.dirty_background_bytes to */

/* The scenario's directory, removed by the guardian however the test ends (cleanup.h). */
static int make_scratch(const char *template)
{
	snprintf(scratch, sizeof(scratch), "%s", template);
	if (test_tmpdir(scratch) < 0) {
		scratch[0] = '\0';
		return test_skip("cannot create a scratch directory");
	}
	return 0;
}

/*
 * Run the worker with the shim and @env ("KEY=VALUE", NULL-terminated). With @trace, the
 * child is tracked before it runs a single instruction of the worker. Returns its status.
 */
static int run_worker(struct class_trace *trace, const char *const *env, const char *const *args)
{
	int gate[2], status;
	const char *argv[8];
	pid_t child;
	char go;
	int n = 0;

	argv[n++] = worker;
	for (; *args && n < 7; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (pipe(gate) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		close(gate[1]);
		if (read(gate[0], &go, 1) != 1)
			_exit(T_EXIT_FAIL);
		setenv("LD_PRELOAD", shim, 1);
		setenv("IOTIER_LOW", "bg-*", 1);
		setenv("IOTIER_LOG", "warn", 1);
		for (; env && *env; env++)
			putenv((char *)*env);
		execv(worker, (char *const *)argv);
		_exit(127);
	}
	close(gate[0]);
	if (trace && class_trace_track(trace, child) < 0)
		fprintf(stderr, "cannot track pid %d\n", (int)child);
	if (write(gate[1], "g", 1) != 1)
		perror("gate");
	close(gate[1]);
	if (waitpid(child, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int need_root_loop(size_t bytes)
{
	int ret;

	if (geteuid() != 0)
		return test_skip("needs root for loop devices");
	ret = loopdev_create(&dev, NULL, bytes, "mq-deadline", 0);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO || ret == -EACCES)
		return test_skip("cannot create a loop device");
	if (ret < 0) {
		fprintf(stderr, "loop device: %s\n", strerror(-ret));
		return T_EXIT_FAIL;
	}
	return 0;
}

static int open_trace(struct class_trace *t, const struct loopdev *d, uint32_t ops,
		      int filter_tgid)
{
	char err[256];
	int ret = class_trace_open(t, d->major, d->minor, ops, filter_tgid, err, sizeof(err));

	if (ret == -EPERM || ret == -ENOENT || ret == -EOPNOTSUPP || ret == -ENOSYS)
		return test_skip(err);
	if (ret < 0) {
		fprintf(stderr, "tracer: %s\n", err);
		return T_EXIT_FAIL;
	}
	return 0;
}

static void print_classes(const char *what, const struct class_bytes *c)
{
	fprintf(stderr, "%s:", what);
	for (int cl = 0; cl < 4; cl++)
		for (int l = 0; l < 8; l++)
			if (c->bytes[cl][l])
				fprintf(stderr, " %s:%d=%llu", ioprio_class_names[cl], l,
					(unsigned long long)c->bytes[cl][l]);
	fprintf(stderr, " (total %llu)\n", (unsigned long long)c->total);
}

/* ---- direct reads: io_uring and libaio --------------------------------------------- */

static int scenario_reads(const char *name)
{
	const char *args[] = { name, dev.path, NULL };
	bool with_explicit = strcmp(name, "uring-raw") != 0;
	uint64_t want_idle = 64 * 4096, want_be2 = with_explicit ? 32 * 16384 : 0;
	uint64_t want_other = 64 * 8192, idle = 0, other;
	struct class_trace trace = { 0 };
	struct class_bytes c;
	int ret, failed = 0;

	if ((ret = need_root_loop(256 << 20)) || (ret = open_trace(&trace, &dev, 1u << IOLAT_OP_READ, 1)))
		return ret;
	class_trace_read(&trace, &c); /* discard anything before the worker */
	ret = run_worker(&trace, NULL, args);
	class_trace_read(&trace, &c);
	class_trace_close(&trace);
	print_classes(name, &c);
	if (ret != 0) {
		fprintf(stderr, "worker exited %d\n", ret);
		return ret == T_EXIT_SKIP ? test_skip("worker skipped") : T_EXIT_FAIL;
	}
	for (int l = 0; l < 8; l++)
		idle += c.bytes[IOPRIO_CLASS_IDLE][l];
	other = c.total - idle - c.bytes[IOPRIO_CLASS_BE][2];
	if (idle != want_idle) {
		fprintf(stderr, "FAIL: %llu bytes at idle, want %llu (the low thread's reads)\n",
			(unsigned long long)idle, (unsigned long long)want_idle);
		failed = 1;
	}
	if (c.bytes[IOPRIO_CLASS_BE][2] != want_be2) {
		fprintf(stderr, "FAIL: %llu bytes at be:2, want %llu (explicit ioprio kept)\n",
			(unsigned long long)c.bytes[IOPRIO_CLASS_BE][2],
			(unsigned long long)want_be2);
		failed = 1;
	}
	if (other != want_other) {
		fprintf(stderr, "FAIL: %llu bytes at other classes, want %llu (the untagged "
			"control)\n", (unsigned long long)other, (unsigned long long)want_other);
		failed = 1;
	}
	return failed ? T_EXIT_FAIL : T_EXIT_PASS;
}

/* ---- buffered writeback ------------------------------------------------------------- */

/*
 * ext4 on a new loop device at scratch/fs, mounted in a private mount namespace. The
 * scratch directory comes first: the guardian that removes it must start outside the
 * namespace.
 */
static int make_fs(size_t bytes)
{
	/* No journal, no lazy init: no kernel thread writes to the device on its own. */
	static const char *const ext4_args[] = { "-O", "^has_journal", "-E",
						 "lazy_itable_init=0,lazy_journal_init=0", NULL };
	struct scratch_fs_opts opts = { .bytes = bytes, .scheduler = "mq-deadline",
					.type = "ext4", .mkfs_args = ext4_args };
	char mnt[sizeof(scratch) + 4];
	int ret;

	if ((ret = make_scratch("/tmp/iotier-paths.XXXXXX")))
		return ret;
	snprintf(mnt, sizeof(mnt), "%s/fs", scratch);
	opts.mnt = mnt;
	return scratch_fs_create(&fs, &opts);
}

/* Setting the bytes zeroes the ratio: both are saved, and the one in force goes back. */
static int lower_dirty_background(void)
{
	if (sysctl_save("vm/dirty_background_ratio") < 0 ||
	    sysctl_set("vm/dirty_background_bytes", DIRTY_BG_BYTES) < 0)
		return test_skip("cannot set vm.dirty_background_bytes");
	return 0;
}

static void sync_mount(void)
{
	int fd = open(fs.mnt, O_RDONLY | O_DIRECTORY);

	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
}

/*
 * Background writeback runs for every device while the machine's dirty pages, all of them,
 * exceed vm.dirty_background_bytes; then the flusher also takes pages the low writer has just
 * dirtied, before steering pushes them. A fresh build or another program's writes leave far
 * more than the 8 MiB these tests set, so each run first writes back the whole machine (and
 * reports what was dirty), measuring steering and not what others had left in the cache.
 */
static void settle_machine_dirty(const char *label)
{
	char line[128];
	FILE *f;

	sync();
	f = fopen("/proc/meminfo", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Dirty:", 6))
			fprintf(stderr, "%s: after sync, machine %s", label, line);
	if (f)
		fclose(f);
}

#define WRITE_MIB 256

/*
 * One run of a variant: the bytes written back at a class other than idle, or -1. Short of
 * the bytes written, *@short_n is 1 (a request at least) and *@missing what the tracer
 * reported missing, for coverage_retry().
 */
static long long leaked_once(struct class_trace *trace, const char *label,
			     const char *const *env, long long *short_n, long long *missing)
{
	char path[128], mib[16];
	const char *args[] = { "write", path, mib, NULL };
	struct class_bytes c;
	int ret;

	snprintf(path, sizeof(path), "%s/%s.dat", fs.mnt, label);
	snprintf(mib, sizeof(mib), "%d", WRITE_MIB);
	settle_machine_dirty(label);
	class_trace_read(trace, &c);
	ret = run_worker(NULL, env, args);
	sync_mount();
	class_trace_read(trace, &c);
	print_classes(label, &c);
	unlink(path);
	sync_mount();
	if (ret != 0) {
		fprintf(stderr, "%s: worker exited %d\n", label, ret);
		return -1;
	}
	*missing = c.missing;
	if (c.total < (uint64_t)WRITE_MIB << 20) {
		*short_n = 1;
		fprintf(stderr, "%s: only %llu bytes reached the device\n", label,
			(unsigned long long)c.total);
		return -1;
	}
	return (long long)class_bytes_not_idle(&c);
}

/* One variant, run again when its bytes came up short by completions the tracer reported
 * missing (tests/lib/coverage.h): its leaked bytes, or -1. */
static long long leaked(struct class_trace *trace, const char *label, const char *const *env)
{
	struct coverage_try t = COVERAGE_TRY_INIT;
	long long bytes = -1, short_n, missing;

	while (coverage_next(&t)) {
		short_n = missing = 0;
		bytes = leaked_once(trace, label, env, &short_n, &missing);
		if (bytes >= 0 || !coverage_retry(&t, short_n, missing, label))
			break;
	}
	return coverage_end(&t, bytes >= 0 ? T_EXIT_PASS : T_EXIT_FAIL) == T_EXIT_PASS ? bytes : -1;
}

/*
 * The machine is shared: other processes' dirty pages wake the flusher at moments nobody
 * controls. Each variant therefore runs STEER_ROUNDS times, interleaved, and the figures
 * compared are the sums.
 */
#define STEER_ROUNDS 3

static int scenario_steer(void)
{
	static const char *const off[] = { "IOTIER_WRITEBACK=0", NULL };
	static const char *const on[] = { NULL };
	static const char *const strict[] = { "IOTIER_WRITEBACK_STRICT=1", NULL };
	struct class_trace trace = { 0 };
	long long l_off = 0, l_on = 0, l_strict = 0, total;
	int ret;

	if ((ret = make_fs(1ull << 30)) ||
	    (ret = open_trace(&trace, &fs.dev, 1u << IOLAT_OP_WRITE, 0)) ||
	    (ret = lower_dirty_background()))
		return ret;
	for (int round = 0; round < STEER_ROUNDS; round++) {
		long long a = leaked(&trace, "off", off), b = leaked(&trace, "on", on),
			  c = leaked(&trace, "strict", strict);

		if (a < 0 || b < 0 || c < 0) {
			class_trace_close(&trace);
			return T_EXIT_FAIL;
		}
		l_off += a;
		l_on += b;
		l_strict += c;
	}
	class_trace_close(&trace);
	test_cleanup_run();
	total = (long long)STEER_ROUNDS * WRITE_MIB << 20;
	fprintf(stderr, "leaked (not idle) of %d x %d MiB: off %.1f MiB, on %.1f MiB (%.1f%% of "
		"off), strict %.1f MiB (%.1f%%)\n", STEER_ROUNDS, WRITE_MIB, l_off / 1048576.0,
		l_on / 1048576.0, 100.0 * l_on / (l_off ? l_off : 1), l_strict / 1048576.0,
		100.0 * l_strict / (l_off ? l_off : 1));
	/* Without steering the flusher must have taken a good part, or nothing was measured. */
	if (l_off < total / 4) {
		fprintf(stderr, "FAIL: steering off leaked only %lld of %lld bytes: the flusher "
			"did not write back the low writer's pages, so the comparison is void\n",
			l_off, total);
		return T_EXIT_FAIL;
	}
	if (l_on * 10 > l_off || l_strict * 10 > l_off) {
		fprintf(stderr, "FAIL: steering must cut leaked bytes by >= 90%%\n");
		return T_EXIT_FAIL;
	}
	return T_EXIT_PASS;
}

/*
 * The same judgement through `iotier check` and its writeback-leak figure: the leak ratio
 * (leaked bytes over the low tier's bytes) with steering on, and in strict mode, must be at
 * most a tenth of the ratio with steering off, saved as the baseline. Each run writes
 * 768 MiB, so that one burst of the flusher weighs little.
 */
static int run_check(const char *label, const char *const *env, const char *const *argv)
{
	int status;
	pid_t child;

	fprintf(stderr, "--- iotier check, steering %s\n", label);
	settle_machine_dirty(label);
	child = fork();
	if (child == 0) {
		setenv("IOTIER_SHIM", shim, 1);
		for (; env && *env; env++)
			putenv((char *)*env);
		execv(iotier, (char *const *)argv);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int scenario_steer_check(void)
{
	static const char *const off[] = { "IOTIER_WRITEBACK=0", NULL };
	static const char *const strict[] = { "IOTIER_WRITEBACK_STRICT=1", NULL };
	char path[128], json[128];
	const char *sanity[] = { iotier, "check", "--low", "bg-*", "-d", fs.dev.path, "--json", json,
				 "--expect", "low.write.leak.writeback.bytes > 192MiB",
				 "--", worker, "write", path, "768", NULL };
	const char *steered[] = { iotier, "check", "--low", "bg-*", "-d", fs.dev.path,
				  "--baseline", json,
				  "--expect", "low.write.bytes >= 700MiB",
				  "--expect", "low.leak.ratio <= 0.1 * baseline.leak.ratio",
				  "--", worker, "write", path, "768", NULL };
	int ret, failed = 0;

	if ((ret = make_fs(2ull << 30)) || (ret = lower_dirty_background()))
		return ret;
	snprintf(path, sizeof(path), "%s/check.dat", fs.mnt);
	snprintf(json, sizeof(json), "%s/off.json", scratch); /* beside the mount, not on it */
	/* Steering off must leak through writeback, or the comparison proves nothing. */
	ret = run_check("off", off, sanity);
	if (ret == 0) {
		unlink(path);
		sync_mount();
		if (run_check("on", NULL, steered) != 0)
			failed = 1;
		unlink(path);
		sync_mount();
		if (run_check("strict", strict, steered) != 0)
			failed = 1;
	}
	unlink(json);
	test_cleanup_run();
	if (ret != 0) {
		fprintf(stderr, "FAIL: iotier check with steering off exited %d\n", ret);
		return T_EXIT_FAIL;
	}
	return failed ? T_EXIT_FAIL : T_EXIT_PASS;
}

/* ---- drop-behind and rate: judged by the worker -------------------------------------- */

static int scenario_drop(void)
{
	static const char *const env[] = { "IOTIER_DROP_BEHIND=*.log", NULL };
	char path[128], buf[1 << 16];
	const char *args[] = { "drop", scratch, NULL };
	int fd, ctl, ret;

	if ((ret = make_scratch("/var/tmp/iotier-drop.XXXXXX")))
		return ret;
	/* old.log and its control old.ctl are written here, in turns, without the shim. */
	snprintf(path, sizeof(path), "%s/old.log", scratch);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	snprintf(path, sizeof(path), "%s/old.ctl", scratch);
	ctl = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	memset(buf, 'o', sizeof(buf));
	for (int i = 0; fd >= 0 && ctl >= 0 && i < 256; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf) ||
		    write(ctl, buf, sizeof(buf)) != sizeof(buf))
			break;
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	if (ctl >= 0) {
		fsync(ctl);
		close(ctl);
	}
	ret = run_worker(NULL, env, args);
	test_cleanup_run();
	return ret;
}

static int scenario_rate(void)
{
	static const char *const env[] = { "IOTIER_LOW_RATE=16M", "IOTIER_WRITEBACK=0", NULL };
	const char *args[] = { "rate", scratch, "16777216", NULL };
	int ret;

	/* tmpfs: no transfer can wait for a disk, so only the limiter and the CPU pace it. */
	if (access("/dev/shm", W_OK) != 0)
		return test_skip("no writable tmpfs at /dev/shm");
	if ((ret = make_scratch("/dev/shm/iotier-rate.XXXXXX")))
		return ret;
	ret = run_worker(NULL, env, args);
	test_cleanup_run();
	return ret;
}

/* Steering and a (generous) rate on: a high thread must still make no extra syscall. */
static int scenario_hot(void)
{
	static const char *const env[] = { "IOTIER_LOW_RATE=1G", NULL };
	const char *args[] = { "hot", scratch, NULL };
	int ret;

	if ((ret = make_scratch("/var/tmp/iotier-hot.XXXXXX")))
		return ret;
	ret = run_worker(NULL, env, args);
	test_cleanup_run();
	return ret;
}

int main(int argc, char **argv)
{
	const char *name;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: paths-test WORKER SHIM SCENARIO [IOTIER]\n");
		return T_EXIT_FAIL;
	}
	worker = argv[1];
	shim = argv[2];
	name = argv[3];
	iotier = argc == 5 ? argv[4] : NULL;
	if (!strcmp(name, "uring") || !strcmp(name, "uring-sqpoll") || !strcmp(name, "uring-raw") ||
	    !strcmp(name, "aio")) {
		int ret;

			ret = scenario_reads(name);
		loopdev_destroy(&dev);
		return ret;
	}
	if (!strcmp(name, "steer"))
		return scenario_steer();
	if (!strcmp(name, "steer-check") && iotier)
		return scenario_steer_check();
	if (!strcmp(name, "drop"))
		return scenario_drop();
	if (!strcmp(name, "rate"))
		return scenario_rate();
	if (!strcmp(name, "hot"))
		return scenario_hot();
	fprintf(stderr, "paths-test: unknown scenario '%s'\n", name);
	return T_EXIT_FAIL;
}
