// SPDX-License-Identifier: MIT
/*
 * low_paths.c: what happens after a low thread's read or write (and after any write to a
 * drop-behind file). Buffered writes reach the disk through the flusher kworkers at the
 * default class, whatever the writer's ioprio; sync_file_range(SYNC_FILE_RANGE_WRITE) from
 * the writer makes the writeback bios its own, so they carry its class. Log files are dropped
 * from the page cache as they grow, and the low tier as a whole can be held to a byte rate.
 * All calls made here are raw or libc functions the shim does not wrap; errno is restored.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_low.h"
#include "fork.h"
#include "low_paths.h"
#include "real.h"
#include "adaptive/adaptive.h"
#include "core/sys.h"

struct low_paths_on low_paths_on;

/* Drop-behind works in chunks of this many bytes when steering is off. */
#define DROP_CHUNK_DEFAULT (1u << 20)
/*
 * The bucket holds 200 ms of the rate: after a pause the low tier may run that far ahead,
 * and a thread delayed by that much (a busy CPU, a blocking write) catches up instead of
 * losing its share. It starts empty, so a new process never begins with a burst.
 */
#define RATE_BURST_NS 200000000ll

static uint64_t drop_chunk;

void low_paths_init(void)
{
	const struct config *cfg = &shim.cfg;

	drop_chunk = cfg->writeback_bytes ? cfg->writeback_bytes : DROP_CHUNK_DEFAULT;
	low_paths_on.drop = cfg->n_drop_globs > 0;
	low_paths_on.rate = cfg->low_rate > 0;
	low_paths_on.any_write = cfg->writeback_bytes || low_paths_on.drop || low_paths_on.rate ||
				 cfg->dirty_budget;
}

static void budget_release(struct fd_path *p);

static void fd_reset(struct fd_path *p, uint32_t flags)
{
	budget_release(p);
	atomic_store_explicit(&p->since_steer, 0, memory_order_relaxed);
	atomic_store_explicit(&p->since_drop, 0, memory_order_relaxed);
	atomic_store_explicit(&p->drop_lo, -1, memory_order_relaxed);
	atomic_store_explicit(&p->steer_end, 0, memory_order_relaxed);
	atomic_store_explicit(&p->flags, flags, memory_order_release);
}

void low_paths_opened(int fd, const char *path)
{
	int saved = errno;
	uint32_t flags = 0;

	if (low_paths_on.drop && path && config_drop_behind_matches(&shim.cfg, path))
		flags = FD_DROP;
	/*
	 * A vfork child's open lands in the parent's table, on a number the parent may still
	 * use. The entry of a free number is normally zero already, so the check (a syscall)
	 * is made only for a drop-behind path or a stale entry.
	 */
	if ((flags || atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed)) &&
	    shim_memory_borrowed()) {
		errno = saved;
		return;
	}
	if (flags)
		fd_table_raise_end((uint32_t)fd + 1);
	fd_reset(&fd_paths[fd], flags);
	if (flags)
		fd_kind(fd); /* a drop file is classified now, while nobody waits on a write */
	errno = saved;
}

/* ---- the rate limit ------------------------------------------------------------------- */

/*
 * A token bucket kept as a theoretical arrival time (GCRA): one atomic nanosecond counter
 * for the whole process, advanced by the cost of each transfer. A thread that pushes it
 * more than the burst ahead of now sleeps the difference. No lock, no allocation.
 */
