// SPDX-License-Identifier: MIT
/*
 * run_capture.c: fork, exec, read the child's output to EOF, then reap it. Reading to EOF
 * before waiting matters: a child that fills the pipe would otherwise never exit.
 */
#include "run_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_all(int fd, char *out, size_t size)
{
	char drop[4096];
	size_t len = 0;
	ssize_t r;

	for (;;) {
		bool full = len + 1 >= size;

		r = full ? read(fd, drop, sizeof(drop)) : read(fd, out + len, size - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (!full)
			len += (size_t)r;
	}
	out[len] = '\0';
}

int run_capture(const char *const *argv, char *out, size_t size, int (*before_exec)(void))
{
	int pipefd[2] = { -1, -1 }, status;
	pid_t pid;

	if (out && (!size || pipe2(pipefd, O_CLOEXEC) < 0))
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out) {
			close(pipefd[0]);
			close(pipefd[1]);
		}
		return -1;
	}
	if (pid == 0) {
		if (out) {
			dup2(pipefd[1], 1);
			dup2(pipefd[1], 2);
		}
		if (before_exec && before_exec())
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (out) {
		close(pipefd[1]);
		read_all(pipefd[0], out, size);
		close(pipefd[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_as_nobody(void)
{
	return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534);
}
