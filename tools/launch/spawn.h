/* SPDX-License-Identifier: MIT */
/*
 * spawn.h: start the command a subcommand runs under the shim. `iotier run` becomes the
 * command (spawn_exec); `iotier check` must hold it between fork and exec, because its
 * tracers have to know the pid before the first I/O, and the first I/O may be the exec
 * itself: the child waits for one byte on a pipe (spawn_held), and a second pipe, closed by
 * a successful exec, brings back the errno of one that failed (spawn_release).
 */
#ifndef IOTIER_SPAWN_H
#define IOTIER_SPAWN_H

#include <sys/types.h>

#include "core/core.h"

/* A command forked and held before its exec. */
struct spawn {
	pid_t pid;
	int go;       /* one byte lets the child exec; EOF without one makes it exit 126 */
	int exec_err; /* the child's errno when its exec failed; EOF when it succeeded */
};

/*
 * The last steps of starting @argv: into its low cgroup first when @place_cfg is given
 * (--cgroup-weight, cgroup_place.h), then execvp. Returns only on failure, with the errno.
 */
int spawn_exec(char **argv, const struct config *place_cfg);

/* The exit status of a command whose exec failed with @err: 127 not found, else 126. */
int spawn_exec_status(int err);

/*
 * Fork @argv held before its exec (see spawn_exec for @place_cfg); the child gets SIGINT's
 * default back. 0, or -1 after a perror line for subcommand @name.
 */
int spawn_held(struct spawn *s, const char *name, char **argv, const struct config *place_cfg);

/*
 * Let the held command exec. Its pid; or -1 after one line for @name saying why it could not
 * run, the child reaped and its exit status (126 or 127) in @status.
 */
pid_t spawn_release(struct spawn *s, const char *name, char **argv, int *status);

/* Give up on the held command: it exits 126 without running, and is reaped. */
void spawn_abandon(struct spawn *s);

#endif
