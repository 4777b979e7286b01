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

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t fd_file_key(uint64_t dev, uint64_t ino, uint64_t btime)
{
	uint64_t key = mix64(mix64(mix64(dev) ^ ino) ^ btime);

	return key ? key : 1;
}

/* statx for the birth time (kernel 4.11 and later), else fstat; -1 when neither works. */
static int file_stat(int fd, uint32_t *mode, uint64_t *key)
{
	struct statx sx = { 0 };
	struct stat st;

	if (sys_call(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_BTIME,
		     &sx) == 0) {
		*mode = sx.stx_mode;
		*key = fd_file_key((uint64_t)sx.stx_dev_major << 32 | sx.stx_dev_minor, sx.stx_ino,
				   (sx.stx_mask & STATX_BTIME)
					   ? (uint64_t)sx.stx_btime.tv_sec << 30 ^ sx.stx_btime.tv_nsec
					   : 0);
		return 0;
	}
	if (sys_call(SYS_fstat, fd, &st) < 0)
		return -1;
	*mode = st.st_mode;
	*key = fd_file_key(st.st_dev, st.st_ino, 0);
	return 0;
}

/*
 * What @fd is; found once per open with statx (or fstat) and F_GETFL (raw, never our
 * wrappers). Its file key and an unchecked shared_seen are stored before the kind.
 */
uint32_t fd_kind(int fd)
{
	struct fd_path *p = &fd_paths[fd];
	uint32_t flags = atomic_load_explicit(&p->flags, memory_order_acquire), kind, mode;
	uint64_t key;
	long fl;

	if ((flags & FD_KIND_MASK) != FD_KIND_UNKNOWN)
		return flags & FD_KIND_MASK;
	if (file_stat(fd, &mode, &key) < 0)
		return FD_KIND_OTHER; /* not remembered: the fd may be opened later */
	fl = sys_call(SYS_fcntl, fd, F_GETFL);
	if (S_ISREG(mode))
		kind = fl >= 0 && (fl & O_DIRECT) ? FD_KIND_STORAGE : FD_KIND_FILE;
	else if (S_ISBLK(mode))
		kind = FD_KIND_STORAGE;
	else
		kind = FD_KIND_OTHER;
	fd_table_raise_end((uint32_t)fd + 1);
	atomic_store_explicit(&p->file_key, kind == FD_KIND_OTHER ? 0 : key, memory_order_relaxed);
	atomic_store_explicit(&p->shared_seen, UINT32_MAX, memory_order_relaxed);
	/* Keep FD_DROP, which open set; another thread may have classified it meanwhile. */
	while (!atomic_compare_exchange_weak(&p->flags, &flags, flags | kind))
		if ((flags & FD_KIND_MASK) != FD_KIND_UNKNOWN)
			return flags & FD_KIND_MASK;
	return kind;
}
