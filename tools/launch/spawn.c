// SPDX-License-Identifier: MIT
/*
 * spawn.c: start the command under the shim, at once or held on a pipe (see spawn.h).
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_place.h"
#include "cli/cli.h"

int spawn_exec(char **argv, const struct config *place_cfg)
{
	/* --cgroup-weight: the command is low as a whole, from its first instruction. */
	if (place_cfg)
		cgroup_place_before_exec(place_cfg);
	execvp(argv[0], argv);
	return errno;
}

int spawn_exec_status(int err)
{
	return err == ENOENT ? 127 : 126;
}

/* "iotier NAME: WHAT: strerror(errno)", as perror(3) says it. */
static void name_perror(const char *name, const char *what)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "iotier %s: %s", name, what);
	perror(prefix);
}

/* The child: wait for the byte, then exec; an exec that fails sends its errno back. */
static void __attribute__((noreturn)) held_child(const struct spawn *s, char **argv,
						  const struct config *place_cfg)
{
	char c;
	int err;

	signal(SIGINT, SIG_DFL);
	/* EOF without a byte: the parent could not start tracing. */
	if (read(s->go, &c, 1) != 1)
		_exit(126);
	err = spawn_exec(argv, place_cfg);
	if (write(s->exec_err, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(spawn_exec_status(err));
}

int spawn_held(struct spawn *s, const char *name, char **argv, const struct config *place_cfg)
{
	int go[2], exec_err[2];

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(exec_err, O_CLOEXEC) < 0) {
		name_perror(name, "pipe");
		return -1;
	}
	s->pid = fork();
	if (s->pid < 0) {
		name_perror(name, "fork");
		return -1;
	}
	if (s->pid == 0) {
		close(go[1]);
		close(exec_err[0]);
		s->go = go[0];
		s->exec_err = exec_err[1];
		held_child(s, argv, place_cfg);
	}
	close(go[0]);
	close(exec_err[1]);
	s->go = go[1];
	s->exec_err = exec_err[0];
	return 0;
}

pid_t spawn_release(struct spawn *s, const char *name, char **argv, int *status)
{
	int err = 0;

	if (write(s->go, "g", 1) != 1)
		name_perror(name, "write");
	close(s->go);
	if (read(s->exec_err, &err, sizeof(err)) == (ssize_t)sizeof(err)) {
		error_line(name, "cannot run '%s': %s", argv[0], strerror(err));
		close(s->exec_err);
		waitpid(s->pid, NULL, 0);
		*status = spawn_exec_status(err);
		return -1;
	}
	close(s->exec_err);
	return s->pid;
}

void spawn_abandon(struct spawn *s)
{
	close(s->go);
	close(s->exec_err);
	waitpid(s->pid, NULL, 0);
}
