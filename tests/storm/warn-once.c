// SPDX-License-Identifier: MIT
/*
 * Description: a misconfiguration warns once per process tree, not once per forked
 * worker. Like PostgreSQL's autovacuum workers under a cmdline: rule, eight forked
 * children each become low (comm:storm-low) and each fails to create its cgroup, here
 * because the blkio hierarchy is mounted read-only in a private mount namespace. Stderr of
 * the whole tree must hold exactly one "cannot create cgroup" line, and every child must
 * still be tagged idle. Needs root and a cgroup v1 blkio hierarchy. Usage: warn-once.
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_env.h"

#define BLKIO "/sys/fs/cgroup/blkio"
#define WORKERS 8
#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)


/* The tree: fork workers that each turn low, as autovacuum workers do. */
static int run_tree(void)
{
	int bad = 0;

	for (int i = 0; i < WORKERS; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			char byte;

			prctl(PR_SET_NAME, "storm-low", 0, 0, 0);
			if (pread(0, &byte, 0, 0) < 0) /* one wrapped I/O call */
				byte = 0;
			_exit(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) == IDLE ? 0 : 1);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad++;
	}
	return bad ? 1 : 0;
}

/*
 * In a child created in a new mount namespace: make blkio read-only for it alone, then
 * become the tree with stderr on @fd. The namespace comes from clone(), not unshare():
 * unshare(CLONE_NEWNS) fails in a process with two threads, which a forked child of a
 * ThreadSanitizer build has (TSan restarts its own thread there). Nothing here allocates:
 * @envp was built before the clone.
 */
static void start_tree(const char *self, int fd, char **envp)
{
	char *const argv[] = { (char *)self, "tree", NULL };

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(BLKIO, BLKIO, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, BLKIO, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		_exit(3);
	dup2(fd, 2);
	execve(self, argv, envp);
	_exit(127);
}

/* The environment plus the tree's settings, which replace any of the same name. */
static char **tree_environment(void)
{
	static char *settings[] = { "IOTIER_LOW=comm:storm-low", "IOTIER_CGROUP=v1",
				    "IOTIER_LOG=warn" };
	extern char **environ;
	size_t n = 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 4, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "IOTIER_LOW=", 11) && strncmp(environ[i], "IOTIER_CGROUP=", 14) &&
		    strncmp(environ[i], "IOTIER_LOG=", 11))
			envp[k++] = environ[i];
	for (size_t i = 0; i < 3; i++)
		envp[k++] = settings[i];
	return envp;
}

int main(int argc, char **argv)
{
	char text[8192], *p, **envp;
	struct stat st;
	int fds[2], status, lines = 0;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "tree"))
		return run_tree();
	if (!getenv("LD_PRELOAD"))
		return test_skip("the shim is not preloaded");
	if (geteuid() != 0)
		return test_skip("needs root for a private read-only mount");
	if (stat(BLKIO "/tasks", &st) != 0)
		return test_skip("no cgroup v1 blkio hierarchy at " BLKIO);
	envp = tree_environment();
	if (!envp || pipe(fds) < 0)
		return T_EXIT_FAIL;
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		close(fds[0]);
		start_tree(argv[0], fds[1], envp);
	}
	if (pid < 0) {
		perror("clone(CLONE_NEWNS)");
		return T_EXIT_FAIL;
	}
	close(fds[1]);
	while (used < sizeof(text) - 1 && (n = read(fds[0], text + used, sizeof(text) - 1 - used)) > 0)
		used += (size_t)n;
	text[used] = '\0';
	waitpid(pid, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the tree's workers were not all tagged idle (exit %d)", WEXITSTATUS(status));
	for (p = text; (p = strstr(p, "cannot create cgroup")); p++)
		lines++;
	EXPECT(lines == 1, "%d 'cannot create cgroup' warnings from %d workers, want 1:\n%s",
	       lines, WORKERS, text);
	printf("%d warning line(s) from %d forked workers\n", lines, WORKERS);
	return test_result();
}
