// SPDX-License-Identifier: MIT
/*
 * log.c: the shim's only output, one line at a time on stderr, written with a raw syscall
 * so that it neither goes through our own write() wrapper nor touches the program's stdio
 * buffers. Warnings that could repeat (a denied priority, a full table) are printed once
 * per process tree (tree_flags.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"
#include "tree_flags.h"


static void emit(const char *fmt, va_list ap)
{
	char line[512];
	int len;

	len = snprintf(line, sizeof(line), "iotier[%d]: ", (int)getpid());
	if (len < 0)
		return;
	len += vsnprintf(line + len, sizeof(line) - (size_t)len, fmt, ap);
	if (len >= (int)sizeof(line) - 1)
		len = (int)sizeof(line) - 2;
	line[len++] = '\n';
	syscall(SYS_write, 2, line, (size_t)len);
}

void shim_log(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	/* Before the configuration is read, only warnings are shown. */
	if (level > (atomic_load(&shim.status) == SHIM_UNINITIALISED ? LOG_WARN : shim.cfg.log))
		return;
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	errno = saved;
}

void shim_warn_once(unsigned key, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	/* once per process tree: a forked worker does not repeat its parent's warning */
	if (tree_flags_test_and_set(key))
		return;
	if (atomic_load(&shim.status) != SHIM_UNINITIALISED && shim.cfg.log < LOG_WARN)
		return;
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	errno = saved;
}
