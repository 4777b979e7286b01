// SPDX-License-Identifier: MIT
/*
 * log.c: the shim's only output (see log.h). errno is kept.
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic unsigned warned;
static _Atomic int level = LOG_WARN;

void log_set_level(enum log_level new_level)
{
	atomic_store(&level, (int)new_level);
}

static void emit(const char *fmt, va_list ap)
{
	char line[1024]; /* a cgroup path fits */
	int len;

	len = snprintf(line, sizeof(line), "iotier: ");
	len += vsnprintf(line + len, sizeof(line) - (size_t)len, fmt, ap);
	if (len < 0)
		return;
	if (len >= (int)sizeof(line) - 1)
		len = (int)sizeof(line) - 2;
	line[len++] = '\n';
	sys_call(SYS_write, 2, line, len);
}

void shim_log(enum log_level at, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	if ((int)at > atomic_load(&level))
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

	if (atomic_fetch_or(&warned, key) & key)
		return;
	if (atomic_load(&level) < LOG_WARN)
		return;
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	errno = saved;
}