static _Atomic int64_t rate_tat;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall */
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void low_rate_charge(uint64_t bytes)
{
	uint64_t rate = shim.cfg.low_rate;
	int64_t now, cost, old, tat, wait_until;
	struct timespec until;
	int saved;

	if (!rate || !bytes)
		return;
	saved = errno;
	cost = (int64_t)((unsigned __int128)bytes * 1000000000u / rate);
	now = now_ns();
	old = atomic_load_explicit(&rate_tat, memory_order_relaxed);
	do
		tat = (old == 0 ? now + RATE_BURST_NS : old > now ? old : now) + cost;
	while (!atomic_compare_exchange_weak(&rate_tat, &old, tat));
	wait_until = tat - RATE_BURST_NS;
	if (wait_until > now) {
		until.tv_sec = wait_until / 1000000000ll;
		until.tv_nsec = wait_until % 1000000000ll;
		/*
		 * A signal ends the wait early (EINTR) so that the program reacts to it at once;
		 * the debt stays in the bucket, so the next transfer pays for it. The raw call,
		 * not glibc's clock_nanosleep: that is a cancellation point, and this runs after
		 * the real call returned (an io_submit or io_uring submission already in flight),
		 * where a pthread_cancel must not unwind the thread.
		 */
		sys_call(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
	}
	errno = saved;
}

void low_paths_read(int fd, size_t bytes)
{
	int saved = errno;
	uint32_t kind = fd_kind(fd);

	errno = saved;
	if (kind == FD_KIND_FILE || kind == FD_KIND_STORAGE)
		low_rate_charge(bytes);
}

/* ---- steering and drop-behind ---------------------------------------------------------- */

/*
 * Add @bytes to @counter; when it reaches @limit, restart it and return the total it held
 * (what to push), else 0.
 */
static uint64_t crossed(_Atomic uint64_t *counter, uint64_t bytes, uint64_t limit)
{
	uint64_t total = atomic_fetch_add_explicit(counter, bytes, memory_order_relaxed) + bytes;

	if (total < limit)
		return 0;
	/* Only one of several racing writers wins the push. */
	return atomic_compare_exchange_strong(counter, &total, 0) ? total : 0;
}

/*
 * Waiting for writeback must not go through the program's file description. A wait
 * (SYNC_FILE_RANGE_WAIT_BEFORE/AFTER) ends in file_fdatawait_range(), which reports a
 * writeback error and advances that description's errseq cursor: the program's own later
 * fsync() or fdatasync() would then return 0 for data that never reached the disk. The
 * non-waiting push (SYNC_FILE_RANGE_WRITE, __filemap_fdatawrite_range on the mapping) and
 * POSIX_FADV_DONTNEED never touch the cursor. So the waits run on a description of our own,
 * opened through /proc/self/fd for the moment and closed again; it shares the page cache,
 * and its cursor starts where the error state stood at open. Without /proc (or when the
 * file cannot be opened for reading) the wait is skipped and only the push is made.
 * O_NONBLOCK: never block on another process's lease. Raw calls, not our wrappers.
 *
 * Closing that description must not cost the program its locks: POSIX record locks
 * (fcntl F_SETLK, lockf) belong to the process and the file, and the close of *any* of the
 * process's descriptors of the file releases them all (SQLite's locks on its database).
 * So no description of our own is opened while the file carries a record lock: asked on
 * the program's fd with F_OFD_GETLK, whose owner (the description) differs from every
 * POSIX lock's, so a lock of this process is reported as well as another's. Any lock, or
 * no answer, means no wait: the push still goes, unwaited.
 */
static bool file_locked(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0,
			    .l_pid = 0 };

	return sys_call(SYS_fcntl, fd, F_OFD_GETLK, &fl) < 0 || fl.l_type != F_UNLCK;
}

