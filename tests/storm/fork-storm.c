// SPDX-License-Identifier: MIT
/*
 * Description: processes made from a multithreaded program in the middle of its I/O, under
 * the shim (IOTIER_LOW=low*). Four threads do I/O without pause, two named low* and two
 * not, each checking its own priority on every call, while the main thread makes
 * processes:
 *   fork   300 fork()s; each child audits its inherited thread table (only its own record
 *          left, no stale one), its descriptors and its tier after renaming itself low;
 *   spawn  100 each of vfork()+exec, posix_spawn() and a raw clone3() without atfork
 *          handlers; the vfork child renames itself before exec (in its parent's memory),
 *          the exec'd children and the clone3 child audit themselves as above.
 * At the end the parent's own table holds no stale record, no descriptor leaked, and every
 * thread kept exactly its tier throughout. Usage: fork-storm fork|spawn. Exit 0 pass,
 * 1 fail, 77 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slot_audit.h"
#include "storm_io.h"
#include "test_env.h"

#define IO_THREADS 4

extern char **environ;

static _Atomic int stop, started;
static int io_fd = -1, fds_before;
static const char *self;

static void do_io(void)
{
	storm_io(io_fd);
}

struct io_thread {
	pthread_t handle;
	char name[16];
	unsigned long calls, wrong;
};

static void *io_loop(void *arg)
{
	struct io_thread *t = arg;
	int want = !strncmp(t->name, "low", 3) ? IDLE : 0;

	prctl(PR_SET_NAME, t->name, 0, 0, 0);
	do_io();
	atomic_fetch_add(&started, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		do_io();
		t->calls++;
		t->wrong += prio_of_self() != want;
	}
	return NULL;
}

/*
 * In a new process: rename the calling (now only) thread low, do I/O, and check the tier,
 * the table and the descriptors. Returns the exit status for the parent to judge.
 */
static int child_audit(const char *name, int fds_expected)
{
	struct slot_audit audit;

	prctl(PR_SET_NAME, name, 0, 0, 0);
	do_io();
	if (prio_of_self() != IDLE)
		return 10;
	if (slot_audit_self(&audit) < 0 || !audit.found)
		return 11;
	if (audit.stale || audit.in_use > audit.live)
		return 12;
	if (fds_expected >= 0 && fd_count_self() != fds_expected)
		return 13;
	return 0;
}

/* The exec'd child (argv[1] == "child"): a fresh program under the shim, with a thread. */
static void *child_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "low-spawned-t", 0, 0, 0);
	do_io();
	return (void *)(intptr_t)(prio_of_self() == IDLE);
}

static int exec_child_main(void)
{
	pthread_t t;
	void *ok = NULL;

	io_fd = storm_scratch("storm-child");
	if (io_fd < 0)
		return 20;
	if (pthread_create(&t, NULL, child_thread, NULL) != 0)
		return 21;
	pthread_join(t, &ok);
	if (!ok)
		return 22;
	return child_audit("low-spawned", -1);
}

static void judge_child(pid_t pid, const char *how)
{
	int status;

	if (pid < 0) {
		EXPECT(0, "%s: %s", how, strerror(errno));
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "%s child %d: %s %d (10 tier, 11-12 table, 13 fds, 2x exec'd child)", how,
	       (int)pid, WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static pid_t fork_one(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(child_audit("low-forked", fds_before));
	return pid;
}

static pid_t vfork_one(void)
{
	char *const argv[] = { (char *)self, "child", NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		/* In the parent's memory until exec: this must not touch the parent's records. */
		prctl(PR_SET_NAME, "low-vforked", 0, 0, 0);
		execv(self, argv);
		_exit(127);
	}
	return pid;
}

static pid_t spawn_one(void)
{
	char *const argv[] = { (char *)self, "child", NULL };
	pid_t pid;
	int ret = posix_spawn(&pid, self, NULL, NULL, argv, environ);

	errno = ret;
	return ret ? -1 : pid;
}

static pid_t clone3_one(void)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	long pid = syscall(SYS_clone3, &args, sizeof(args)); /* no atfork handlers run */

	if (pid == 0)
		_exit(child_audit("low-clone3", fds_before));
	return (pid_t)pid;
}

static void audit_parent(struct io_thread *threads)
{
	struct slot_audit audit;

	for (int i = 0; i < IO_THREADS; i++) {
		EXPECT(threads[i].calls > 0, "thread '%s' did no I/O", threads[i].name);
		EXPECT(threads[i].wrong == 0, "thread '%s': wrong priority on %lu of %lu calls",
		       threads[i].name, threads[i].wrong, threads[i].calls);
	}
	EXPECT(slot_audit_self(&audit) == 0 && audit.found, "no thread table: shim not loaded?");
	EXPECT(audit.stale == 0, "%d of %d records in use belong to no live thread", audit.stale,
	       audit.in_use);
	if (audit.stale)
		slot_audit_print_stale();
	EXPECT(audit.in_use <= audit.live, "%d records in use for %d live threads", audit.in_use,
	       audit.live);
	EXPECT(fd_count_self() == fds_before, "%d descriptors open, %d before", fd_count_self(),
	       fds_before);
	do_io();
	EXPECT(prio_of_self() == 0, "main thread ioprio %#x after the storm, want untouched",
	       prio_of_self());
}

int main(int argc, char **argv)
{
	static struct io_thread threads[IO_THREADS];
	const char *mode = argc > 1 ? argv[1] : "";

	self = argv[0];
	if (!strcmp(mode, "child"))
		return exec_child_main();
	if (strcmp(mode, "fork") && strcmp(mode, "spawn")) {
		fprintf(stderr, "usage: fork-storm fork|spawn\n");
		return 2;
	}
	if (!getenv("LD_PRELOAD"))
		return test_skip("the shim is not preloaded");
	io_fd = storm_scratch("storm");
	if (io_fd < 0)
		return T_EXIT_FAIL;
	do_io();
	fds_before = fd_count_self();
	for (int i = 0; i < IO_THREADS; i++) {
		snprintf(threads[i].name, sizeof(threads[i].name), "%s-io-%d", i % 2 ? "low" : "fg", i);
		pthread_create(&threads[i].handle, NULL, io_loop, &threads[i]);
	}
	/*
	 * Until each thread has been renamed and tagged, the shim may hold a descriptor open
	 * for a moment (a /proc read), which a child forked then would inherit; steady I/O
	 * opens nothing.
	 */
	while (atomic_load(&started) < IO_THREADS)
		usleep(1000);
	if (!strcmp(mode, "fork")) {
		for (int i = 0; i < 300; i++)
			judge_child(fork_one(), "fork");
	} else {
		for (int i = 0; i < 100; i++) {
			judge_child(vfork_one(), "vfork+exec");
			judge_child(spawn_one(), "posix_spawn");
			judge_child(clone3_one(), "clone3");
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < IO_THREADS; i++)
		pthread_join(threads[i].handle, NULL);
	audit_parent(threads);
	printf("%s: %d failures\n", mode, atomic_load(&test_failures));
	return test_result();
}
