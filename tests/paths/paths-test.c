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
 * What a scenario changes on the host is put back even when it is killed: the ext4 file
 * system is mounted in a private mount namespace (it goes when the test and its children
 * do, and with it the last user of the auto-clearing loop device), and a guard process
 * outside that namespace and outside the test's process group waits for the test to end,
 * by any means including SIGKILL, then restores vm.dirty_background_* if they still hold
 * the test's value and removes the scratch directory (/tmp/iotier-paths.*, with the
 * steer-check baseline JSON in it, /var/tmp/iotier-{drop,hot}.* or /dev/shm/iotier-rate.*).
 * Catchable signals also run the same cleanup at once, in the test itself.
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

#include "write_file.h"
#include "class_trace.h"
#include "iolat.h"
#include "loopdev.h"
#include "rules.h"
#include "test_env.h"

static const char *worker, *shim, *iotier;
static struct loopdev dev = { .index = -1 };
static char scratch[64];  /* the scenario's directory, removed by the guard */
static char mnt[96];      /* scratch/fs: where ext4 is mounted, in the private namespace */
static int mounted;
static int guard_fd = -1; /* write end: the guard acts when it reads EOF */
static pid_t guard_pid = -1;

#define DIRTY_BG_BYTES "8388608" /* what steer and steer-check set vm.dirty_background_bytes to */

/* vm.dirty_* values to put back, or a NUL first byte when untouched. */
static char saved_bg_bytes[32], saved_bg_ratio[32];

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Setting one of bytes/ratio zeroes the other, so the one that was in force goes back last. */
static void restore_dirty(void)
{
	if (!saved_bg_bytes[0])
		return;
	if (strcmp(saved_bg_bytes, "0"))
		write_file("/proc/sys/vm/dirty_background_bytes", saved_bg_bytes);
	else
		write_file("/proc/sys/vm/dirty_background_ratio", saved_bg_ratio);
	saved_bg_bytes[0] = '\0';
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/*
 * The guard, forked before the test enters its private mount namespace, so that it sees
 * the scratch directory as a plain directory. It leaves the process group (meson kills the
 * group on a timeout), ignores the usual signals, holds no fd of the test's (loop device,
 * BPF, meson's pipes) and blocks until every copy of the pipe's write end is closed: the
 * test ended, however it ended.
 */
static int guard_start(const char *template, bool dirty)
{
	char bytes[32] = "", ratio[32] = "", cur[32], c;
	int p[2];

	snprintf(scratch, sizeof(scratch), "%s", template);
	if (!mkdtemp(scratch)) {
		scratch[0] = '\0';
		return test_skip("cannot create a scratch directory");
	}
	if (dirty && (read_str("/proc/sys/vm/dirty_background_bytes", bytes, sizeof(bytes)) < 0 ||
		      read_str("/proc/sys/vm/dirty_background_ratio", ratio, sizeof(ratio)) < 0))
		return test_skip("cannot read vm.dirty_background_*");
	if (pipe2(p, O_CLOEXEC) < 0)
		return T_EXIT_FAIL;
	guard_pid = fork();
	if (guard_pid < 0)
		return T_EXIT_FAIL;
	if (guard_pid == 0) {
		int null = open("/dev/null", O_RDWR);
		ssize_t r;

		setsid();
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		dup2(p[0], 3);
		close_range(4, ~0u, 0);
		while ((r = read(3, &c, 1)) != 0)
			if (r < 0 && errno != EINTR)
				break;
		/* Only undo our own value: someone else may have set it since. */
		if (bytes[0] && read_str("/proc/sys/vm/dirty_background_bytes", cur, sizeof(cur)) == 0 &&
		    !strcmp(cur, DIRTY_BG_BYTES) && strcmp(bytes, DIRTY_BG_BYTES)) {
			if (strcmp(bytes, "0"))
				write_file("/proc/sys/vm/dirty_background_bytes", bytes);
			else
				write_file("/proc/sys/vm/dirty_background_ratio", ratio);
		}
		nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		_exit(0);
	}
	close(p[0]);
	guard_fd = p[1];
	return 0;
}

/* Let the guard do its part now and wait for it: async-signal-safe. */
static void guard_finish(void)
{
	if (guard_fd < 0)
		return;
	close(guard_fd);
	guard_fd = -1;
	waitpid(guard_pid, NULL, 0);
	guard_pid = -1;
	scratch[0] = '\0';
}

static void cleanup(void)
{
	restore_dirty();
	if (mounted) {
		umount2(mnt, MNT_DETACH);
		mounted = 0;
	}
	mnt[0] = '\0';
	loopdev_destroy(&dev);
	guard_finish();
}

static void on_fatal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Every exit we can catch: return, exit(), and the signals that end a process. */
static void install_cleanup(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,
				    SIGUSR2, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };

	atexit(cleanup);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal);
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

