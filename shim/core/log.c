// SPDX-License-Identifier: MIT
/*
 * log.c: the shim's only output (see log.h). errno is kept.
 *
 * The warned bits live on a MAP_SHARED anonymous page once log_share_with_children() has
 * run, so that a warning prints once per process tree: such a page is inherited by fork()
 * and shared from then on. It needs no descriptor and no environment variable, so the
 * program sees nothing of it; exec starts a new tree, which bounds the warnings by the
 * programs started, not by the workers forked. (An environment variable would survive
 * exec, but setting one in a running multithreaded program is unsafe and changes what the
 * program and its children see; an inherited memfd would be a descriptor leaked into every
 * exec'd child.)
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>

static _Atomic unsigned own_warned;
static _Atomic(_Atomic unsigned *) shared_warned;
static _Atomic int level = LOG_WARN;

void log_share_with_children(void)
{
	_Atomic unsigned *expected = NULL;
	long page = sys_call(SYS_mmap, NULL, sizeof(unsigned), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (page == -1)
		return; /* each process warns for itself, as without the page */
	atomic_store((_Atomic unsigned *)page, atomic_load(&own_warned));
	if (!atomic_compare_exchange_strong(&shared_warned, &expected, (_Atomic unsigned *)page))
		sys_call(SYS_munmap, page, sizeof(unsigned));
}

static _Atomic unsigned *warned(void)
{
	_Atomic unsigned *word = atomic_load(&shared_warned);

	return word ? word : &own_warned;
}

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

	/* once per process tree: a forked worker does not repeat its parent's warning */
	if (atomic_fetch_or(warned(), key) & key)
		return;
	if (atomic_load(&level) < LOG_WARN)
		return;
	va_start(ap, fmt);
	emit(fmt, ap);
	va_end(ap);
	errno = saved;
}
