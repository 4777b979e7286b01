// SPDX-License-Identifier: MIT
/*
 * wrap_fd.c: the life of a file descriptor, open() to close(). An open tells the per-fd
 * tables what the fd is (a thread's comm file for naming, a path for the low paths); a
 * close resets all of them, in the one list of fd_tables_closing(). A number also comes to
 * name another file without open or close: dup, dup2, dup3, fcntl(F_DUPFD*) give it a
 * copy of another fd (closing what it named), close_range and closefrom close many at
 * once. Those are followed too, so that a kind found once (a storage file, held at the
 * adaptive gate) never outlives the file: a pipe dup2()ed over it would otherwise hold a
 * gate slot for as long as its read blocks. Not followed, and so able to leave a number's
 * entry stale until its next open or close: raw syscalls (syscall(), inline), and fds
 * opened or closed by io_uring (IORING_OP_OPENAT, IORING_OP_CLOSE, fixed-fd installs).
 * Registered (fixed) files are named by index, never by fd number, so none of the tables
 * describes them. The shim's own long-held fd, the adaptive region's, is checked by dev and
 * inode before each use (adaptive_tree.c), so a program that closes or replaces it cannot
 * mislead the shim.
 */
/*
 * We define both open and open64 (creat and creat64, ...); meson's -D_FILE_OFFSET_BITS=64
 * would make the headers rename our open into open64. On LP64 both are the same ABI.
 */
#undef _FILE_OFFSET_BITS

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wrap_naming.h"
#include "wrap_uring.h"
#include "core/sys.h"
#include "preload/preload.h"

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
		comm_fd_forget(fd);          /* wrap_naming.h: a /proc/.../comm fd */
	if (likely(!in_shim)) {
		low_paths_before_close(fd);  /* low_paths.h: writeback steering, drop-behind */
		uring_fd_closing(fd);        /* wrap_uring.c: a raw io_uring ring's mapping */
	}
}

EXPORT int close(int fd)
{
	fd_tables_closing(fd);
	return REAL(close)(fd);
}

/* ---- numbers reused without open or close ------------------------------------------ */

/*
 * @fd now names a file the shim did not see opened (a dup): whatever a table knew about the
 * number is of the file it named before. Kinds are found again on first use. errno kept.
 */
static void fd_tables_reused(int fd)
{
	int saved = errno;

	if (fd < 0 || in_shim)
		return;
	if (unlikely(comm_fd_watched(fd)))
		comm_fd_forget(fd);
	uring_fd_closing(fd);
	low_paths_after_open(fd, NULL); /* no path: no drop-behind, the kind unknown */
	errno = saved;
}

/*
 * dup2 or dup3 is about to make @newfd a copy of @oldfd, closing what @newfd named: that
 * close is a close (a drop-behind log is written back and dropped), but only when the call
 * can succeed, so that a failing one (a bad @oldfd) loses nothing. One fcntl syscall.
 */
static void fd_replacing(int oldfd, int newfd)
{
	int saved;

	if (oldfd == newfd || newfd < 0 || in_shim)
		return;
	saved = errno;
	if (sys_call(SYS_fcntl, oldfd, F_GETFD) >= 0)
		fd_tables_closing(newfd);
	errno = saved;
}

EXPORT int dup(int oldfd)
{
	int fd = REAL(dup) ? REAL(dup)(oldfd) : (int)sys_call(SYS_dup, oldfd);

	fd_tables_reused(fd);
	return fd;
}

/* dup2(fd, fd) changes nothing and keeps what the tables know. */
EXPORT int dup2(int oldfd, int newfd)
{
	int fd;

	fd_replacing(oldfd, newfd);
	fd = REAL(dup2) ? REAL(dup2)(oldfd, newfd) : (int)sys_call(SYS_dup2, oldfd, newfd);
	if (fd >= 0 && oldfd != newfd)
		fd_tables_reused(fd);
	return fd;
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int fd;

	fd_replacing(oldfd, newfd);
	fd = REAL(dup3) ? REAL(dup3)(oldfd, newfd, flags)
			: (int)sys_call(SYS_dup3, oldfd, newfd, flags);
	fd_tables_reused(fd);
	return fd;
}

