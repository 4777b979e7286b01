// SPDX-License-Identifier: MIT
/*
 * Description: integration scenarios for libiotier.so, run with the shim preloaded and
 * IOTIER_* set by tests/meson.build. Each scenario creates threads or processes, names
 * them in one of the ways programs do, makes them do I/O, and asserts the exact I/O
 * priority class and level that ioprio_get(2) reports per tid. Usage: tier-probe SCENARIO.
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iotier.h"
#include "test_env.h"

#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)
#define BE(n) IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, n)

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int prio_of(pid_t tid)
{
	return (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tid);
}

static int set_own_prio(int prio)
{
	return (int)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio);
}

static char scratch_path[] = "/tmp/iotier-probe.XXXXXX";
static int scratch_fd = -1;

/* One small I/O through a wrapped call. */
static void do_io(void)
{
	char byte;

	if (pread(scratch_fd, &byte, 1, 0) != 1)
		fprintf(stderr, "pread: %s\n", strerror(errno));
}

static void open_scratch(void)
{
	scratch_fd = mkstemp(scratch_path);
	if (scratch_fd < 0) {
		perror("mkstemp");
		exit(T_EXIT_FAIL);
	}
	unlink(scratch_path);
	if (write(scratch_fd, "0123456789", 10) != 10) {
		perror("write");
		exit(T_EXIT_FAIL);
	}
}

/* ---- naming: every way a thread can get its name ---------------------------------- */

enum naming_way { BY_PRCTL, BY_SETNAME_SELF, BY_SETNAME_OTHER, BY_COMM_WRITE, BY_COMM_FOPEN,
		  BY_NONE, N_WAYS };

struct worker {
	enum naming_way way;
	const char *name;
	pthread_t handle;
	pid_t tid;
	int prio_after_io;
	pthread_barrier_t *named, *checked;
};

static void name_via_comm_file(const char *name, int use_stdio)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)gettid_());
	if (use_stdio) {
		FILE *f = fopen(path, "w");

		if (f) {
			fprintf(f, "%s", name);
			fclose(f);
		}
	} else {
		int fd = open(path, O_WRONLY);

		if (fd >= 0) {
			if (write(fd, name, strlen(name)) < 0)
				perror("write comm");
			close(fd);
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = gettid_();
	switch (w->way) {
	case BY_PRCTL:
		prctl(PR_SET_NAME, w->name, 0, 0, 0);
		break;
	case BY_SETNAME_SELF:
		pthread_setname_np(pthread_self(), w->name);
		break;
	case BY_COMM_WRITE:
		name_via_comm_file(w->name, 0);
		break;
	case BY_COMM_FOPEN:
		name_via_comm_file(w->name, 1);
		break;
	default:
		break; /* BY_SETNAME_OTHER: the creator names us; BY_NONE: no name */
	}
	pthread_barrier_wait(w->named);
	do_io();
	w->prio_after_io = prio_of(0);
	pthread_barrier_wait(w->checked);
	return NULL;
}

static int scenario_naming(void)
{
	static const char *const low_names[N_WAYS] = { "bg-prctl", "bg-self", "bg-other",
						       "bg-comm", "bg-fopen", NULL };
	struct worker workers[2 * N_WAYS];
	pthread_barrier_t named, checked;
	int n = 0;

	pthread_barrier_init(&named, NULL, 2 * N_WAYS + 1);
	pthread_barrier_init(&checked, NULL, 2 * N_WAYS + 1);
	/* For each way: one thread whose name matches IOTIER_LOW=bg-*, one whose name does not. */
	for (int way = 0; way < N_WAYS; way++)
		for (int match = 0; match < 2; match++) {
			struct worker *w = &workers[n++];

			w->way = (enum naming_way)way;
			w->name = match ? low_names[way] : (way == BY_NONE ? NULL : "fg-worker");
			w->named = &named;
			w->checked = &checked;
			if (way == BY_NONE && match)
				w->name = NULL;
			pthread_create(&w->handle, NULL, worker_main, w);
			if (way == BY_SETNAME_OTHER)
				pthread_setname_np(w->handle, w->name);
		}
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&checked);
	for (int i = 0; i < n; i++) {
		int low = workers[i].name && !strncmp(workers[i].name, "bg-", 3);

		EXPECT(workers[i].prio_after_io == (low ? IDLE : 0),
		       "way %d thread '%s' (tid %d): ioprio %#x, want %#x", workers[i].way,
		       workers[i].name ? workers[i].name : "(unnamed)", (int)workers[i].tid,
		       workers[i].prio_after_io, low ? IDLE : 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].handle, NULL);
	EXPECT(prio_of(0) == 0, "main thread ioprio %#x, want untouched", prio_of(0));
	return test_result();
}

