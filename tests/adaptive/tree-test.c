// SPDX-License-Identifier: MIT
/*
 * Description: one adaptive region for a whole process tree, across exec as well as fork
 * (docs/adaptive.md, "One tree"). A root under the shim with an absolute
 * target starts this program again as a child in every way there is (fork + execv,
 * posix_spawn, vfork + execv, execl of `sh -c 'exec ...'`, a shell that forks and execs
 * it, execvpe with a target of its own); each child must map the root's region (its creator_pid), hold exactly
 * one close-on-exec descriptor on it, not see IOTIER_ADAPTIVE_FD in its environment, and
 * bump a counter the root then sees. A failed exec must return -1/ENOENT and leave no
 * descriptor behind; an exec without the shim in LD_PRELOAD must get no descriptor at all.
 * A bogus IOTIER_ADAPTIVE_FD (stdin, a closed number, garbage, a memfd of another layout)
 * must warn once and give the process its own region, closing only the foreign memfd.
 * No device, no root, no timing: states and counts only.
 * Usage: tree-test SHIM_PRELOAD; the other modes are this program started by itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "run_capture.h"
#include "test_env.h"

#define FD_ENV "IOTIER_ADAPTIVE_FD"
#define OUT_MAX 8192

extern char **environ;

/* The descriptors on a memfd named like the region; *@cloexec: all of them close-on-exec. */
static int region_fds(bool *cloexec)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	int n = 0;

	*cloexec = true;
	while (dir && (d = readdir(dir))) {
		char path[300], link[128];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strncmp(link, ADAPTIVE_REGION_LINK, strlen(ADAPTIVE_REGION_LINK)))
			continue;
		n++;
		if (!(fcntl(atoi(d->d_name), F_GETFD) & FD_CLOEXEC))
			*cloexec = false;
	}
	if (dir)
		closedir(dir);
	return n;
}

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	while (dir && readdir(dir))
		n++;
	if (dir)
		closedir(dir);
	return n;
}

static bool env_has_handoff(void)
{
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, FD_ENV "=", strlen(FD_ENV) + 1))
			return true;
	return false;
}

/* What every process holding a region must show: its one descriptor, no variable. */
static void expect_clean(const char *who)
{
	bool cloexec;
	int n = region_fds(&cloexec);

	EXPECT(n == 1, "%s: %d descriptors on the region, not 1", who, n);
	EXPECT(cloexec, "%s: a descriptor on the region is not close-on-exec", who);
	EXPECT(!env_has_handoff(), "%s: %s is still in environ", who, FD_ENV);
}

/* ---- the modes this program runs in, under the shim -------------------------------- */

/* "child ROOT BUMP": map the root's region, bump its splits by BUMP. */
static int child(pid_t root, unsigned long bump)
{
	struct adaptive_region *r = adaptive_worker_region();

	if (!EXPECT(r, "child %d: no region in /proc/self/maps", getpid()))
		return T_EXIT_FAIL;
	if (!EXPECT(r->creator_pid == root, "child %d: region created by %d, not the root %d: "
		    "a controller of its own", getpid(), r->creator_pid, root))
		return T_EXIT_FAIL;
	expect_clean("child");
	atomic_fetch_add(&r->splits, bump);
	return test_result();
}

/* "bare": started without the shim; it must have been handed nothing. */
static int bare(void)
{
	bool cloexec;

	EXPECT(region_fds(&cloexec) == 0, "a program without the shim got a region descriptor");
	EXPECT(!env_has_handoff(), "a program without the shim got %s", FD_ENV);
	return test_result();
}

/* "fresh KEEP GONE": a bad handover; our own region, fd KEEP still open, fd GONE closed. */
static int fresh(int keep, int gone)
{
	struct adaptive_region *r = adaptive_worker_region();
	struct stat st;

	if (!EXPECT(r, "no region of its own after a bad %s", FD_ENV))
		return T_EXIT_FAIL;
	EXPECT(r->creator_pid == getpid(), "region created by %d, not by itself", r->creator_pid);
	expect_clean("fresh");
	if (keep >= 0)
		EXPECT(fcntl(keep, F_GETFD) >= 0, "fd %d, not the region's, was closed", keep);
	/* Closed, or reused by the region made since: never the foreign memfd's 4096 bytes. */
	if (gone >= 0)
		EXPECT(fstat(gone, &st) != 0 || st.st_size == (off_t)sizeof(*r),
		       "the foreign region memfd %d was left open", gone);
	return test_result();
}

