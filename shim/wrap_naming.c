// SPDX-License-Identifier: MIT
/*
 * wrap_naming.c: every way a thread can get a name, so that its tier follows before its
 * next I/O: prctl(PR_SET_NAME) and pthread_setname_np() on itself, pthread_setname_np() on
 * another thread (how RocksDB names its pool threads: the creator names the new one), and
 * a write to /proc/self/task/TID/comm, by open()+write() or by fopen()+fprintf().
 */
/*
 * We define both pread and pread64 (open and open64, ...); meson's -D_FILE_OFFSET_BITS=64
 * would make the headers rename our pread into pread64. On LP64 both are the same ABI.
 */
#undef _FILE_OFFSET_BITS

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "low_paths.h"
#include "naming.h"
#include "real.h"

#define EXPORT __attribute__((visibility("default")))

_Atomic pid_t comm_fd_tid[COMM_FD_MAX];

/* Parse a decimal id ending at '/' ; returns the id and moves *p past the '/', or -1. */
static long parse_id(const char **p)
{
	char *end;
	long id;

	if (**p < '0' || **p > '9')
		return -1;
	id = strtol(*p, &end, 10);
	if (*end != '/')
		return -1;
	*p = end + 1;
	return id;
}

/* The thread whose name @path sets, or 0 if @path is not one of our comm files. */
static pid_t comm_path_tid(const char *path)
{
	const char *p;
	long pid, tid;

	if (strncmp(path, "/proc/", 6))
		return 0;
	p = path + 6;
	if (!strcmp(p, "thread-self/comm"))
		return shim_gettid();
	if (!strncmp(p, "self/", 5)) {
		p += 5;
		pid = getpid();
	} else {
		pid = parse_id(&p);
		if (pid != getpid())
			return 0;
	}
	if (!strcmp(p, "comm"))
		return (pid_t)pid; /* the main thread's name: the process name */
	if (strncmp(p, "task/", 5))
		return 0;
	p += 5;
	tid = parse_id(&p);
	return tid > 0 && !strcmp(p, "comm") ? (pid_t)tid : 0;
}

static void comm_fd_track(int fd, const char *path, int writable)
{
	pid_t tid;

	if (fd < 0 || !writable || !path || (unsigned)fd >= COMM_FD_MAX)
		return;
	tid = comm_path_tid(path);
	atomic_store(&comm_fd_tid[fd], tid);
}

/* Called only for a watched fd; a vfork child shares the table and leaves it alone. */
static void comm_fd_forget(int fd)
{
	int saved = errno;

	if ((unsigned)fd < COMM_FD_MAX && !shim_memory_borrowed())
		atomic_store_explicit(&comm_fd_tid[fd], 0, memory_order_relaxed);
	errno = saved;
}

/* The kernel may keep a trailing newline in the name, so ask it rather than guess. */
void comm_fd_written(int fd)
{
	comm_tid_written(atomic_load(&comm_fd_tid[fd]));
}

void comm_tid_written(pid_t tid)
{
	char path[64], buf[64];
	struct state_slot *slot;
	size_t len;

	if (atomic_load(&shim.status) != SHIM_ACTIVE || tid <= 0)
		return;
	slot = slot_find_tid(tid);
	if (!slot)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	if (config_read_file(path, buf, sizeof(buf)) < 0)
		return;
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	buf[15] = '\0';
	slot_set_name(slot, buf);
}

/* The calling thread's record, attaching it if this is its first contact with the shim. */
static struct state_slot *self_record(void)
{
	struct state_slot *slot = self_slot;

	return slot ? slot : thread_attach_self();
}

EXPORT int prctl(int option, ...)
{
	unsigned long arg2, arg3, arg4, arg5;
	va_list ap;
	int ret, saved;

	va_start(ap, option);
	arg2 = va_arg(ap, unsigned long);
	arg3 = va_arg(ap, unsigned long);
	arg4 = va_arg(ap, unsigned long);
	arg5 = va_arg(ap, unsigned long);
	va_end(ap);
	ret = REAL(prctl)(option, arg2, arg3, arg4, arg5);
	if (ret != 0 || in_shim)
		return ret;
	saved = errno;
	if (option == PR_SET_NAME) {
		char name[16] = { 0 };

		strncpy(name, (const char *)arg2, 15); /* the kernel truncates the same way */
		slot_set_name(self_record(), name);
	} else if (option == PR_SET_MM && atomic_load(&shim.status) == SHIM_ACTIVE) {
		process_identity_init(); /* the argument area may have moved */
	}
	errno = saved;
	return ret;
}

EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	struct state_slot *slot;
	int ret, saved;

	ret = REAL(pthread_setname_np)(thread, name);
	if (ret != 0 || in_shim)
		return ret;
	saved = errno;
	if (pthread_equal(thread, pthread_self()))
		slot = self_record();
	else
		slot = atomic_load(&shim.status) == SHIM_ACTIVE ? slot_find_handle(thread) : NULL;
	slot_set_name(slot, name);
	errno = saved;
	return ret;
}

static int open_needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int writable(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	int fd;

	if (open_needs_mode(flags)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = REAL(open)(path, flags, mode);
	if (fd >= 0 && !in_shim) {
		comm_fd_track(fd, path, writable(flags));
		low_paths_after_open(fd, path);
	}
	return fd;
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	int fd;

	if (open_needs_mode(flags)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = REAL(openat)(dirfd, path, flags, mode);
	if (fd >= 0 && !in_shim) {
		if (path[0] == '/')
			comm_fd_track(fd, path, writable(flags));
		low_paths_after_open(fd, path); /* relative: matched as given */
	}
	return fd;
}

/* creat() opens through libc's internal open: a drop-behind log may be created this way. */
EXPORT int creat(const char *path, mode_t mode)
{
	int fd = REAL(creat) ? REAL(creat)(path, mode)
			     : REAL(open)(path, O_CREAT | O_WRONLY | O_TRUNC, mode);

	if (fd >= 0 && !in_shim)
		low_paths_after_open(fd, path);
	return fd;
}

/* _FORTIFY_SOURCE versions, used when the flags are not a compile-time constant. */
EXPORT int __open_2(const char *path, int flags)
{
	int fd = REAL(__open_2) ? REAL(__open_2)(path, flags) : REAL(open)(path, flags);

	if (fd >= 0 && !in_shim) {
		comm_fd_track(fd, path, writable(flags));
		low_paths_after_open(fd, path);
	}
	return fd;
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int fd = REAL(__openat_2) ? REAL(__openat_2)(dirfd, path, flags)
				  : REAL(openat)(dirfd, path, flags);

	if (fd >= 0 && !in_shim) {
		if (path[0] == '/')
			comm_fd_track(fd, path, writable(flags));
		low_paths_after_open(fd, path);
	}
	return fd;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	FILE *fp = REAL(fopen)(path, mode);

	if (fp && !in_shim && mode) {
		comm_fd_track(fileno(fp), path, strpbrk(mode, "wa+") != NULL);
		low_paths_after_open(fileno(fp), path);
	}
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
	pid_t named = 0;
	int flush_err = 0;

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
	/* Forget the fd before it closes: once closed, another thread may open its number. */
	if (watched) {
		named = atomic_load(&comm_fd_tid[fd]);
		comm_fd_forget(fd);
	}
	ret = REAL(fclose)(fp); /* stdio writes the buffered name here, through libc's own write */
	if (flush_err && ret == 0) {
		ret = EOF;
		errno = flush_err;
	}
	if (watched) {
		int saved = errno;

		if (!in_shim)
			comm_tid_written(named);
		errno = saved;
	}
	return ret;
}

EXPORT int close(int fd)
{
	if (unlikely(comm_fd_watched(fd)))
		comm_fd_forget(fd);
	if (likely(!in_shim)) {
		low_paths_before_close(fd);
		uring_fd_closing(fd);
	}
	return REAL(close)(fd);
}

__typeof__(open) open64 __attribute__((alias("open"), visibility("default")));
__typeof__(openat) openat64 __attribute__((alias("openat"), visibility("default")));
__typeof__(__open_2) __open64_2 __attribute__((alias("__open_2"), visibility("default")));
__typeof__(__openat_2) __openat64_2 __attribute__((alias("__openat_2"), visibility("default")));
__typeof__(creat) creat64 __attribute__((alias("creat"), visibility("default")));
__typeof__(fopen) fopen64 __attribute__((alias("fopen"), visibility("default")));