/* ---- rename back: a thread that stops matching gets its own priority back ---------- */

static int scenario_rename_back(void)
{
	EXPECT(set_own_prio(BE(2)) == 0, "ioprio_set be:2: %s", strerror(errno));
	prctl(PR_SET_NAME, "bg-compact", 0, 0, 0);
	do_io();
	EXPECT(prio_of(0) == IDLE, "after matching name: %#x, want idle", prio_of(0));
	prctl(PR_SET_NAME, "foreground", 0, 0, 0);
	do_io();
	EXPECT(prio_of(0) == BE(2), "after rename: %#x, want be:2 back", prio_of(0));
	return test_result();
}

/* ---- a process rule tags the whole process, threads created later included --------- */

static void *report_prio(void *arg)
{
	do_io();
	*(int *)arg = prio_of(0);
	return NULL;
}

static int scenario_process_rule(void)
{
	pthread_t t;
	int prio = -1;

	EXPECT(prio_of(0) == IDLE, "main thread %#x, want idle from comm rule", prio_of(0));
	pthread_create(&t, NULL, report_prio, &prio);
	pthread_join(t, NULL);
	EXPECT(prio == IDLE, "thread created later: %#x, want idle", prio);
	return test_result();
}

/* ---- fork + title rewrite, the way PostgreSQL's autovacuum workers start ------------ */

static int scenario_fork_title(char **argv)
{
	size_t area = 0;
	int status;
	pid_t child;

	for (char **a = argv; *a; a++)
		area += strlen(*a) + 1;
	EXPECT(prio_of(0) == 0, "parent %#x before fork, want untouched", prio_of(0));
	child = fork();
	if (child == 0) {
		const char *title = "probe: autovacuum worker";

		if (area <= strlen(title))
			_exit(T_EXIT_SKIP);
		/* set_ps_display(): overwrite argv in place and pad with NULs, no syscall. */
		memset(argv[0], 0, area);
		strcpy(argv[0], title);
		/* One I/O is enough: a new process checks its title on every early call. */
		do_io();
		_exit(prio_of(0) == IDLE ? 0 : 10 + (prio_of(0) >> 13));
	}
	waitpid(child, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child after title change: exit %d (want 0: idle)", WEXITSTATUS(status));
	do_io();
	EXPECT(prio_of(0) == 0, "parent %#x after fork, want untouched", prio_of(0));
	return test_result();
}

/* ---- a fork that runs no atfork handler must not touch the parent's threads --------- */

static int scenario_raw_fork(void)
{
	int status;
	pid_t child;

	do_io();
	child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); /* no pthread_atfork handlers */
	if (child == 0) {
		prctl(PR_SET_NAME, "bg-rawchild", 0, 0, 0);
		do_io();
		_exit(prio_of(0) == IDLE ? 0 : 1);
	}
	waitpid(child, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "raw-forked child not tagged idle");
	EXPECT(prio_of(0) == 0, "parent %#x after the child renamed itself, want untouched",
	       prio_of(0));
	return test_result();
}

/* ---- a vfork() child shares its parent's memory and must leave its records alone ---- */

static int scenario_vfork(void)
{
	int status, bg_prio = -1;
	pid_t child;

	do_io();
	child = vfork();
	if (child == 0) {
		/* Legal before exec in practice (shells do it), and it goes through the shim. */
		prctl(PR_SET_NAME, "bg-vforked", 0, 0, 0);
		_exit(0);
	}
	waitpid(child, &status, 0);
	do_io();
	EXPECT(prio_of(0) == 0, "parent %#x after its vfork child renamed itself, want untouched",
	       prio_of(0));
	EXPECT(iotier_get_tier() == IOTIER_DEFAULT, "parent tier %d after vfork, want untagged",
	       iotier_get_tier());
	{
		pthread_t t;

		pthread_create(&t, NULL, report_prio, &bg_prio);
		pthread_join(t, NULL);
	}
	EXPECT(bg_prio == 0, "thread created after the vfork: %#x, want untouched", bg_prio);
	return test_result();
}

