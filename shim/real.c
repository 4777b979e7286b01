// SPDX-License-Identifier: MIT
/*
 * real.c: find the next definition of every wrapped function. A function libc always has
 * but dlsym could not find (a broken link map) falls back to the raw syscall, so the host
 * keeps working; an optional one (from a library the program does not use) stays NULL and
 * its wrapper fails with ENOSYS, which is what the program would see without the library.
 */
#include "real.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

struct real_functions real;

static ssize_t sys_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

static ssize_t sys_write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

static ssize_t sys_pread(int fd, void *buf, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, buf, n, off);
}

static ssize_t sys_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return syscall(SYS_pwrite64, fd, buf, n, off);
}

static int sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static int sys_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define __SANITIZE_THREAD__ 1
#endif
#endif

int (*real_tracked_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				   void *);

/*
 * In a ThreadSanitizer build of the shim preloaded into an uninstrumented program, libtsan
 * comes after libc in the lookup order, so RTLD_NEXT finds libc's pthread_create, and a
 * thread started there would run our (instrumented) trampoline before TSan knows the
 * thread. Tracked threads start through TSan's interceptor instead; the threads TSan
 * starts itself from there come back to our wrapper under in_shim and go to libc.
 */
static void resolve_sanitizer(void)
{
	real_tracked_pthread_create = real.pthread_create;
#ifdef __SANITIZE_THREAD__
	void *tsan = dlsym(RTLD_DEFAULT, "__interceptor_pthread_create");

	if (tsan)
		real_tracked_pthread_create = (__typeof__(real_tracked_pthread_create))tsan;
#endif
}

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve_all(void)
{
#define X(name, ret, params) real.name = (ret(*) params)dlsym(RTLD_NEXT, #name);
	REAL_FUNCTIONS(X)
#undef X
	/* Never NULL for the calls every program makes, even if dlsym failed. */
	if (!real.read)
		real.read = sys_read;
	if (!real.write)
		real.write = sys_write;
	if (!real.pread)
		real.pread = sys_pread;
	if (!real.pwrite)
		real.pwrite = sys_pwrite;
	if (!real.close)
		real.close = sys_close;
	if (!real.openat)
		real.openat = sys_openat;
	resolve_sanitizer();
}

void real_resolve(void)
{
	pthread_once(&resolve_once, resolve_all);
}
