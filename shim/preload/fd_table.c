// SPDX-License-Identifier: MIT
/*
 * fd_table.c: the per-fd table (fd_table.h) and the one thing it finds out by itself, what
 * an fd is. The low paths (low_paths.c), the adaptive hook and the wrappers read and reset
 * its entries; only raw syscalls here, never the shim's own wrappers.
 */
#include "fd_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "core/sys.h"

struct fd_path fd_paths[PATH_FD_MAX];
_Atomic uint32_t fd_paths_end;

void fd_table_raise_end(uint32_t end)
{
	uint32_t now = atomic_load_explicit(&fd_paths_end, memory_order_relaxed);

	while (now < end && !atomic_compare_exchange_weak(&fd_paths_end, &now, end))
		;
}

/* What @fd is; found once per open with fstat and F_GETFL (raw, never our wrappers). */
uint32_t fd_kind(int fd)
{
	struct fd_path *p = &fd_paths[fd];
	uint32_t flags = atomic_load_explicit(&p->flags, memory_order_acquire), kind;
	struct stat st;
	long fl;

	if ((flags & FD_KIND_MASK) != FD_KIND_UNKNOWN)
		return flags & FD_KIND_MASK;
	if (sys_call(SYS_fstat, fd, &st) < 0)
		return FD_KIND_OTHER; /* not remembered: the fd may be opened later */
	fl = sys_call(SYS_fcntl, fd, F_GETFL);
	if (S_ISREG(st.st_mode))
		kind = fl >= 0 && (fl & O_DIRECT) ? FD_KIND_STORAGE : FD_KIND_FILE;
	else if (S_ISBLK(st.st_mode))
		kind = FD_KIND_STORAGE;
	else
		kind = FD_KIND_OTHER;
	fd_table_raise_end((uint32_t)fd + 1);
	/* Keep FD_DROP, which open set; another thread may have classified it meanwhile. */
	while (!atomic_compare_exchange_weak(&p->flags, &flags, flags | kind))
		if ((flags & FD_KIND_MASK) != FD_KIND_UNKNOWN)
			return flags & FD_KIND_MASK;
	return kind;
}