/* ---- exec: the new image is tagged from its first instruction ------------------------ */

/* @extra: one more argument for the child, or NULL. */
static int scenario_exec(const char *self, const char *extra)
{
	int status;
	pid_t child;

	EXPECT(prio_of(0) == 0, "parent %#x, want untouched", prio_of(0));
	child = fork();
	if (child == 0) {
		execl(self, self, "exec-child", extra, (char *)NULL);
		_exit(127);
	}
	waitpid(child, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exec child: exit %d",
	       WEXITSTATUS(status));
	return test_result();
}

static int scenario_exec_child(void)
{
	/* No I/O yet: the constructor must already have applied the cmdline rule. */
	return prio_of(0) == IDLE ? 0 : 1;
}

/* ---- the program sees exactly what it would without the shim ------------------------ */

static int scenario_errno(void)
{
	char buf[100];
	ssize_t n;

	errno = 0;
	n = read(-1, buf, 1);
	EXPECT(n == -1 && errno == EBADF, "read(-1): %zd errno %d, want -1 EBADF", n, errno);
	errno = 0;
	n = pread(12345, buf, 1, 0);
	EXPECT(n == -1 && errno == EBADF, "pread(bad): %zd errno %d", n, errno);
	errno = 4242; /* a successful call leaves errno alone */
	n = pread(scratch_fd, buf, sizeof(buf), 0);
	EXPECT(n == 10, "short read: %zd, want 10", n);
	EXPECT(errno == 4242, "errno after success: %d, want 4242", errno);
	n = pread(scratch_fd, buf, sizeof(buf), 100);
	EXPECT(n == 0, "read past EOF: %zd", n);
	errno = 4242; /* ... also when the same call re-tags the thread */
	prctl(PR_SET_NAME, "bg-errno", 0, 0, 0);
	errno = 4242;
	n = pread(scratch_fd, buf, 4, 0);
	EXPECT(n == 4 && errno == 4242, "re-tagging read: %zd errno %d", n, errno);
	EXPECT(pwrite(-1, "x", 1, 0) == -1 && errno == EBADF, "low pwrite(-1) errno %d", errno);
	EXPECT(write(-1, "x", 1) == -1 && errno == EBADF, "write(-1) errno %d", errno);
	EXPECT(fsync(-1) == -1 && errno == EBADF, "fsync(-1) errno %d", errno);
	EXPECT(posix_fallocate(-1, 0, 1) == EBADF, "posix_fallocate(-1) returns an errno value");
	return test_result();
}

/* ---- the explicit API ------------------------------------------------------------- */

static int scenario_api(void)
{
	EXPECT(iotier_get_tier() == IOTIER_DEFAULT, "start tier %d", iotier_get_tier());
	EXPECT(iotier_set_tier(IOTIER_LOW) == 0, "set low: %s", strerror(errno));
	EXPECT(prio_of(0) == IDLE, "low: %#x", prio_of(0));
	EXPECT(iotier_get_tier() == IOTIER_LOW, "get after low: %d", iotier_get_tier());
	/* An explicit high beats the matching thread rule (IOTIER_LOW=bg-*). */
	prctl(PR_SET_NAME, "bg-explicit", 0, 0, 0);
	EXPECT(iotier_set_tier(IOTIER_HIGH) == 0, "set high");
	do_io();
	EXPECT(prio_of(0) == 0, "explicit high over low rule: %#x", prio_of(0));
	EXPECT(iotier_set_tier(IOTIER_DEFAULT) == 0, "back to rules");
	EXPECT(prio_of(0) == IDLE, "rules again: %#x, want idle", prio_of(0));
	EXPECT(iotier_set_tier(7) == -1 && errno == EINVAL, "bad tier: errno %d", errno);
	return test_result();
}

/* ---- signals: I/O from a handler while the thread is being re-tagged ---------------- */

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	char byte;

	(void)sig;
	if (pread(scratch_fd, &byte, 1, 0) == 1)
		handled++;
}

