// SPDX-License-Identifier: MIT
/*
 * wrap_io.c: the I/O entry points that databases call (RocksDB, PostgreSQL, MySQL), each a
 * pass-through to the real function after shim_io_prologue(). The prologue only acts when
 * something changed, so in the steady state a wrapper adds no syscall, lock or allocation,
 * and it never touches the return value or errno of the real call. Reads and writes then
 * tell the low paths what moved; only low threads (and drop-behind files) do more there.
 */
/*
 * We define both pread and pread64 (open and open64, ...); meson's -D_FILE_OFFSET_BITS=64
 * would make the headers rename our pread into pread64. On LP64 both are the same ABI.
 */
#undef _FILE_OFFSET_BITS

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wrap_naming.h"
#include "preload/preload.h"
#include "preload/prologue.h"

_Static_assert(sizeof(off_t) == 8, "the 64-bit aliases below assume a 64-bit off_t");

#define EXPORT __attribute__((visibility("default")))

/* A wrapper for a function every libc has. */
#define WRAP(name, ret, params, args)                                                      \
	EXPORT ret name params                                                             \
	{                                                                                  \
		if (likely(!in_shim))                                                      \
			shim_io_prologue();                                                \
		return REAL(name) args;                                                    \
	}

/* A wrapper for a function that may be missing: fail as the missing function would. */
#define WRAP_OPTIONAL(name, ret, params, args)                                             \
	EXPORT ret name params                                                             \
	{                                                                                  \
		ret(*fn) params = REAL(name);                                              \
		if (unlikely(!fn)) {                                                       \
			errno = ENOSYS;                                                    \
			return -1;                                                         \
		}                                                                          \
		if (likely(!in_shim))                                                      \
			shim_io_prologue();                                                \
		return fn args;                                                            \
	}

/*
 * Reads and writes also report what they moved, for the low paths (low_paths.h): a test of
 * two globals and the thread's tier, unless a low-path feature has work to do.
 */
#define WRAP_READ(name, params, args, fd) WRAP_READ_VIA(name, params, args, fd, REAL(name) args)
#define WRAP_WRITE(name, params, args, fd, end)                                            \
	WRAP_WRITE_VIA(name, params, args, fd, end, REAL(name) args)

/* @call does the I/O: the real function, or the adaptive tier's path when a target is set. */
#define WRAP_READ_VIA(name, params, args, fd, call)                                        \
	WRAP_RW(name, params, args, call, low_paths_after_read(fd, ret))
#define WRAP_WRITE_VIA(name, params, args, fd, end, call)                                  \
	WRAP_RW(name, params, args, call, low_paths_after_write(fd, ret, end))

/* One read or write: @call does it, then @after sees what it moved (in ret). */
#define WRAP_RW(name, params, args, call, after)                                           \
	EXPORT ssize_t name params                                                         \
	{                                                                                  \
		ssize_t ret;                                                               \
		if (unlikely(in_shim))                                                     \
			return REAL(name) args;                                            \
		shim_io_prologue();                                                        \
		ret = call;                                                                \
		after;                                                                     \
		return ret;                                                                \
	}

/*
 * preadv2 and pwritev2 (@write: which). A low thread's call is gated whole, except with
 * RWF_NOWAIT: a caller that asked not to block must not wait at the gate.
 */
#define WRAP_OPTIONAL_RW(name, params, args, write, after)                                 \
	WRAP_OPTIONAL_RW_VIA(name, params, args, OPTIONAL_GATED(write, fn args), after)
#define OPTIONAL_GATED(write, call) ((flags & RWF_NOWAIT) ? (call) : ADAPTIVE_GATED(fd, write, call))

