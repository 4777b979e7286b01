/* SPDX-License-Identifier: MIT */
/*
 * wrap_naming.h: (wrap_naming.c) how the shim learns that a thread changed its name through a write to
 * /proc/.../comm. Opening such a file for writing records the fd and the thread it names;
 * write(), fflush() and fclose() on a recorded fd then re-read that thread's name.
 */
#ifndef IOTIER_NAMING_H
#define IOTIER_NAMING_H

#include <stdatomic.h>
#include <sys/types.h>

#include "core/compiler.h"

#define COMM_FD_MAX 1024 /* fds above this are not watched; comm files are opened early */

extern _Atomic pid_t comm_fd_tid[COMM_FD_MAX] SHIM_HIDDEN;

static inline int comm_fd_watched(int fd)
{
	return (unsigned)fd < COMM_FD_MAX &&
	       atomic_load_explicit(&comm_fd_tid[fd], memory_order_relaxed) != 0;
}

/* wrap_fd.c opened @fd on @path: watch it if it is a writable comm file of this process. */
SHIM_HIDDEN void comm_fd_opened(int fd, const char *path, int writable);

/* A watched @fd is being closed: stop watching it. */
SHIM_HIDDEN void comm_fd_forget(int fd);

/* The name behind @fd may have changed: read it back and re-evaluate that thread. */
SHIM_HIDDEN void comm_fd_written(int fd);
/* The same for thread @tid, once its comm fd is closed (0 or less: nothing to do). */
SHIM_HIDDEN void comm_tid_written(pid_t tid);

#endif
