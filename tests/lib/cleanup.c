// SPDX-License-Identifier: MIT
/*
 * cleanup.c: registered cleanups (at exit and on the usual termination signals) and the
 * guardian process that acts after SIGKILL too. See cleanup.h.
 */
#include "cleanup.h"
#include "small_file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLEANUPS 32

static struct {
	void (*fn)(void *);
	void *arg;
} cleanups[MAX_CLEANUPS];
static volatile sig_atomic_t n_cleanups;
static pid_t owner; /* the process that registered them */

void test_cleanup_run(void)
{
	if (getpid() != owner)
		return;
	while (n_cleanups > 0) {
		int i = --n_cleanups;

		cleanups[i].fn(cleanups[i].arg);
	}
}

static void on_exit_cleanup(void)
{
	test_cleanup_run();
}

static void on_signal(int sig)
{
	test_cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,
				    SIGUSR2, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	struct sigaction sa = { .sa_handler = on_signal }, old;

	owner = getpid();
	atexit(on_exit_cleanup);
	sigfillset(&sa.sa_mask); /* one cleanup run at a time */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

int test_cleanup_add(void (*fn)(void *), void *arg)
{
	if (!owner)
		install();
	if (n_cleanups == MAX_CLEANUPS)
		return -ENOSPC;
	cleanups[n_cleanups].fn = fn;
	cleanups[n_cleanups].arg = arg;
	n_cleanups++;
	return 0;
}

void test_cleanup_remove(void (*fn)(void *), void *arg)
{
	for (int i = n_cleanups - 1; i >= 0; i--)
		if (cleanups[i].fn == fn && cleanups[i].arg == arg) {
			memmove(&cleanups[i], &cleanups[i + 1],
				(size_t)(n_cleanups - 1 - i) * sizeof(cleanups[0]));
			n_cleanups--;
			return;
		}
}

/* ---- the guardian ---- */

/* One order to the guardian, written whole in one write(2): it is below PIPE_BUF. */
struct order {
	char kind;         /* 'R' remove the tree @path, 'S' restore a sysctl */
	char path[256];
	char now[64];      /* 'S': act only while @path reads this */
	char restore[128]; /* 'S': then write @old here */
	char old[64];
};

static int guardian_fd = -1; /* write end: the guardian acts when it reads EOF */
static pid_t guardian_pid = -1;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Only undo the test's own value: someone else may have set the sysctl since. */
static void carry_out(const struct order *o)
{
	char cur[64];

	if (o->kind == 'R')
		nftw(o->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	else if (o->kind == 'S' && read_small(o->path, cur, sizeof(cur)) == 0 &&
		 !strcmp(cur, o->now) && strcmp(o->old, o->now))
		write_file(o->restore, o->old);
}

/* In the guardian: collect orders until every copy of the write end is closed. */
static void guard(int fd)
{
	static struct order orders[MAX_CLEANUPS];
	int n = 0;
	ssize_t r;

	while ((r = read(fd, &orders[n < MAX_CLEANUPS ? n : MAX_CLEANUPS - 1],
			 sizeof(orders[0]))) != 0) {
		if (r < 0 && errno != EINTR)
			break;
		if (r == sizeof(orders[0]) && n < MAX_CLEANUPS)
			n++;
	}
	/* Last ordered, first done, as with the cleanups in the test. */
	while (n > 0)
		carry_out(&orders[--n]);
}

static void finish_cleanup(void *unused)
{
	(void)unused;
	test_guardian_finish();
}

int test_guardian_start(void)
{
	int p[2];

	if (guardian_fd >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	guardian_pid = fork();
	if (guardian_pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (guardian_pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* Out of the process group, deaf to the usual signals, holding nothing. */
		setsid();
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		dup2(p[0], 3);
		close_range(4, ~0u, 0);
		guard(3);
		_exit(0);
	}
	close(p[0]);
	guardian_fd = p[1];
	return test_cleanup_add(finish_cleanup, NULL);
}

static void send(const struct order *o)
{
	if (guardian_fd < 0)
		return;
	if (write(guardian_fd, o, sizeof(*o)) != sizeof(*o))
		fprintf(stderr, "warning: the guardian will not undo %s\n", o->path);
}

int test_tmpdir(char *template)
{
	int ret = test_guardian_start();

	if (ret < 0)
		return ret;
	if (!mkdtemp(template))
		return -errno;
	test_guardian_rmtree(template);
	return 0;
}

void test_guardian_rmtree(const char *path)
{
	struct order o = { .kind = 'R' };

	snprintf(o.path, sizeof(o.path), "%s", path);
	send(&o);
}

void test_guardian_sysctl(const char *path, const char *now, const char *restore,
			  const char *old)
{
	struct order o = { .kind = 'S' };

	snprintf(o.path, sizeof(o.path), "%s", path);
	snprintf(o.now, sizeof(o.now), "%s", now);
	snprintf(o.restore, sizeof(o.restore), "%s", restore);
	snprintf(o.old, sizeof(o.old), "%s", old);
	send(&o);
}

void test_guardian_finish(void)
{
	if (guardian_fd < 0)
		return;
	close(guardian_fd);
	guardian_fd = -1;
	waitpid(guardian_pid, NULL, 0);
	guardian_pid = -1;
}