/* @call does the I/O through fn, the real function found at run time. */
#define WRAP_OPTIONAL_RW_VIA(name, params, args, call, after)                              \
	EXPORT ssize_t name params                                                         \
	{                                                                                  \
		ssize_t(*fn) params = REAL(name);                                          \
		ssize_t ret;                                                               \
		if (unlikely(!fn)) {                                                       \
			errno = ENOSYS;                                                    \
			return -1;                                                         \
		}                                                                          \
		if (unlikely(in_shim))                                                     \
			return fn args;                                                    \
		shim_io_prologue();                                                        \
		ret = call;                                                                \
		after;                                                                     \
		return ret;                                                                \
	}

#define ALIAS(name, target) __typeof__(target) name __attribute__((alias(#target), visibility("default")));

/*
 * With a target, a high thread's reads are timed (ADAPTIVE_TIMED_READ) and a low thread's
 * I/O passes the gate (adaptive_read and the rest, ADAPTIVE_GATED); each is a no-op for the
 * other kind of thread.
 */
WRAP_READ_VIA(read, (int fd, void *buf, size_t n), (fd, buf, n), fd,
	      ADAPTIVE_TIMED_READ(fd, unlikely(adaptive_on) ? adaptive_read(fd, buf, n)
							: REAL(read)(fd, buf, n)))
WRAP_READ_VIA(pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off), fd,
	      unlikely(adaptive_on) ? adaptive_pread(fd, buf, n, off) : REAL(pread)(fd, buf, n, off))
WRAP_WRITE_VIA(pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off), fd,
	       ret > 0 ? off + ret : -1,
	       unlikely(adaptive_on) ? adaptive_pwrite(fd, buf, n, off) : REAL(pwrite)(fd, buf, n, off))
/* Vectored calls are gated whole, never cut (docs/adaptive.md says why). */
WRAP_READ_VIA(readv, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), fd,
	      ADAPTIVE_TIMED_READ(fd, ADAPTIVE_GATED(fd, false, REAL(readv)(fd, iov, cnt))))
WRAP_WRITE_VIA(writev, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), fd, -1,
	       ADAPTIVE_GATED(fd, true, REAL(writev)(fd, iov, cnt)))
WRAP_READ_VIA(preadv, (int fd, const struct iovec *iov, int cnt, off_t off), (fd, iov, cnt, off),
	      fd, ADAPTIVE_TIMED_READ(fd, ADAPTIVE_GATED(fd, false, REAL(preadv)(fd, iov, cnt, off))))
WRAP_WRITE_VIA(pwritev, (int fd, const struct iovec *iov, int cnt, off_t off),
	       (fd, iov, cnt, off), fd, ret > 0 ? off + ret : -1,
	       ADAPTIVE_GATED(fd, true, REAL(pwritev)(fd, iov, cnt, off)))
WRAP_OPTIONAL_RW_VIA(preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
		     (fd, iov, cnt, off, flags),
		     ADAPTIVE_TIMED_READ(fd, OPTIONAL_GATED(false, fn(fd, iov, cnt, off, flags))),
		     low_paths_after_read(fd, ret))
/* An offset of -1 means the file position, as for writev. */
WRAP_OPTIONAL_RW(pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
		 (fd, iov, cnt, off, flags), true,
		 low_paths_after_write(fd, ret, ret > 0 && off >= 0 ? off + ret : -1))
/* _FORTIFY_SOURCE builds (all of Debian's) call these instead of read and pread. */
/* Past the fortify check (n <= buflen; else the real one aborts), it is a read. */
WRAP_READ_VIA(__read_chk, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen), fd,
	      ADAPTIVE_TIMED_READ(fd, unlikely(adaptive_on) && n <= buflen
					      ? adaptive_read(fd, buf, n)
					      : REAL(__read_chk)(fd, buf, n, buflen)))
/* Past the fortify check (n <= buflen; else the real one aborts), it is a pread. */
WRAP_READ_VIA(__pread_chk, (int fd, void *buf, size_t n, off_t off, size_t buflen),
	      (fd, buf, n, off, buflen), fd,
	      unlikely(adaptive_on) && n <= buflen ? adaptive_pread(fd, buf, n, off)
						   : REAL(__pread_chk)(fd, buf, n, off, buflen))
