// SPDX-License-Identifier: MIT
/*
 * sys.c: the shim's one way into the kernel (see sys.h). On x86-64 and aarch64 the syscall
 * instruction is issued inline. Elsewhere libc's syscall() is looked up by dlsym(RTLD_NEXT)
 * from here, which skips the shim's own definition, never through the GOT entry that the
 * shim's exported syscall() would fill.
 */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <string.h>
#include <sys/prctl.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#include <dlfcn.h>
#include <pthread.h>

static long (*libc_syscall)(long, ...);
static pthread_once_t libc_syscall_once = PTHREAD_ONCE_INIT;

static void find_libc_syscall(void)
{
	libc_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}
#endif

static long enter_kernel(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
	long ret;

	pthread_once(&libc_syscall_once, find_libc_syscall);
	if (!libc_syscall)
		return -ENOSYS;
	ret = libc_syscall(nr, a1, a2, a3, a4, a5, a6);
	return ret == -1 ? -errno : ret;
#endif
}

long sys_call6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long ret = enter_kernel(nr, a1, a2, a3, a4, a5, a6);

	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

pid_t sys_gettid(void)
{
	return (pid_t)sys_call(SYS_gettid);
}

pid_t sys_getpid(void)
{
	return (pid_t)sys_call(SYS_getpid);
}

int sys_ioprio_get(pid_t tid)
{
	return (int)sys_call(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tid);
}

int sys_ioprio_set(pid_t tid, int ioprio)
{
	return (int)sys_call(SYS_ioprio_set, IOPRIO_WHO_PROCESS, tid, ioprio);
}

void sys_get_own_name(char name[16])
{
	memset(name, 0, 16);
	sys_call(SYS_prctl, PR_GET_NAME, name);
}

int sys_close(int fd)
{
	return (int)sys_call(SYS_close, fd);
}

/*
 * Read @path into @buf (@len - 1 bytes at most) with a NUL. Returns the bytes read, or
 * -errno when it cannot be opened; a failed read keeps what came before it and leaves its
 * errno in *@read_errno (0 when none failed).
 */
static long read_into(const char *path, char *buf, size_t len, int *read_errno)
{
	long fd, used;

	fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	used = sys_read_fd((int)fd, buf, len, read_errno);
	sys_close((int)fd);
	return used;
}

long sys_read_fd(int fd, char *buf, size_t len, int *read_errno)
{
	size_t used = 0;
	long n;

	*read_errno = 0;
	while (used + 1 < len) {
		n = sys_call(SYS_read, fd, buf + used, len - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*read_errno = n < 0 ? errno : 0;
			break;
		}
		used += (size_t)n;
	}
	buf[used] = '\0';
	return (long)used;
}

int sys_read_file(const char *path, char *buf, size_t len)
{
	int read_errno;
	long used = read_into(path, buf, len, &read_errno);

	if (used < 0)
		return (int)used;
	if ((size_t)used + 1 >= len)
		return -EFBIG;
	return -read_errno;
}

long sys_read_text(const char *path, char *buf, size_t len)
{
	int read_errno;

	return read_into(path, buf, len, &read_errno);
}

int sys_write_text(const char *path, const char *text)
{
	long fd = sys_call(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (sys_call(SYS_write, fd, text, strlen(text)) < 0)
		ret = -errno;
	sys_close((int)fd);
	return ret;
}

size_t sys_decimal(unsigned long long v, char *out)
{
	char tmp[SYS_DECIMAL_MAX];
	size_t n = 0, i = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n)
		out[i++] = tmp[--n];
	out[i] = '\0';
	return i;
}
