// SPDX-License-Identifier: MIT
/*
 * wrap_naming.c: every way a thread can get a name, so that its tier follows before its
 * next I/O: prctl(PR_SET_NAME) and pthread_setname_np() on itself, pthread_setname_np() on
 * another thread (how RocksDB names its pool threads: the creator names the new one), and
 * a write to /proc/self/task/TID/comm, by open()+write() or by fopen()+fprintf(). The opens
 * and closes themselves are wrap_fd.c's: it tells this file about comm fds (wrap_naming.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "wrap_naming.h"
#include "preload/preload.h"

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
		return sys_gettid();
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

void comm_fd_opened(int fd, const char *path, int writable)
{
	pid_t tid;

	if (fd < 0 || !writable || !path || (unsigned)fd >= COMM_FD_MAX)
		return;
	tid = comm_path_tid(path);
	atomic_store(&comm_fd_tid[fd], tid);
}

/* Called only for a watched fd; a vfork child shares the table and leaves it alone. */
void comm_fd_forget(int fd)
{
	int saved = errno;

	if ((unsigned)fd < COMM_FD_MAX && !shim_memory_borrowed())
		atomic_store_explicit(&comm_fd_tid[fd], 0, memory_order_relaxed);
	errno = saved;
}

/*
 * @slot's thread has a new name. A vfork() child renaming itself must not write into its
 * parent's records; the main thread's name is the process name that comm: rules match.
 */
static void thread_renamed(struct state_slot *slot, const char *name)
{
	if (!slot || slot_is_inert(slot) || !shim_fork_check())
		return;
	slot_set_name(slot, name);
	if (shim.process_rules && __atomic_load_n(&slot->tid, __ATOMIC_RELAXED) == getpid())
		process_identity_refresh();
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
	if (sys_read_file(path, buf, sizeof(buf)) < 0)
		return;
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	buf[15] = '\0';
	thread_renamed(slot, buf);
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
		thread_renamed(self_record(), name);
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
	thread_renamed(slot, name);
	errno = saved;
	return ret;
}