static int open_own_description(int fd)
{
	char path[sizeof("/proc/self/fd/") + SYS_DECIMAL_MAX] = "/proc/self/fd/";

	if (file_locked(fd))
		return -1;
	sys_decimal((unsigned)fd, path + strlen(path));
	return (int)sys_call(SYS_openat, AT_FDCWD, path,
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/*
 * Wait (and write, as @flags say) for [@lo, @lo + @len) of @fd's file, then drop it from
 * the cache if @drop; @len 0 means to the end of the file. Returns false if it could not
 * open its own description, having done nothing.
 */
static bool wait_own(int fd, off_t lo, off_t len, unsigned flags, bool drop)
{
	int own = open_own_description(fd);

	if (own < 0)
		return false;
	sys_call(SYS_sync_file_range, own, lo, len, flags);
	if (drop)
		sys_call(SYS_fadvise64, own, lo, len, POSIX_FADV_DONTNEED);
	sys_call(SYS_close, own);
	return true;
}

/*
 * Push [@lo, @end) of @fd's file in pieces of @chunk, each holding a gate slot while it is
 * submitted; waited for before and after through @own, our own description (-1: unwaited).
 */
static void push_pieces(int fd, int own, off_t lo, off_t end, uint64_t chunk)
{
	for (; lo < end; lo += (off_t)chunk) {
		off_t len = end - lo < (off_t)chunk ? end - lo : (off_t)chunk;
		uint32_t ticket;

		if (own >= 0)
			sys_call(SYS_sync_file_range, own, lo, len, SYNC_FILE_RANGE_WAIT_BEFORE);
		ticket = adaptive_push_enter(fd, (uint64_t)len);
		/* WRITE alone never touches the errseq cursor: the program's fd will do. */
		sys_call(SYS_sync_file_range, fd, lo, len, SYNC_FILE_RANGE_WRITE);
		adaptive_push_exit(ticket);
		if (own >= 0)
			sys_call(SYS_sync_file_range, own, lo, len, SYNC_FILE_RANGE_WAIT_AFTER);
	}
}

/*
 * While the adaptive tier holds the low tier back (a finite cap), the push is the low tier's
 * device I/O, so it passes the gate in chunk-size pieces (no larger than one request of the
 * file's device: adaptive_push_chunk), one at a time. A piece holds its slot while its I/O
 * goes to the device, and no longer: earlier writeback of the range (the flusher's, not
 * ours) is waited for first without a slot (WAIT_BEFORE), the slot is taken for the
 * submission (WRITE: when it returns, the piece's bios are in the block layer), released,
 * and the wait for their completion (WAIT_AFTER) holds none, so the next low I/O of the
 * tree is admitted as soon as the device has this one. This thread's next piece, and its
 * next I/O of any kind, comes only after that wait: a pushing thread never has more than one
 * piece on the device beyond the cap (docs/adaptive.md, "What a low thread's calls see"). The waits run
 * on our own description: a writeback error stays for the program's fsync; without one
 * (no /proc, or a locked file: open_own_description) the pieces go unwaited. The range is
 * what was written since the last push, [@end - @bytes, @end): a sequential writer's (an SST
 * file's) new pages. Pages outside it (an earlier random write) wait for the next push at
 * full, or the flusher. Returns false, having done nothing, at full.
 */
static bool steer_gated(int fd, off_t end, uint64_t bytes)
{
	uint64_t chunk = unlikely(adaptive_on) ? adaptive_push_chunk(fd) : 0;
	int own;

	/*
	 * A file the foreground writes too (FD_SHARED), or an urgent thread's (IOTIER_URGENT),
	 * is pushed as without a target, ungated.
	 */
	if (!chunk || (atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed) & FD_SHARED) ||
	    self_is_urgent())
		return false;
	if (chunk == ADAPTIVE_UNLIMITED)
		chunk = shim.cfg.writeback_bytes;
	if (end < 0)
		end = (off_t)sys_call(SYS_lseek, fd, (off_t)0, SEEK_CUR);
	if (end < 0)
		return false;
	own = open_own_description(fd);
	push_pieces(fd, own, end > (off_t)bytes ? end - (off_t)bytes : 0, end, chunk);
	if (own >= 0)
		sys_call(SYS_close, own);
	return true;
}

/*
 * A cut buffered pwrite's pieces (split_io.c, rule 2): where each can be pushed and waited
 * for through a description of our own, as steer_gated does, that description (closed by
 * low_paths_piece_push_end); else -1, and the call goes whole. Urgent threads are not gated,
 * shared files pass whole, and a dropped-behind file's pushes are its drop's.
 */
int low_paths_piece_push_begin(int fd)
{
	uint32_t flags;

	if (!shim.cfg.writeback_bytes || (unsigned)fd >= PATH_FD_MAX || self_is_urgent())
		return -1;
	flags = atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed);
	if (flags & (FD_SHARED | FD_DROP))
		return -1;
	return open_own_description(fd);
}

/* The last piece pushed ended at @end: the write's own push (low_paths_written) is done. */
static SHIM_TLS struct {
	int fd;
	off_t end;
} pieces_pushed = { -1, -1 };

bool low_paths_piece_push(int fd, int own, off_t off, size_t len)
{
	uint64_t chunk = adaptive_push_chunk(fd);

	/* At full: the rest as without a target, by the write's push (low_paths_written). */
	if (!chunk || chunk == ADAPTIVE_UNLIMITED)
		return false;
	push_pieces(fd, own, off, off + (off_t)len, chunk);
	return true;
}

void low_paths_piece_push_end(int fd, int own, off_t pushed_end)
{
	sys_call(SYS_close, own);
	pieces_pushed.fd = pushed_end >= 0 ? fd : -1;
	pieces_pushed.end = pushed_end;
}