/* ---- the root ------------------------------------------------------------------------ */

static int wait_ok(pid_t pid, const char *how)
{
	int status;

	if (!EXPECT(pid > 0, "%s: could not start: %m", how))
		return -1;
	if (!EXPECT(waitpid(pid, &status, 0) == pid, "%s: waitpid: %m", how))
		return -1;
	return EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status 0x%x",
		      how, status) ? 0 : -1;
}

/* Start a child the way @how says and check that its bump arrived in our region. */
static void expect_bump(struct adaptive_region *r, const char *self, const char *how)
{
	char root[16], bump[16], script[512];
	uint64_t before = atomic_load(&r->splits);
	unsigned long n = 1000 + before;
	char *argv[] = { (char *)self, "child", root, bump, NULL };
	pid_t pid = -1;

	snprintf(root, sizeof(root), "%d", getpid());
	snprintf(bump, sizeof(bump), "%lu", n);
	snprintf(script, sizeof(script), !strcmp(how, "sh-exec") ? "exec '%s' child %s %s" :
		 "'%s' child %s %s; exit $?", self, root, bump);
	if (!strcmp(how, "posix_spawn")) {
		errno = posix_spawn(&pid, self, NULL, NULL, argv, environ);
	} else if (!strcmp(how, "vfork")) {
		/* The wrapper runs in the parent's memory here: it must allocate nothing. */
		if ((pid = vfork()) == 0) {
			execv(self, argv);
			_exit(127);
		}
	} else if ((pid = fork()) == 0) {
		if (!strcmp(how, "execv"))
			execv(self, argv);
		else
			execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	if (wait_ok(pid, how) == 0)
		EXPECT(atomic_load(&r->splits) == before + n, "%s: the child's bump of %lu is not "
		       "in the root's region (splits %llu -> %llu)", how, n,
		       (unsigned long long)before, (unsigned long long)atomic_load(&r->splits));
}

static void expect_failed_exec(const char *self)
{
	char *argv[] = { "no-such-program", NULL };
	int before = count_fds(), ret;

	ret = execv("/nonexistent/iotier-tree-test", argv);
	EXPECT(ret == -1 && errno == ENOENT, "execv of a missing file: %d, %m", ret);
	ret = execvp("iotier-tree-test-no-such-program", argv);
	EXPECT(ret == -1 && errno == ENOENT, "execvp of a missing program: %d, %m", ret);
	ret = execl("/nonexistent/iotier-tree-test", "x", (char *)NULL);
	EXPECT(ret == -1 && errno == ENOENT, "execl of a missing file: %d, %m", ret);
	EXPECT(count_fds() == before, "a failed exec left %d descriptors behind",
	       count_fds() - before);
	expect_clean(self);
}

/* The exec'd image's own IOTIER_TARGET loses to the tree's, with one warning. */
static void expect_tree_target(struct adaptive_region *r, const char *self)
{
	char root[16], out[OUT_MAX] = "";
	int fds[2], status = 0;
	pid_t pid;
	ssize_t n, used = 0;

	snprintf(root, sizeof(root), "%d", getpid());
	if (!EXPECT(pipe(fds) == 0, "pipe: %m"))
		return;
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)self, "child", root, "1", NULL };

		dup2(fds[1], 2);
		setenv("IOTIER_TARGET", "read.p99<=3ms", 1);
		execvpe(self, argv, environ);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + used, sizeof(out) - 1 - (size_t)used)) > 0)
		used += n;
	close(fds[0]);
	out[used] = '\0';
	EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status),
	       "the child with a target of its own failed: 0x%x: %s", status, out);
	EXPECT(strstr(out, "IOTIER_TARGET=read.p99<=3000us differs from read.p99<=1000us"),
	       "no warning that the tree's target wins: '%s'", out);
	(void)r;
}

