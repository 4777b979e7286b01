/* SPDX-License-Identifier: MIT */
/*
 * sys.h: the shim's system layer, the bottom of its layers (docs/shim.md). Every raw
 * syscall the shim makes goes through sys_call(), which enters the kernel itself: it never
 * goes through a symbol the shim exports, so the shim's own syscall() wrapper
 * (wrap/wrap_syscall.c), read() or close() cannot catch the shim's internal calls, and nothing
 * here depends on the rest of the shim. Plus the small file helpers, which use no malloc
 * and no stdio: they run before the wrappers are ready, in I/O paths and signal handlers.
 * This file and sys.c include nothing of the shim but compiler.h and log.h's level names.
 */
#ifndef IOTIER_SYS_H
#define IOTIER_SYS_H

#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "compiler.h"

/* A syscall with up to six arguments, as syscall(2) behaves: -1 with errno on error. */
SHIM_HIDDEN long sys_call6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/* sys_call(SYS_x, args...): the unused arguments are passed as 0. */
#define sys_call(...) SYS_CALL_PAD_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#define SYS_CALL_PAD_(nr, a, b, c, d, e, f, ...)                                            \
	sys_call6((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

SHIM_HIDDEN pid_t sys_gettid(void);
SHIM_HIDDEN pid_t sys_getpid(void);
SHIM_HIDDEN int sys_ioprio_get(pid_t tid);
SHIM_HIDDEN int sys_ioprio_set(pid_t tid, int ioprio);
/* The calling thread's name (PR_GET_NAME), NUL-padded to 16 bytes. */
SHIM_HIDDEN void sys_get_own_name(char name[16]);
SHIM_HIDDEN int sys_close(int fd);

/*
 * Read a whole small file into @buf with a NUL: 0, or -errno (-EFBIG when it does not fit).
 * EINTR is retried.
 */
SHIM_HIDDEN int sys_read_file(const char *path, char *buf, size_t len);

/*
 * Read up to @len - 1 bytes from the open @fd into @buf with a NUL: the length; a failed
 * read keeps what came before it and leaves its errno in *@read_errno (0 when none failed).
 */
SHIM_HIDDEN long sys_read_fd(int fd, char *buf, size_t len, int *read_errno);

/* Read up to @len - 1 bytes of @path into @buf with a NUL: the length, or -errno. */
SHIM_HIDDEN long sys_read_text(const char *path, char *buf, size_t len);

/* Write @text to the existing file @path in one write(2): 0, or -errno. */
SHIM_HIDDEN int sys_write_text(const char *path, const char *text);

/*
 * Write @v in decimal into @out with a NUL (at most SYS_DECIMAL_MAX bytes): the number of
 * digits. The one number formatter of the shim: no malloc, no stdio, no locale, so it is
 * safe in a signal handler and before the wrappers are ready.
 */
#define SYS_DECIMAL_MAX 21 /* the 20 digits of UINT64_MAX and the NUL */
SHIM_HIDDEN size_t sys_decimal(unsigned long long v, char *out);

#endif
