// SPDX-License-Identifier: MIT
/*
 * wrap_fd.c: the life of a file descriptor, open() to close(). An open tells the per-fd
 * tables what the fd is (a thread's comm file for naming, a path for the low paths); a
 * close resets all of them, in the one list of fd_tables_closing().
 */
/*
 * We define both open and open64 (creat and creat64, ...); meson's -D_FILE_OFFSET_BITS=64
 * would make the headers rename our open into open64. On LP64 both are the same ABI.
 */
#undef _FILE_OFFSET_BITS

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "adaptive_hook.h"
#include "low_paths.h"
#include "naming.h"
#include "real.h"

#define EXPORT __attribute__((visibility("default")))

static int open_needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int writable(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

/* open() and openat() take a mode only with O_CREAT or O_TMPFILE; fetch it then. */
#define OPEN_MODE(flags, mode)                                                              \
	do {                                                                                \
		va_list ap;                                                                 \
                                                                                            \
		if (open_needs_mode(flags)) {                                               \
			va_start(ap, flags);                                                \
			(mode) = va_arg(ap, mode_t);                                        \
			va_end(ap);                                                         \
		}                                                                           \
	} while (0)

/*
 * Tell the per-fd tables about a new fd of the program's (the counterpart of
 * fd_tables_closing). A comm file is recognised by its absolute path only; a relative path
 * is matched against the drop-behind globs as given.
 */
static void fd_tables_opened(int fd, const char *path, int writable)
{
	if (fd < 0 || in_shim)
		return;
	if (writable >= 0 && path[0] == '/')
		comm_fd_opened(fd, path, writable);
	low_paths_after_open(fd, path);
	adaptive_hook_opened(fd, path, writable != 0);
}

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	fd = REAL(open)(path, flags, mode);
	fd_tables_opened(fd, path, writable(flags));
	return fd;
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	fd = REAL(openat)(dirfd, path, flags, mode);
	fd_tables_opened(fd, path, writable(flags));
	return fd;
}

/* creat() opens through libc's internal open: a drop-behind log may be created this way. */
EXPORT int creat(const char *path, mode_t mode)
{
	int fd = REAL(creat) ? REAL(creat)(path, mode)
			     : REAL(open)(path, O_CREAT | O_WRONLY | O_TRUNC, mode);

	fd_tables_opened(fd, path, -1); /* -1: not a comm file */
	return fd;
}

/* _FORTIFY_SOURCE versions, used when the flags are not a compile-time constant. */
EXPORT int __open_2(const char *path, int flags)
{
	int fd = REAL(__open_2) ? REAL(__open_2)(path, flags) : REAL(open)(path, flags);

	fd_tables_opened(fd, path, writable(flags));
	return fd;
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int fd = REAL(__openat_2) ? REAL(__openat_2)(dirfd, path, flags)
				  : REAL(openat)(dirfd, path, flags);

	fd_tables_opened(fd, path, writable(flags));
	return fd;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	FILE *fp = REAL(fopen)(path, mode);

	if (fp && mode)
		fd_tables_opened(fileno(fp), path, strpbrk(mode, "wa+") != NULL);
	return fp;
}

EXPORT int fflush(FILE *fp)
{
	int ret = REAL(fflush)(fp), fd;

	if (fp && !in_shim && (fd = fileno(fp)) >= 0 && comm_fd_watched(fd)) {
		int saved = errno;

		comm_fd_written(fd);
		errno = saved;
	}
	return ret;
}

EXPORT int fclose(FILE *fp)
{
	int fd = fp ? fileno(fp) : -1, watched = fd >= 0 && comm_fd_watched(fd), ret;
	int flush_err = 0;
	pid_t named = 0;

	if (fd >= 0 && !in_shim && (unsigned)fd < PATH_FD_MAX &&
	    (atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed) & FD_DROP)) {
		int saved = errno;

		/*
		 * stdio's own writes: the drop at close must see their pages. A failed flush
		 * is the program's write error (ENOSPC on a full log disk): fclose would have
		 * reported it, and after this flush its own flush finds nothing left to fail.
		 */
		if (REAL(fflush)(fp) != 0)
			flush_err = errno ? errno : EIO;
		errno = saved;
	}
	if (fd >= 0 && !in_shim)
		low_paths_before_close(fd);
	/*
	 * Forget the fd before the real fclose frees its number: once it is free, another
	 * thread may open its own comm file under the same number, and forgetting after would
	 * wipe that thread's entry.
	 */
	if (watched) {
		named = atomic_load(&comm_fd_tid[fd]);
		comm_fd_forget(fd);
	}
	ret = REAL(fclose)(fp); /* stdio writes the buffered name here, through libc's own write */
	if (flush_err && ret == 0) {
		ret = EOF;
		errno = flush_err;
	}
	if (named > 0 && !in_shim) {
		int saved = errno;

		comm_tid_written(named);
		errno = saved;
	}
	return ret;
}

/*
 * Every per-fd table of the shim, in one list: an fd number being closed may be reused by
 * the next open, so each table forgets it first. A new table gets its line here. The
 * shim's own closes (in_shim) keep the low paths and rings: those are the program's fds.
 */
static inline void fd_tables_closing(int fd)
{
	if (unlikely(comm_fd_watched(fd)))
		comm_fd_forget(fd);          /* naming.h: a /proc/.../comm fd */
	if (likely(!in_shim)) {
		low_paths_before_close(fd);  /* low_paths.h: writeback steering, drop-behind */
		uring_fd_closing(fd);        /* wrap_async.c: a raw io_uring ring's mapping */
	}
}

EXPORT int close(int fd)
{
	fd_tables_closing(fd);
	return REAL(close)(fd);
}

__typeof__(open) open64 __attribute__((alias("open"), visibility("default")));
__typeof__(openat) openat64 __attribute__((alias("openat"), visibility("default")));
__typeof__(__open_2) __open64_2 __attribute__((alias("__open_2"), visibility("default")));
__typeof__(__openat_2) __openat64_2 __attribute__((alias("__openat_2"), visibility("default")));
__typeof__(creat) creat64 __attribute__((alias("creat"), visibility("default")));
__typeof__(fopen) fopen64 __attribute__((alias("fopen"), visibility("default")));