/* After a successful fcntl: a new number (F_DUPFD*), or new status flags (O_DIRECT). */
static int fcntl_followed(int ret, int fd, int cmd)
{
	if (ret < 0 || in_shim)
		return ret;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		fd_tables_reused(ret);
	else if (cmd == F_SETFL)
		low_paths_flags_set(fd);
	return ret;
}

/*
 * fcntl's third argument is an int, a pointer or nothing, by command; like libc's own
 * fcntl, it is read as a pointer (one register on LP64) and passed on as it came.
 */
#define FCNTL_ARG(cmd, arg)                                                                 \
	do {                                                                                \
		va_list ap;                                                                 \
                                                                                            \
		va_start(ap, cmd);                                                          \
		(arg) = va_arg(ap, void *);                                                 \
		va_end(ap);                                                                 \
	} while (0)

EXPORT int fcntl(int fd, int cmd, ...)
{
	void *arg;

	FCNTL_ARG(cmd, arg);
	return fcntl_followed(REAL(fcntl) ? REAL(fcntl)(fd, cmd, arg)
					  : (int)sys_call(SYS_fcntl, fd, cmd, arg), fd, cmd);
}

/* What -D_FILE_OFFSET_BITS=64 programs call (glibc 2.28 and later); fcntl's twin on LP64. */
EXPORT int fcntl64(int fd, int cmd, ...)
{
	int (*real_fcntl)(int, int, ...) = REAL(fcntl64) ? real.fcntl64 : REAL(fcntl);
	void *arg;

	FCNTL_ARG(cmd, arg);
	return fcntl_followed(real_fcntl ? real_fcntl(fd, cmd, arg)
					 : (int)sys_call(SYS_fcntl, fd, cmd, arg), fd, cmd);
}

/*
 * close_range and closefrom close every open fd of a range as close would. The walk ends
 * where every table is empty: past the comm and ring tables (1024 and 4096 entries) and the
 * highest fd the low paths ever classified: about 8 us for closefrom(3) in a program
 * with a few hundred fds, measured here (100 us for all PATH_FD_MAX entries).
 */
static void fd_range_closing(unsigned first, unsigned last)
{
	unsigned end = atomic_load(&fd_paths_end);

	if (in_shim)
		return;
	if (end < RING_FD_MAX)
		end = RING_FD_MAX;
	_Static_assert(COMM_FD_MAX <= RING_FD_MAX, "the walk covers the comm table");
	for (unsigned fd = first; fd < end && fd <= last; fd++)
		fd_tables_closing((int)fd);
}

/*
 * CLOSE_RANGE_CLOEXEC closes nothing. With CLOSE_RANGE_UNSHARE the caller closes them in
 * a table of its own, while its other threads keep theirs: the entries are forgotten all
 * the same, which only makes the shim find the kinds again. Flags the kernel would refuse
 * (EINVAL) forget nothing.
 */
EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (first <= last && !(flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) &&
	    !(flags & CLOSE_RANGE_CLOEXEC))
		fd_range_closing(first, last);
	return REAL(close_range) ? REAL(close_range)(first, last, flags)
				 : (int)sys_call(SYS_close_range, first, last, flags);
}

/*
 * glibc's closefrom calls its internal close_range, which the wrapper above never sees. It
 * takes a negative @lowfd as 0.
 */
EXPORT void closefrom(int lowfd)
{
	unsigned first = lowfd < 0 ? 0 : (unsigned)lowfd;

	fd_range_closing(first, ~0u);
	if (REAL(closefrom))
		REAL(closefrom)(lowfd);
	else
		sys_call(SYS_close_range, first, ~0u, 0);
}

__typeof__(open) open64 __attribute__((alias("open"), visibility("default")));
__typeof__(openat) openat64 __attribute__((alias("openat"), visibility("default")));
__typeof__(__open_2) __open64_2 __attribute__((alias("__open_2"), visibility("default")));
__typeof__(__openat_2) __openat64_2 __attribute__((alias("__openat_2"), visibility("default")));
__typeof__(creat) creat64 __attribute__((alias("creat"), visibility("default")));
__typeof__(fopen) fopen64 __attribute__((alias("fopen"), visibility("default")));