/*
 * Push the file's dirty pages now: the whole file (0, 0), of which only dirty pages are
 * visited. Strict mode then waits for what the previous push started, like RocksDB's
 * strict_bytes_per_sync, so dirty plus in-flight data per file stays within about 2N. It
 * pushes first and waits second: pages left dirty while the writer sleeps are exactly what
 * the flusher would take at the default class.
 */
static void steer(int fd, struct fd_path *p, off_t end, uint64_t bytes)
{
	int64_t prev;

	if (steer_gated(fd, end, bytes))
		return;
	sys_call(SYS_sync_file_range, fd, (off_t)0, (off_t)0, SYNC_FILE_RANGE_WRITE);
	if (!shim.cfg.writeback_strict)
		return;
	if (end < 0)
		end = (off_t)sys_call(SYS_lseek, fd, (off_t)0, SEEK_CUR);
	prev = atomic_exchange(&p->steer_end, end < 0 ? 0 : (int64_t)end);
	if (prev > 0)
		wait_own(fd, (off_t)0, (off_t)prev, SYNC_FILE_RANGE_WAIT_BEFORE, false);
}

/*
 * Written pages cannot be dropped while dirty or under writeback, and a writer fills the
 * cache far faster than a device empties it. So each chunk is pushed to the device when it
 * is complete, and the chunk before it, pushed one chunk ago, is waited for and dropped:
 * per file at most two chunks stay cached, and the writer waits only when the device is
 * more than a chunk behind it. Pages written before are never visited: the range is what
 * this fd wrote.
 */
static void drop_behind(int fd, struct fd_path *p, uint64_t chunk_bytes, off_t end)
{
	int64_t lo, chunk_lo;

	if (end < 0)
		end = (off_t)sys_call(SYS_lseek, fd, (off_t)0, SEEK_CUR);
	if (end < 0)
		return;
	chunk_lo = end > (off_t)chunk_bytes ? end - (off_t)chunk_bytes : 0;
	sys_call(SYS_sync_file_range, fd, (off_t)chunk_lo, (off_t)(end - chunk_lo),
		SYNC_FILE_RANGE_WRITE);
	lo = atomic_exchange(&p->drop_lo, chunk_lo);
	if (lo < 0 || lo >= chunk_lo)
		return;
	/* Without our own description: pushed already, and what is clean is dropped. */
	if (!wait_own(fd, (off_t)lo, (off_t)(chunk_lo - lo), SYNC_FILE_RANGE_WAIT_BEFORE |
			      SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER, true))
		sys_call(SYS_fadvise64, fd, (off_t)lo, (off_t)(chunk_lo - lo), POSIX_FADV_DONTNEED);
}

/* ---- the dirty budget ------------------------------------------------------------------ */

/*
 * Bytes the low threads of this process wrote through the page cache and have not waited
 * for (IOTIER_DIRTY_BUDGET). The kernel throttles every writer of the machine in
 * balance_dirty_pages once dirty plus writeback memory passes vm.dirty_*: a low bulk writer
 * that fills it makes the high tier's appends pay. Past the budget a low writer writes back
 * its own file and waits for it, so it is the one that waits, and the low tier never holds
 * more than about the budget plus one write per low thread.
 */
static _Atomic uint64_t low_unsettled;

/* Take @bytes off the process total, never below zero (a reset may race a settle). */
static void budget_sub(uint64_t bytes)
{
	uint64_t old = atomic_load_explicit(&low_unsettled, memory_order_relaxed);

	while (!atomic_compare_exchange_weak(&low_unsettled, &old, old > bytes ? old - bytes : 0))
		;
}

/* Forget what @p's fd had not waited for (the fd is closed or reused). */
static void budget_release(struct fd_path *p)
{
	uint64_t left = atomic_exchange_explicit(&p->unsettled, 0, memory_order_relaxed);

	if (left)
		budget_sub(left);
}

/*
 * Write back @fd's whole file and wait for it: only its dirty and writeback pages are
 * visited, and they are, in practice, this writer's own. The push goes through the program's
 * description (it never touches the errseq cursor); the wait through one of our own (see
 * open_own_description). Without /proc only the push is made.
 */
static void budget_settle(int fd, struct fd_path *p)
{
	uint64_t mine = atomic_exchange_explicit(&p->unsettled, 0, memory_order_relaxed);

	sys_call(SYS_sync_file_range, fd, (off_t)0, (off_t)0, SYNC_FILE_RANGE_WRITE);
	wait_own(fd, (off_t)0, (off_t)0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
		 SYNC_FILE_RANGE_WAIT_AFTER, false);
	if (mine)
		budget_sub(mine);
}