/* An exec that drops the shim from the environment hands nothing over. */
static void expect_bare(const char *self)
{
	char *argv[] = { (char *)self, "bare", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execve(self, argv, envp);
		_exit(127);
	}
	wait_ok(pid, "an exec without the shim");
}

static int root(const char *self)
{
	struct adaptive_region *r = adaptive_worker_region();

	if (!EXPECT(r, "the root has no region: is the target set?"))
		return T_EXIT_FAIL;
	EXPECT(r->creator_pid == getpid(), "the root's region was created by %d",
	       r->creator_pid);
	expect_clean("root");
	expect_bump(r, self, "execv");
	expect_bump(r, self, "posix_spawn");
	expect_bump(r, self, "vfork");
	expect_bump(r, self, "sh-exec");
	expect_bump(r, self, "sh-fork");
	expect_tree_target(r, self);
	expect_bare(self);
	expect_failed_exec(self);
	return test_result();
}

/* ---- the driver, not under the shim -------------------------------------------------- */

static void shim_env(const char *preload)
{
	setenv("LD_PRELOAD", preload, 1);
	setenv("IOTIER_LOW", "thread:no-such-thr", 1);
	setenv("IOTIER_TARGET", "read.p99<=1ms", 1);
	setenv("IOTIER_LOG", "warn", 1);
	unsetenv("IOTIER_CONFIG");
}

static unsigned occurrences(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* Start "fresh KEEP GONE" with IOTIER_ADAPTIVE_FD=@value: one warning naming @why. */
static void expect_fresh(const char *self, const char *value, int keep, int gone,
			 const char *why)
{
	char keep_s[16], gone_s[16], out[OUT_MAX], warning[128];
	const char *argv[] = { self, "fresh", keep_s, gone_s, NULL };
	int status;

	snprintf(keep_s, sizeof(keep_s), "%d", keep);
	snprintf(gone_s, sizeof(gone_s), "%d", gone);
	snprintf(warning, sizeof(warning), FD_ENV "=%s inherited across exec: %s", value, why);
	setenv(FD_ENV, value, 1);
	status = run_capture(argv, out, sizeof(out), NULL);
	unsetenv(FD_ENV);
	EXPECT(status == 0, "%s=%s: the process failed (%d): %s", FD_ENV, value, status, out);
	EXPECT(occurrences(out, warning) == 1, "%s=%s: expected one '%s', got: '%s'", FD_ENV,
	       value, warning, out);
}

/* A memfd with the region's name but not its size: another build's layout. */
static int foreign_region(void)
{
	int fd = memfd_create(ADAPTIVE_REGION_NAME, 0);

	if (fd >= 0 && ftruncate(fd, 4096) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int driver(const char *preload)
{
	static char self[4096];
	const char *argv[] = { self, "root", NULL };
	char out[OUT_MAX], num[16];
	int status, foreign;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return test_fail("readlink /proc/self/exe: %m");
	self[len] = '\0';

	shim_env(preload);
	status = run_capture(argv, out, sizeof(out), NULL);
	EXPECT(status == 0, "the root's checks failed (%d):\n%s", status, out);
	expect_fresh(self, "0", 0, -1, "not the adaptive tier's memfd");
	expect_fresh(self, "987", -1, -1, "not an open descriptor");
	expect_fresh(self, "3x", -1, -1, "not an open descriptor");
	foreign = foreign_region();
	if (EXPECT(foreign >= 0, "memfd_create: %m")) {
		snprintf(num, sizeof(num), "%d", foreign);
		expect_fresh(self, num, -1, foreign,
			     "a region of another build of iotier (its size differs)");
		close(foreign);
	}
	return test_result();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "child"))
		return child(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 2 && !strcmp(argv[1], "bare"))
		return bare();
	if (argc == 4 && !strcmp(argv[1], "fresh"))
		return fresh(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "root"))
		return root(argv[0]);
	if (argc != 2) {
		fprintf(stderr, "usage: tree-test SHIM_PRELOAD\n");
		return T_EXIT_FAIL;
	}
	return driver(argv[1]);
}