static int scenario_signals(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval tick = { { 0, 200 }, { 0, 200 } };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &tick, NULL);
	for (int i = 0; i < 20000; i++) {
		prctl(PR_SET_NAME, i & 1 ? "bg-flip" : "fg-flop", 0, 0, 0);
		do_io();
	}
	memset(&tick, 0, sizeof(tick));
	setitimer(ITIMER_REAL, &tick, NULL);
	prctl(PR_SET_NAME, "fg-final", 0, 0, 0);
	do_io();
	EXPECT(handled > 0, "no signal handled");
	EXPECT(prio_of(0) == 0, "final %#x, want untouched", prio_of(0));
	return test_result();
}

/* ---- a bad configuration: one warning, and the program runs untouched --------------- */

static int run_capturing_stderr(const char *self, const char *scenario, char *out, size_t len)
{
	int pipefd[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t child;

	if (pipe(pipefd) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		execl(self, self, scenario, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (used + 1 < len && (n = read(pipefd[0], out + used, len - 1 - used)) > 0)
		used += (size_t)n;
	out[used] = '\0';
	close(pipefd[0]);
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int scenario_untouched(void)
{
	prctl(PR_SET_NAME, "bg-ignored", 0, 0, 0);
	do_io();
	return prio_of(0) == 0 ? 0 : 1;
}

static int count_lines(const char *s)
{
	int lines = 0;

	for (; *s; s++)
		lines += *s == '\n';
	return lines;
}

static int scenario_bad_config(const char *self)
{
	char err[4096];
	int ret;

	setenv("IOTIER_LOW", "bg-*,,thread:x", 1);
	ret = run_capturing_stderr(self, "untouched", err, sizeof(err));
	EXPECT(ret == 0, "program under a bad rule list exited %d (want 0, untagged)", ret);
	EXPECT(count_lines(err) == 1, "want one warning line, got: %s", err);
	EXPECT(strstr(err, "IOTIER_LOW: bad rule list 'bg-*,,thread:x': empty rule at offset 5"),
	       "warning does not name the bad token: %s", err);

	setenv("IOTIER_LOW", "bg-*", 1);
	setenv("IOTIER_LOW_CLASS", "be:9", 1);
	ret = run_capturing_stderr(self, "untouched", err, sizeof(err));
	EXPECT(ret == 0 && count_lines(err) == 1 && strstr(err, "'be:9'"),
	       "bad class: exit %d, stderr: %s", ret, err);
	unsetenv("IOTIER_LOW_CLASS");

	setenv("IOTIER_TARGET", "read.p99<=2", 1);
	ret = run_capturing_stderr(self, "untouched", err, sizeof(err));
	EXPECT(ret == 0 && count_lines(err) == 1 && strstr(err, "IOTIER_TARGET: bad target "
	       "'read.p99<=2': bad unit in '2'"), "bad target: exit %d, stderr: %s", ret, err);
	unsetenv("IOTIER_TARGET");

	setenv("IOTIER_TARGET", "read.p99<=2x", 1);
	setenv("IOTIER_DEBT_LOG", "*/LOG[", 1);
	ret = run_capturing_stderr(self, "untouched", err, sizeof(err));
	EXPECT(ret == 0 && count_lines(err) == 1 && strstr(err, "IOTIER_DEBT_LOG: bad glob "
	       "'*/LOG[': '[' at offset 5 is never closed"), "bad debt log: exit %d, stderr: %s",
	       ret, err);
	unsetenv("IOTIER_DEBT_LOG");
	unsetenv("IOTIER_TARGET");

	setenv("IOTIER_CONFIG", "/nonexistent/iotier.conf", 1);
	ret = run_capturing_stderr(self, "untouched", err, sizeof(err));
	EXPECT(ret == 0 && count_lines(err) == 1 && strstr(err, "/nonexistent/iotier.conf"),
	       "missing config file: exit %d, stderr: %s", ret, err);
	return test_result();
}

/* ---- rt: without the capability: one warning, and high threads keep their priority -- */

static int scenario_rt_denied(const char *self)
{
	struct passwd *nobody = getpwnam("nobody");
	char err[4096];
	int pipefd[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t child;

	if (geteuid() != 0)
		return test_skip("needs root to drop to an unprivileged user");
	if (!nobody)
		return test_skip("no user 'nobody'");
	if (pipe(pipefd) < 0)
		return T_EXIT_FAIL;
	child = fork();
	if (child == 0) {
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		if (setgid(nobody->pw_gid) || setuid(nobody->pw_uid))
			_exit(99);
		setenv("IOTIER_HIGH", "fg-*", 1);
		setenv("IOTIER_HIGH_CLASS", "rt:0", 1);
		execl(self, self, "rt-child", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (used + 1 < sizeof(err) && (n = read(pipefd[0], err + used, sizeof(err) - 1 - used)) > 0)
		used += (size_t)n;
	err[used] = '\0';
	close(pipefd[0]);
	waitpid(child, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rt child exit %d",
	       WEXITSTATUS(status));
	EXPECT(count_lines(err) == 1 && strstr(err, "needs CAP_SYS_ADMIN or CAP_SYS_NICE"),
	       "want one warning line about rt, got: %s", err);
	return test_result();
}

static int scenario_rt_child(void)
{
	/* Two high threads in a row: the warning must still be printed only once. */
	prctl(PR_SET_NAME, "fg-one", 0, 0, 0);
	do_io();
	if (prio_of(0) != 0)
		return 1;
	prctl(PR_SET_NAME, "other", 0, 0, 0);
	prctl(PR_SET_NAME, "fg-two", 0, 0, 0);
	do_io();
	return prio_of(0) == 0 ? 0 : 2;
}

/* ---- hold: named threads that wait, for `iotier threads` to look at ----------------- */

/*
 * Each thread does its I/O only after its creator has named it (named), and "ready" is
 * printed only once both have (tagged): `iotier threads` must find them tracked and tagged,
 * however the scheduler orders the threads on a loaded machine.
 */
static pthread_barrier_t hold_named, hold_tagged;

static void *hold_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&hold_named);
	do_io();
	pthread_barrier_wait(&hold_tagged);
	pause();
	return NULL;
}

static int scenario_hold(void)
{
	pthread_t bg, fg;
	char byte;

	pthread_barrier_init(&hold_named, NULL, 3);
	pthread_barrier_init(&hold_tagged, NULL, 3);
	pthread_create(&bg, NULL, hold_thread, NULL);
	pthread_setname_np(bg, "bg-hold");
	pthread_create(&fg, NULL, hold_thread, NULL);
	pthread_setname_np(fg, "fg-hold");
	pthread_barrier_wait(&hold_named);
	pthread_barrier_wait(&hold_tagged);
	printf("ready\n");
	fflush(stdout);
	/* Until the test closes our stdin. */
	while (read(0, &byte, 1) > 0)
		;
	return T_EXIT_PASS;
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "";
	int ret;

	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "libiotier"))
		return test_skip("libiotier.so is not preloaded");
	open_scratch();
	if (!strcmp(scenario, "naming"))
		ret = scenario_naming();
	else if (!strcmp(scenario, "rename-back"))
		ret = scenario_rename_back();
	else if (!strcmp(scenario, "process-rule"))
		ret = scenario_process_rule();
	else if (!strcmp(scenario, "fork-title"))
		ret = scenario_fork_title(argv);
	else if (!strcmp(scenario, "vfork"))
		ret = scenario_vfork();
	else if (!strcmp(scenario, "raw-fork"))
		ret = scenario_raw_fork();
	else if (!strcmp(scenario, "exec"))
		ret = scenario_exec(argv[0], NULL);
	else if (!strcmp(scenario, "long-cmdline")) {
		/* A command line over 4 KiB: cmdline: rules match its first 4 KiB. */
		static char arg[6000];

		memset(arg, 'x', sizeof(arg) - 1);
		ret = scenario_exec(argv[0], arg);
	}
	else if (!strcmp(scenario, "exec-child"))
		ret = scenario_exec_child();
	else if (!strcmp(scenario, "errno"))
		ret = scenario_errno();
	else if (!strcmp(scenario, "api"))
		ret = scenario_api();
	else if (!strcmp(scenario, "signals"))
		ret = scenario_signals();
	else if (!strcmp(scenario, "bad-config"))
		ret = scenario_bad_config(argv[0]);
	else if (!strcmp(scenario, "untouched"))
		ret = scenario_untouched();
	else if (!strcmp(scenario, "rt-denied"))
		ret = scenario_rt_denied(argv[0]);
	else if (!strcmp(scenario, "hold"))
		ret = scenario_hold();
	else if (!strcmp(scenario, "rt-child"))
		ret = scenario_rt_child();
	else {
		fprintf(stderr, "tier-probe: unknown scenario '%s'\n", scenario);
		ret = T_EXIT_FAIL;
	}
	close(scratch_fd);
	return ret;
}