/*
 * A sync by a high thread (fsync, fdatasync, sync_file_range) marks its file as the
 * foreground's (adaptive_hook.h): a low thread's writes to it then pass the gate, so a low
 * holder of the program's lock around a WAL write is never held while the foreground waits
 * for the lock.
 */
#define WRAP_SYNC(name, params, args, fd)                                                  \
	EXPORT int name params                                                             \
	{                                                                                  \
		if (likely(!in_shim)) {                                                    \
			shim_io_prologue();                                                \
			adaptive_before_sync(fd);                                          \
		}                                                                          \
		return REAL(name) args;                                                    \
	}

WRAP_SYNC(fsync, (int fd), (fd), fd)
WRAP_SYNC(fdatasync, (int fd), (fd), fd)
WRAP_OPTIONAL(syncfs, int, (int fd), (fd))
/* The same for sync_file_range, which may be missing (the shim's own pushes are raw syscalls). */
EXPORT int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
	int (*fn)(int, off_t, off_t, unsigned int) = REAL(sync_file_range);

	if (unlikely(!fn)) {
		errno = ENOSYS;
		return -1;
	}
	if (likely(!in_shim)) {
		shim_io_prologue();
		adaptive_before_sync(fd);
	}
	return fn(fd, off, n, flags);
}
WRAP_OPTIONAL(fallocate, int, (int fd, int mode, off_t off, off_t len), (fd, mode, off, len))
WRAP_OPTIONAL(copy_file_range, ssize_t,
	      (int in, off_t *in_off, int out, off_t *out_off, size_t n, unsigned int flags),
	      (in, in_off, out, out_off, n, flags))
WRAP_OPTIONAL(sendfile, ssize_t, (int out, int in, off_t *off, size_t n), (out, in, off, n))
WRAP_OPTIONAL(splice, ssize_t,
	      (int in, off_t *in_off, int out, off_t *out_off, size_t n, unsigned int flags),
	      (in, in_off, out, out_off, n, flags))

/* posix_fallocate returns an error number, not -1 with errno. */
EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	int (*fn)(int, off_t, off_t) = REAL(posix_fallocate);

	if (unlikely(!fn))
		return ENOSYS;
	if (likely(!in_shim))
		shim_io_prologue();
	return fn(fd, off, len);
}

/*
 * posix_fadvise returns an error number too. An advice on the access pattern is the
 * program's: the low paths then leave that fd's readahead alone (low_paths_advised).
 */
EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	int (*fn)(int, off_t, off_t, int) = REAL(posix_fadvise);

	if (unlikely(!fn))
		return ENOSYS;
	if (likely(!in_shim)) {
		shim_io_prologue();
		low_paths_advised(fd, advice);
	}
	return fn(fd, off, len, advice);
}

/* write() also watches for a thread name written to /proc/.../comm. */
EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t ret;

	if (unlikely(in_shim))
		return REAL(write)(fd, buf, n);
	shim_io_prologue();
	ret = unlikely(adaptive_on) ? adaptive_write(fd, buf, n) : REAL(write)(fd, buf, n);
	low_paths_after_write(fd, ret, -1);
	if (unlikely(comm_fd_watched(fd)) && ret > 0) {
		int saved = errno;

		comm_fd_written(fd);
		errno = saved;
	}
	return ret;
}

/* On LP64 the 64-bit names are the same functions. */
ALIAS(pread64, pread)
ALIAS(pwrite64, pwrite)
ALIAS(preadv64, preadv)
ALIAS(pwritev64, pwritev)
ALIAS(preadv64v2, preadv2)
ALIAS(pwritev64v2, pwritev2)
ALIAS(__pread64_chk, __pread_chk)
ALIAS(fallocate64, fallocate)
ALIAS(posix_fallocate64, posix_fallocate)
ALIAS(posix_fadvise64, posix_fadvise)
ALIAS(sendfile64, sendfile)
