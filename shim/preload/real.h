/* SPDX-License-Identifier: MIT */
/*
 * real.h: the libc (or libaio, liburing) functions the shim wraps, resolved with
 * dlsym(RTLD_NEXT) once under pthread_once, and again lazily when a wrapper runs before the
 * constructor. The list is one X-macro so that a new wrapper is one line here.
 */
#ifndef IOTIER_REAL_H
#define IOTIER_REAL_H

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "core/compiler.h"

/* Types of wrapped io_uring and libaio functions: only pointers to them pass through here. */
struct io_uring;
struct io_uring_params;
struct io_uring_cqe;
struct __kernel_timespec;
struct iocb;

/* X(name, return type, parameter list) */
#define REAL_FUNCTIONS(X)                                                                   \
	X(read, ssize_t, (int, void *, size_t))                                             \
	X(write, ssize_t, (int, const void *, size_t))                                      \
	X(pread, ssize_t, (int, void *, size_t, off_t))                                     \
	X(pwrite, ssize_t, (int, const void *, size_t, off_t))                              \
	X(readv, ssize_t, (int, const struct iovec *, int))                                 \
	X(writev, ssize_t, (int, const struct iovec *, int))                                \
	X(preadv, ssize_t, (int, const struct iovec *, int, off_t))                         \
	X(pwritev, ssize_t, (int, const struct iovec *, int, off_t))                        \
	X(preadv2, ssize_t, (int, const struct iovec *, int, off_t, int))                   \
	X(pwritev2, ssize_t, (int, const struct iovec *, int, off_t, int))                  \
	X(__read_chk, ssize_t, (int, void *, size_t, size_t))                               \
	X(__pread_chk, ssize_t, (int, void *, size_t, off_t, size_t))                       \
	X(fsync, int, (int))                                                                \
	X(fdatasync, int, (int))                                                            \
	X(syncfs, int, (int))                                                               \
	X(sync_file_range, int, (int, off_t, off_t, unsigned int))                          \
	X(fallocate, int, (int, int, off_t, off_t))                                         \
	X(posix_fallocate, int, (int, off_t, off_t))                                        \
	X(posix_fadvise, int, (int, off_t, off_t, int))                                     \
	X(copy_file_range, ssize_t, (int, off_t *, int, off_t *, size_t, unsigned int))     \
	X(sendfile, ssize_t, (int, int, off_t *, size_t))                                   \
	X(splice, ssize_t, (int, off_t *, int, off_t *, size_t, unsigned int))              \
	X(open, int, (const char *, int, ...))                                              \
	X(openat, int, (int, const char *, int, ...))                                       \
	X(__open_2, int, (const char *, int))                                               \
	X(creat, int, (const char *, mode_t))                                               \
	X(__openat_2, int, (int, const char *, int))                                        \
	X(close, int, (int))                                                                \
	X(dup, int, (int))                                                                  \
	X(dup2, int, (int, int))                                                            \
	X(dup3, int, (int, int, int))                                                       \
	X(fcntl, int, (int, int, ...))                                                      \
	X(fcntl64, int, (int, int, ...))                                                    \
	X(close_range, int, (unsigned, unsigned, int))                                      \
	X(closefrom, void, (int))                                                           \
	X(fopen, FILE *, (const char *, const char *))                                      \
	X(fclose, int, (FILE *))                                                            \
	X(fflush, int, (FILE *))                                                            \
	X(prctl, int, (int, unsigned long, unsigned long, unsigned long, unsigned long))    \
	X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
	X(pthread_setname_np, int, (pthread_t, const char *))                              \
	X(syscall, long, (long, ...))                                                       \
	X(io_submit, int, (unsigned long, long, struct iocb **))                            \
	X(io_uring_submit, int, (struct io_uring *))                                        \
	X(io_uring_submit_and_wait, int, (struct io_uring *, unsigned))                     \
	X(io_uring_submit_and_wait_timeout, int, (struct io_uring *, struct io_uring_cqe **, \
						  unsigned, struct __kernel_timespec *,    \
						  sigset_t *))                               \
	X(io_uring_submit_and_get_events, int, (struct io_uring *))                         \
	X(io_uring_queue_init, int, (unsigned, struct io_uring *, unsigned))                \
	X(io_uring_queue_init_params, int, (unsigned, struct io_uring *,                    \
					    struct io_uring_params *))                      \
	X(io_uring_queue_exit, void, (struct io_uring *))                                   \
	X(io_uring_setup, int, (unsigned, struct io_uring_params *))                        \
	X(io_uring_enter, int, (unsigned, unsigned, unsigned, unsigned, sigset_t *))        \
	X(io_uring_enter2, int, (unsigned, unsigned, unsigned, unsigned, sigset_t *, size_t)) \
	X(execve, int, (const char *, char *const *, char *const *))                        \
	X(execvpe, int, (const char *, char *const *, char *const *))                       \
	X(fexecve, int, (int, char *const *, char *const *))                                \
	X(execveat, int, (int, const char *, char *const *, char *const *, int))            \
	X(posix_spawn, int, (pid_t *, const char *, const posix_spawn_file_actions_t *,     \
			     const posix_spawnattr_t *, char *const *, char *const *))      \
	X(posix_spawnp, int, (pid_t *, const char *, const posix_spawn_file_actions_t *,    \
			      const posix_spawnattr_t *, char *const *, char *const *))

struct real_functions {
#define X(name, ret, params) ret(*name) params;
	REAL_FUNCTIONS(X)
#undef X
};

extern struct real_functions real SHIM_HIDDEN;

SHIM_HIDDEN void real_resolve(void);

/*
 * What starts a thread the shim tracks: the real pthread_create, or in a ThreadSanitizer
 * build TSan's interceptor, so that TSan knows the thread before our trampoline runs.
 */
extern int (*real_tracked_pthread_create)(pthread_t *, const pthread_attr_t *,
					  void *(*)(void *), void *) SHIM_HIDDEN;

/* The real function, resolving first if a wrapper runs before the constructor. */
#define REAL(name) (likely(real.name != NULL) ? real.name : (real_resolve(), real.name))

#endif
