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
#include <unistd.h>

#include "core/sys.h"

struct real_functions real;

static ssize_t raw_read(int fd, void *buf, size_t n)
{
	return sys_call(SYS_read, fd, buf, n);
}

static ssize_t raw_write(int fd, const void *buf, size_t n)
{
	return sys_call(SYS_write, fd, buf, n);
}

static ssize_t raw_pread(int fd, void *buf, size_t n, off_t off)
{
	return sys_call(SYS_pread64, fd, buf, n, off);
}

static ssize_t raw_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return sys_call(SYS_pwrite64, fd, buf, n, off);
}

static int raw_close(int fd)
{
	return (int)sys_call(SYS_close, fd);
}

static int raw_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)sys_call(SYS_execve, path, argv, envp);
}

static int raw_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return (int)sys_call(SYS_openat, dirfd, path, flags, mode);
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
		real.read = raw_read;
	if (!real.write)
		real.write = raw_write;
	if (!real.pread)
		real.pread = raw_pread;
	if (!real.pwrite)
		real.pwrite = raw_pwrite;
	if (!real.close)
		real.close = raw_close;
	if (!real.openat)
		real.openat = raw_openat;
	if (!real.execve)
		real.execve = raw_execve;
	resolve_sanitizer();
}

void real_resolve(void)
{
	pthread_once(&resolve_once, resolve_all);
}