/* A low thread wrote @bytes to @fd: past the process's budget it settles its own file. */
static void budget_charge(int fd, struct fd_path *p, uint64_t bytes)
{
	uint64_t total;

	atomic_fetch_add_explicit(&p->unsettled, bytes, memory_order_relaxed);
	total = atomic_fetch_add_explicit(&low_unsettled, bytes, memory_order_relaxed) + bytes;
	if (total > shim.cfg.dirty_budget)
		budget_settle(fd, p);
}

void low_paths_written(int fd, size_t bytes, off_t end, bool low)
{
	struct fd_path *p = &fd_paths[fd];
	int saved = errno;
	uint32_t kind = fd_kind(fd);
	uint32_t flags = atomic_load_explicit(&p->flags, memory_order_relaxed);

	if (low && (kind == FD_KIND_FILE || kind == FD_KIND_STORAGE))
		low_rate_charge(bytes);
	if (kind != FD_KIND_FILE)
		goto out;
	if ((flags & FD_DROP)) {
		uint64_t since = atomic_fetch_add_explicit(&p->since_drop, bytes,
							   memory_order_relaxed) + bytes;

		/* The drop pushes its chunk itself, at the writer's class: that steers too. */
		if (since >= drop_chunk &&
		    atomic_compare_exchange_strong(&p->since_drop, &since, 0))
			drop_behind(fd, p, since, end);
		goto out;
	}
	if (low && pieces_pushed.fd == fd && pieces_pushed.end == end && end >= 0) {
		pieces_pushed.fd = -1; /* a cut write whose pieces were each pushed: nothing left */
	} else if (low && shim.cfg.writeback_bytes) {
		uint64_t push = crossed(&p->since_steer, bytes, shim.cfg.writeback_bytes);

		if (push)
			steer(fd, p, end, push);
	}
	if (low && shim.cfg.dirty_budget)
		budget_charge(fd, p, bytes);
out:
	errno = saved;
}

void low_paths_advised(int fd, int advice)
{
	if ((unsigned)fd >= PATH_FD_MAX || advice == POSIX_FADV_WILLNEED ||
	    advice == POSIX_FADV_DONTNEED)
		return;
	atomic_fetch_and_explicit(&fd_paths[fd].flags, ~(uint32_t)FD_RA_OFF,
				  memory_order_relaxed);
}

/*
 * A drop-behind file being closed: write back and drop what is left, waiting for it, so a
 * closed log leaves nothing behind in the cache. Other files only forget their state.
 */
void low_paths_closing(int fd)
{
	struct fd_path *p = &fd_paths[fd];
	uint32_t flags = atomic_load_explicit(&p->flags, memory_order_relaxed);
	int saved = errno;

	if (shim_memory_borrowed())
		goto keep; /* a vfork child: the table is the parent's, and so is the fd's state */
	/* A low writer closing its file waits for what it wrote, so closing is no way out of
	 * the budget; anyone else only forgets it (fd_reset). */
	if (atomic_load_explicit(&p->unsettled, memory_order_relaxed) &&
	    (flags & FD_KIND_MASK) == FD_KIND_FILE && self_is_low())
		budget_settle(fd, p);
	if ((flags & FD_DROP) && (flags & FD_KIND_MASK) == FD_KIND_FILE) {
		int64_t lo = atomic_load(&p->drop_lo);
		uint64_t since = atomic_load(&p->since_drop);

		if (lo < 0 && since == 0)
			goto out; /* this fd wrote nothing: leave the cache alone */
		if (lo < 0) {
			lo = (int64_t)sys_call(SYS_lseek, fd, (off_t)0, SEEK_CUR) - (int64_t)since;
			if (lo < 0)
				lo = 0;
		}
		if (!wait_own(fd, (off_t)lo, (off_t)0, SYNC_FILE_RANGE_WAIT_BEFORE |
				      SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER, true)) {
			sys_call(SYS_sync_file_range, fd, (off_t)lo, (off_t)0,
				SYNC_FILE_RANGE_WRITE);
			sys_call(SYS_fadvise64, fd, (off_t)lo, (off_t)0, POSIX_FADV_DONTNEED);
		}
	}
out:
	fd_reset(p, 0);
keep:
	errno = saved;
}
