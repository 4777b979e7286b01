/* SPDX-License-Identifier: MIT */
/*
 * real.h: the libc (or libaio, liburing) functions the shim wraps, resolved with
 * dlsym(RTLD_NEXT) once under pthread_once, and again lazily when a wrapper runs before the
 * constructor. The list is one X-macro so that a new wrapper is one line here.
 */
#ifndef IOTIER_REAL_H
#define IOTIER_REAL_H

#include <pthread.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "shim.h"

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
	X(copy_file_range, ssize_t, (int, off_t *, int, off_t *, size_t, unsigned int))     \
	X(sendfile, ssize_t, (int, int, off_t *, size_t))                                   \
	X(splice, ssize_t, (int, off_t *, int, off_t *, size_t, unsigned int))              \
	X(open, int, (const char *, int, ...))                                              \
	X(openat, int, (int, const char *, int, ...))                                       \
	X(__open_2, int, (const char *, int))                                               \
	X(__openat_2, int, (int, const char *, int))                                        \
	X(close, int, (int))                                                                \
	X(fopen, FILE *, (const char *, const char *))                                      \
	X(fclose, int, (FILE *))                                                            \
	X(fflush, int, (FILE *))                                                            \
	X(prctl, int, (int, unsigned long, unsigned long, unsigned long, unsigned long))    \
	X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
	X(pthread_setname_np, int, (pthread_t, const char *))

struct real_functions {
#define X(name, ret, params) ret(*name) params;
	REAL_FUNCTIONS(X)
#undef X
};

extern struct real_functions real SHIM_HIDDEN;

SHIM_HIDDEN void real_resolve(void);

/* The real function, resolving first if a wrapper runs before the constructor. */
#define REAL(name) (likely(real.name != NULL) ? real.name : (real_resolve(), real.name))

#endif