static int open_trace(struct class_trace *t, uint32_t ops, int filter_tgid)
{
	char err[256];
	int ret = class_trace_open(t, dev.major, dev.minor, ops, filter_tgid, err, sizeof(err));

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

	if ((ret = need_root_loop(256 << 20)) || (ret = open_trace(&trace, 1u << IOLAT_OP_READ, 1)))
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

static int run_cmd(const char *const *argv)
{
	int status;
	pid_t child = fork();

	if (child == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ext4 on the loop device at scratch/fs, mounted in a private mount namespace. */
static int make_fs(void)
{
	/* No journal, no lazy init: no kernel thread writes to the device on its own. */
	const char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E",
			       "lazy_itable_init=0,lazy_journal_init=0", dev.path, NULL };
	int ret;

	if (run_cmd(mkfs) != 0)
		return test_skip("mkfs.ext4 failed or is missing");
	/* The guard must stay in the host's namespace: start it first. */
	if ((ret = guard_start("/tmp/iotier-paths.XXXXXX", true)))
		return ret;
	if (unshare(CLONE_NEWNS) < 0)
		return test_skip("cannot create a mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return test_skip("cannot make mounts private");
	snprintf(mnt, sizeof(mnt), "%s/fs", scratch);
	if (mkdir(mnt, 0700) < 0) {
		fprintf(stderr, "mkdir %s: %s\n", mnt, strerror(errno));
		return T_EXIT_FAIL;
	}
	if (mount(dev.path, mnt, "ext4", 0, NULL) < 0) {
		fprintf(stderr, "mount: %s\n", strerror(errno));
		return errno == EPERM ? test_skip("cannot mount") : T_EXIT_FAIL;
	}
	mounted = 1;
	return 0;
}

static int lower_dirty_background(const char *bytes)
{
	if (read_str("/proc/sys/vm/dirty_background_bytes", saved_bg_bytes,
		     sizeof(saved_bg_bytes)) < 0 ||
	    read_str("/proc/sys/vm/dirty_background_ratio", saved_bg_ratio,
		     sizeof(saved_bg_ratio)) < 0) {
		saved_bg_bytes[0] = '\0';
		return test_skip("cannot read vm.dirty_background_*");
	}
	if (write_file("/proc/sys/vm/dirty_background_bytes", bytes) < 0) {
		saved_bg_bytes[0] = '\0';
		return test_skip("cannot set vm.dirty_background_bytes");
	}
	return 0;
}

static void sync_mount(void)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY);

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

/* One variant: returns the bytes written back at a class other than idle, or -1. */
static long long leaked(struct class_trace *trace, const char *label, const char *const *env)
{
	char path[128], mib[16];
	const char *args[] = { "write", path, mib, NULL };
	struct class_bytes c;
	int ret;

	snprintf(path, sizeof(path), "%s/%s.dat", mnt, label);
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
	if (c.total < (uint64_t)WRITE_MIB << 20) {
		fprintf(stderr, "%s: only %llu bytes reached the device\n", label,
			(unsigned long long)c.total);
		return -1;
	}
	return (long long)class_bytes_not_idle(&c);
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

	install_cleanup();
	if ((ret = need_root_loop(1ull << 30)) || (ret = make_fs()) ||
	    (ret = open_trace(&trace, 1u << IOLAT_OP_WRITE, 0)) ||
	    (ret = lower_dirty_background(DIRTY_BG_BYTES)))
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
	cleanup();
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
	const char *sanity[] = { iotier, "check", "--low", "bg-*", "-d", dev.path, "--json", json,
				 "--expect", "low.write.leak.writeback.bytes > 192MiB",
				 "--", worker, "write", path, "768", NULL };
	const char *steered[] = { iotier, "check", "--low", "bg-*", "-d", dev.path,
				  "--baseline", json,
				  "--expect", "low.write.bytes >= 700MiB",
				  "--expect", "low.leak.ratio <= 0.1 * baseline.leak.ratio",
				  "--", worker, "write", path, "768", NULL };
	int ret, failed = 0;

	install_cleanup();
	if ((ret = need_root_loop(2ull << 30)) || (ret = make_fs()) ||
	    (ret = lower_dirty_background(DIRTY_BG_BYTES)))
		return ret;
	snprintf(path, sizeof(path), "%s/check.dat", mnt);
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
	cleanup();
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

	install_cleanup();
	if ((ret = guard_start("/var/tmp/iotier-drop.XXXXXX", false)))
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
	cleanup();
	return ret;
}

static int scenario_rate(void)
{
	static const char *const env[] = { "IOTIER_LOW_RATE=16M", "IOTIER_WRITEBACK=0", NULL };
	const char *args[] = { "rate", scratch, "16777216", NULL };
	int ret;

	install_cleanup();
	/* tmpfs: no transfer can wait for a disk, so only the limiter and the CPU pace it. */
	if (access("/dev/shm", W_OK) != 0)
		return test_skip("no writable tmpfs at /dev/shm");
	if ((ret = guard_start("/dev/shm/iotier-rate.XXXXXX", false)))
		return ret;
	ret = run_worker(NULL, env, args);
	cleanup();
	return ret;
}

/* Steering and a (generous) rate on: a high thread must still make no extra syscall. */
static int scenario_hot(void)
{
	static const char *const env[] = { "IOTIER_LOW_RATE=1G", NULL };
	const char *args[] = { "hot", scratch, NULL };
	int ret;

	install_cleanup();
	if ((ret = guard_start("/var/tmp/iotier-hot.XXXXXX", false)))
		return ret;
	ret = run_worker(NULL, env, args);
	cleanup();
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

		install_cleanup();
		ret = scenario_reads(name);
		cleanup();
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
