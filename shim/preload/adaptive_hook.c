// SPDX-License-Identifier: MIT
/*
 * adaptive_hook.c: the adaptive tier inside the wrappers (see adaptive_hook.h): a high
 * thread's synchronous reads timed into the window and counted on their device's fast path
 * (dev_slot, adaptive_low.h), a low thread's I/O through the gate, asking its own device's,
 * and the splitter, and what follows an async submission.
 * A low write to a file the foreground writes or syncs passes ungated (file_shared), and
 * urgent threads (IOTIER_URGENT) are neither timed nor gated. Only low threads step the
 * controller and refresh the state file (maybe_step, publish_after_step): a high read pays
 * the timing's clock reads and a few relaxed atomics, nothing else.
 */
#include "adaptive_hook.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_low.h"
#include "adaptive_tree.h"
#include "fd_table.h"
#include "low_paths.h"
#include "real.h"
#include "state_file.h"
#include "adaptive/adaptive_region.h"
#include "adaptive/split_io.h"
#include "core/sys.h"


static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* For timing a read: precise. */
static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * For "has the window ended?" after every low I/O: the same clock to a tick (a few ms, next
 * to 100 ms windows), read from a variable instead of the time source, so that a page-cache
 * hit of a low thread stays cheap.
 */
static uint64_t coarse_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

/* When this process's state file next shows the controller's decisions. */
static _Atomic uint64_t next_publish_ns;

/*
 * After a step this process ran (adaptive_region_stepped; always a low thread, at the gate
 * or after its I/O): the exporter's view of the controller, a second stale at most while
 * low threads call. With none calling, nothing steps and the view is the last step's; its
 * adaptive_windows count then stands still.
 */
static void publish_after_step(uint64_t now)
{
	if (now < atomic_load_explicit(&next_publish_ns, memory_order_relaxed))
		return;
	atomic_store_explicit(&next_publish_ns, now + STATE_FILE_ADAPTIVE_EVERY_NS,
			      memory_order_relaxed);
	state_file_publish();
}

void adaptive_hook_init(void)
{
	struct adaptive_params p;

	/* A region handed across exec first: one target, one controller per tree. */
	adaptive_on = adaptive_tree_inherit(&shim.cfg.target);
	if (!adaptive_on && shim.cfg.target.set) {
		adaptive_params_default(&p);
		p.floor_rate = shim.cfg.low_min_rate;
		adaptive_on = adaptive_tree_create(&p, &shim.cfg.target, now_ns());
		if (!adaptive_on)
			shim_warn_once(WARN_ADAPTIVE, "cannot map the adaptive tier's state: %s; the "
				       "target is not applied", strerrordesc_np(errno));
	}
	/* Inherited or our own, this process's state file shows the tree's controller. */
	state_file_show_adaptive(adaptive_on);
	adaptive_region_stepped = publish_after_step;
}

/* No FNM_PATHNAME, as for drop-behind: '*' crosses '/', so '*' + '/LOG' is any DB's log. */
void adaptive_hook_opened(int fd, const char *path, bool writable)
{
	if (!adaptive_on || !writable || !shim.cfg.debt_log[0] || fd < 0 || !path)
		return;
	if (glob_match(shim.cfg.debt_log, path)) {
		shim_log(LOG_DEBUG, "debt guard: reading %s for write stalls", path);
		debt_log_note(&adaptive_on->debt, fd);
	}
}

/*
 * Run the controller if the window ended; errno as it was. Low threads only (after a low
 * I/O, before a low call, after an async submission); the step refreshes the state file
 * through publish_after_step.
 */
static void maybe_step(uint64_t now)
{
	int saved;

	if (likely(!adaptive_region_due(adaptive_on, now)))
		return;
	saved = errno;
	adaptive_region_maybe_step(adaptive_on, now, sys_getpid(), adaptive_self_tid());
	errno = saved;
}

/* Storage fds only: a pipe or a socket is neither timed nor held. errno as it was. */
static uint32_t kind_of(int fd)
{
	int saved = errno;
	uint32_t kind = (unsigned)fd < PATH_FD_MAX ? fd_kind(fd) : FD_KIND_OTHER;

	errno = saved;
	return kind;
}

/* ---- shared files: a lock holder is never held ---------------------------------------- */

/*
 * A high thread wrote or synced @fd, whose entry is not marked FD_SHARED yet: note its
 * file in the region for the whole tree, and mark the entry so that this fd's next high
 * writes cost one load. Once per high fd. errno as it was.
 */
void adaptive_high_note(int fd)
{
	struct fd_path *p = &fd_paths[fd];
	uint32_t flags;
	uint64_t key;

	kind_of(fd); /* classifies the fd once, and so finds its file's key */
	flags = atomic_load_explicit(&p->flags, memory_order_acquire);
	if ((flags & FD_KIND_MASK) == FD_KIND_UNKNOWN)
		return; /* not classified (a closed fd): nothing to note */
	key = atomic_load_explicit(&p->file_key, memory_order_relaxed);
	if (key)
		adaptive_region_note_shared(adaptive_on, key);
	/* Only onto the entry it was found for: an fd reset meanwhile is noted again. */
	atomic_compare_exchange_strong(&p->flags, &flags, flags | FD_SHARED);
}

void adaptive_urgent_io(void)
{
	adaptive_region_note_urgent(adaptive_on);
}

/*
 * Is @fd's file one a high thread writes or syncs? O(1) and no syscall: the entry's bit, or
 * when the region noted no file since this fd last looked, a compare; else one probe of
 * the region's table, whose answer the entry keeps.
 */
static bool file_shared(int fd, uint32_t kind)
{
	struct fd_path *p;
	uint32_t flags, notes;
	uint64_t key;

	if (kind == FD_KIND_OTHER)
		return false;
	p = &fd_paths[fd];
	flags = atomic_load_explicit(&p->flags, memory_order_acquire);
	if (flags & FD_SHARED)
		return true;
	notes = atomic_load_explicit(&adaptive_on->shared_notes, memory_order_acquire);
	if (atomic_load_explicit(&p->shared_seen, memory_order_relaxed) == notes)
		return false;
	key = atomic_load_explicit(&p->file_key, memory_order_relaxed);
	if (key && adaptive_region_file_shared(adaptive_on, key)) {
		atomic_compare_exchange_strong(&p->flags, &flags, flags | FD_SHARED);
		return true;
	}
	atomic_store_explicit(&p->shared_seen, notes, memory_order_relaxed);
	return false;
}

/* ---- the low side ---------------------------------------------------------------- */

/*
 * adaptive_low_begin for an fd whose kind is known, of @bytes (0: not known). Only a storage
 * fd's pieces may fill a reader's gap: their time is learnt (gated_piece); a buffered call's
 * is the page cache's.
 */
static uint32_t low_begin(int fd, uint32_t kind, bool write, uint64_t bytes)
{
	if (kind == FD_KIND_OTHER) /* a pipe, a socket: not the disk's business */
		return ADAPTIVE_UNGATED;
	/*
	 * A buffered write is a copy into the page cache; its device I/O is the writeback push
	 * (adaptive_push_enter) or the flusher's. So it holds no slot while it copies, but it
	 * passes the gate: it waits while the low tier is held (or every slot is taken), and a
	 * held compaction stops dirtying memory that the flusher would write at the default
	 * class.
	 */
	if (write && kind == FD_KIND_FILE) {
		low_gate_exit(&adaptive_on->gate, adaptive_gate_enter(fd, 0), 0);
		return 0;
	}
	return adaptive_gate_enter(fd, kind == FD_KIND_STORAGE ? bytes : 0);
}

/* A write to a shared file passes without waiting or a slot; its bytes are still counted. */
uint32_t adaptive_low_begin(int fd, bool write)
{
	uint32_t kind = kind_of(fd);

	if (write && file_shared(fd, kind))
		return 0;
	return low_begin(fd, kind, write, 0);
}

void adaptive_low_end(uint32_t ticket, ssize_t ret)
{
	int saved;

	if (ticket == ADAPTIVE_UNGATED)
		return;
	saved = errno;
	/* Bytes are counted here, once: a buffered write's push counts none again. */
	low_gate_exit(&adaptive_on->gate, ticket, ret > 0 ? (uint64_t)ret : 0);
	maybe_step(coarse_now_ns());
	errno = saved;
}

enum low_op { OP_PREAD, OP_PWRITE, OP_READ, OP_WRITE };

struct low_call {
	int fd;
	uint32_t kind; /* FD_KIND_*, found once per call */
	enum low_op op;
	/*
	 * A cut buffered pwrite (split_io.c, rule 2): the description its pieces' pushes wait
	 * on, and the end of what they pushed so far (-1: a piece went unpushed, at full).
	 */
	int push_own;
	off_t pushed_end;
};

/* A call not cut yet: no pushes of its own. */
#define LOW_CALL(fd_, op_) { .fd = (fd_), .op = (op_), .push_own = -1, .pushed_end = -1 }

static bool op_writes(enum low_op op)
{
	return op == OP_PWRITE || op == OP_WRITE;
}

static ssize_t real_io(const struct low_call *call, char *buf, size_t len, off_t off)
{
	switch (call->op) {
	case OP_PREAD:
		return REAL(pread)(call->fd, buf, len, off);
	case OP_PWRITE:
		return REAL(pwrite)(call->fd, buf, len, off);
	case OP_READ:
		return REAL(read)(call->fd, buf, len);
	default:
		return REAL(write)(call->fd, buf, len);
	}
}

/*
 * A cut buffered pwrite's piece, just copied: on the device before the next one is copied
 * (low_paths_piece_push), or left to the write's own push once the tier is at full.
 */
static void push_piece(struct low_call *call, off_t off, size_t len)
{
	int saved = errno;

	if (call->pushed_end == off && low_paths_piece_push(call->fd, call->push_own, off, len))
		call->pushed_end = off + (off_t)len;
	else
		call->pushed_end = -1;
	errno = saved;
}

/* One piece of a low thread's I/O, or a whole call: through the gate, then the real call. */
static ssize_t gated_piece(void *ctx, char *buf, size_t len, off_t off)
{
	struct low_call *call = ctx;
	uint32_t ticket = low_begin(call->fd, call->kind, op_writes(call->op), len);
	/* A storage piece's time is the device's: learnt, for the gaps it may fill. */
	uint64_t start = call->kind == FD_KIND_STORAGE ? now_ns() : 0;
	ssize_t ret = real_io(call, buf, len, off);

	if (start && ret > 0)
		adaptive_region_low_done(adaptive_on, dev_slot(call->fd), (uint64_t)ret,
					 now_ns() - start);
	adaptive_low_end(ticket, ret);
	if (call->push_own >= 0 && ret > 0)
		push_piece(call, off, (size_t)ret);
	return ret;
}

/*
 * The smallest piece. No level's chunk is below 16 KiB; one read from a garbled region could
 * be, and a 64 MiB call cut into bytes would never end.
 */
#define PIECE_MIN 4096u

/*
 * The splitter's allowance, asked before every piece (split_io.c, rule 10): the chunk in
 * force now, and no limit once the tier is released (no cap, or a cap whose lease ran out,
 * which the gate no longer enforces either).
 */
static size_t piece_allowance(void *ctx)
{
	const struct low_call *call = ctx;
	struct low_gate *g = &adaptive_on->gate;
	/* checked: a garbled chunk means no limit (adaptive_region.h), never a tiny piece */
	uint32_t chunk = adaptive_region_chunk(adaptive_on);
	uint64_t lease;
	bool idle;

	if (atomic_load_explicit(&g->cap, memory_order_relaxed) == LOW_GATE_UNLIMITED ||
	    chunk == ADAPTIVE_UNLIMITED)
		return 0;
	lease = atomic_load_explicit(&g->lease_ns, memory_order_relaxed);
	if (lease && coarse_now_ns() >= lease)
		return 0;
	/*
	 * The fast path: with the foreground idle on the call's device, pieces of the top
	 * level's chunk, so that a reader who returns waits behind one 1 MiB piece at most, not
	 * the rest of the call.
	 */
	chunk = adaptive_region_piece_on(adaptive_on, dev_slot(call->fd), chunk, &idle);
	/*
	 * Within the allowance one slot is one device request: the kernel cuts a larger piece
	 * (adaptive_low.h). Idle, the gate holds no slot, and the whole piece lets a disk's
	 * channels share it: cut to one request at a time, a 4-channel disk ran at 36% of
	 * untagged while the reader was off (the matrix's cloud and nvme bursty cells).
	 */
	if (!idle)
		chunk = adaptive_piece_limit(call->fd, chunk);
	return chunk < PIECE_MIN ? PIECE_MIN : chunk;
}

/*
 * The O_DIRECT alignment of @fd (split_io.c, rule 5): the larger of statx's memory and
 * offset alignments; without STATX_DIOALIGN (before 6.1, a file system that has none, a
 * sandbox without statx), the logical block size of a block device and st_blksize of a
 * file, both at least the real alignment. 0: not found. errno is the caller's to keep.
 */
static uint32_t find_dio_align(int fd, bool *blockdev)
{
	struct statx sx = { 0 };
	struct stat st;
	int sector = 0;

	if (sys_call(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_DIOALIGN, &sx) == 0) {
		*blockdev = S_ISBLK(sx.stx_mode);
		if ((sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align)
			return sx.stx_dio_offset_align > sx.stx_dio_mem_align
				       ? sx.stx_dio_offset_align
				       : sx.stx_dio_mem_align;
		st.st_blksize = sx.stx_blksize;
	} else if (sys_call(SYS_fstat, fd, &st) == 0) {
		*blockdev = S_ISBLK(st.st_mode);
	} else {
		return 0;
	}
	if (*blockdev && sys_call(SYS_ioctl, fd, BLKSSZGET, &sector) == 0 && sector > 0)
		return (uint32_t)sector;
	return st.st_blksize > 0 ? (uint32_t)st.st_blksize : 0;
}

/*
 * dio_align, found once per fd and kept in its entry beside its kind (low_paths.h), so
 * whatever forgets the kind (open, close) forgets it too. 0: unknown, do not cut.
 */
static uint32_t dio_align(int fd, bool *blockdev)
{
	struct fd_path *p = &fd_paths[fd];
	uint32_t flags = atomic_load_explicit(&p->flags, memory_order_acquire), align, found;
	int saved = errno;

	if (!(flags & FD_DIO_MASK)) {
		align = find_dio_align(fd, blockdev);
		errno = saved;
		if (!align || (align & (align - 1)))
			return 0;
		found = ((uint32_t)__builtin_ctz(align) + 1) << FD_DIO_SHIFT |
			(*blockdev ? FD_BLOCKDEV : 0);
		/* Only onto the entry it was found for: an fd reset meanwhile is found again. */
		if (!atomic_compare_exchange_strong(&p->flags, &flags, flags | found))
			return 0;
		flags |= found;
	}
	*blockdev = flags & FD_BLOCKDEV;
	return 1u << (((flags & FD_DIO_MASK) >> FD_DIO_SHIFT) - 1);
}

/*
 * May this pwrite be cut (split_io.c, rules 2, 6 and 7)? Without O_APPEND: with O_DIRECT on
 * a storage fd, or buffered without O_SYNC or O_DSYNC on a file (its pieces' pushes are
 * asked after); ending within the file size limit and, on a block device, within the
 * device; from a source that is mapped end to end. Asked only of a call larger than the
 * allowance; errno kept.
 */
static bool write_may_cut(const struct low_call *call, const char *buf, size_t n, off_t off,
			  bool blockdev)
{
	struct rlimit lim;
	uint64_t size;
	int saved = errno;
	long fl = sys_call(SYS_fcntl, call->fd, F_GETFL);
	bool ok = fl >= 0 && !(fl & O_APPEND) &&
		  (call->kind == FD_KIND_STORAGE ? (fl & O_DIRECT) : !(fl & (O_DIRECT | O_DSYNC)));

	if (ok && sys_call(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &lim) == 0 &&
	    lim.rlim_cur != RLIM_INFINITY)
		ok = (uint64_t)off + n <= lim.rlim_cur;
	if (ok && blockdev)
		ok = sys_call(SYS_ioctl, call->fd, BLKGETSIZE64, &size) == 0 &&
		     (uint64_t)off + n <= size;
	errno = saved;
	return ok && split_range_mapped(buf, n);
}

/*
 * How to cut this pread or pwrite, larger than the allowance: false to pace it whole (the
 * rules at the head of split_io.c). A buffered file reads at any alignment; a storage fd
 * needs its own.
 */
static bool may_cut(const struct low_call *call, const char *buf, size_t n, off_t off,
		    struct split_call *how)
{
	bool blockdev = false;
	uint32_t align = call->kind == FD_KIND_STORAGE ? dio_align(call->fd, &blockdev) : 1;

	if (!align || !split_may_cut(buf, n, off, align))
		return false;
	if (call->op == OP_PWRITE && !write_may_cut(call, buf, n, off, blockdev))
		return false;
	how->align = align;
	if (call->op != OP_PWRITE)
		how->failure = SPLIT_FAIL_REDO_READ;
	else if (call->kind == FD_KIND_STORAGE)
		how->failure = SPLIT_FAIL_WRITE;
	else
		how->failure = SPLIT_FAIL_SHORT_WRITE;
	return true;
}

/* A call larger than the chunk: cut when the rules allow, else paced whole. Out of line. */
static __attribute__((noinline)) ssize_t low_io_large(struct low_call *call, char *buf,
						       size_t n, off_t off)
{
	struct split_call how = { .piece = gated_piece, .allowance = piece_allowance, .ctx = call };
	size_t allowance = piece_allowance(call);
	ssize_t ret;

	if (!allowance || n <= allowance || !may_cut(call, buf, n, off, &how))
		return gated_piece(call, buf, n, off);
	if (call->op == OP_PWRITE && call->kind == FD_KIND_FILE) {
		int saved = errno;

		call->push_own = low_paths_piece_push_begin(call->fd);
		errno = saved;
		if (call->push_own < 0)
			return gated_piece(call, buf, n, off);
		call->pushed_end = off;
	}
	atomic_fetch_add_explicit(&adaptive_on->splits, 1, memory_order_relaxed);
	ret = split_io(&how, buf, n, off);
	if (call->push_own >= 0) {
		int saved = errno;

		low_paths_piece_push_end(call->fd, call->push_own,
					 ret > 0 && call->pushed_end == off + ret ? call->pushed_end : -1);
		errno = saved;
	}
	return ret;
}

static ssize_t low_io(struct low_call *call, char *buf, size_t n, off_t off)
{
	uint32_t kind = call->kind = kind_of(call->fd), chunk;
	ssize_t ret;

	/* Before the allowance is read: a lapsed lease must not let this call go whole. */
	maybe_step(coarse_now_ns());
	/* unchecked, as a filter only: whatever it says, a cut call asks piece_allowance */
	chunk = atomic_load_explicit(&adaptive_on->chunk, memory_order_relaxed);

	/* A buffered read reads what it asks: no readahead outside its slot, nor queued. */
	if (kind == FD_KIND_FILE && !op_writes(call->op))
		adaptive_low_readahead_off(call->fd);
	/* A write to a file the foreground writes too (a WAL): whole, never held. */
	if (unlikely(op_writes(call->op) && file_shared(call->fd, kind))) {
		ret = real_io(call, buf, n, off);
		adaptive_low_end(0, ret);
		return ret;
	}
	/*
	 * Pipes and sockets are left alone; read() and write() at the file position are paced
	 * whole (split_io.c, rule 1), and so is every call the splitter cannot cut without the
	 * program noticing.
	 */
	if (likely(chunk == ADAPTIVE_UNLIMITED || n <= PIECE_MIN) || kind == FD_KIND_OTHER ||
	    call->op == OP_READ || call->op == OP_WRITE)
		return gated_piece(call, buf, n, off);
	/* Within the chunk and within one request of the device (a load, after its first). */
	if (likely(n <= chunk) && n <= adaptive_piece_limit(call->fd, chunk))
		return gated_piece(call, buf, n, off);
	return low_io_large(call, buf, n, off);
}

ssize_t adaptive_read(int fd, void *buf, size_t n)
{
	struct low_call call = LOW_CALL(fd, OP_READ);

	if (!self_is_gated())
		return REAL(read)(fd, buf, n);
	return low_io(&call, buf, n, -1);
}

ssize_t adaptive_write(int fd, const void *buf, size_t n)
{
	struct low_call call = LOW_CALL(fd, OP_WRITE);

	if (!self_is_gated()) {
		adaptive_high_writes(fd);
		return REAL(write)(fd, buf, n);
	}
	return low_io(&call, (char *)buf, n, -1);
}

/*
 * When this thread's last timed read ended (0: none yet): a read that begins within
 * ADAPTIVE_QUEUED_GAP_NS of it began queued, as an open-loop reader's does when its next
 * request is already waiting (adaptive.c, "An open loop's queue"). Per thread, so no atomic.
 */
static SHIM_TLS uint64_t last_read_end_ns;

/*
 * Storage and regular files only: a pipe, a socket or a tty says nothing about the disk.
 * Once the fd's kind and device slot are known (after its first timed read), both come from
 * one load of its entry, with no call and no errno to keep; before that, kind_of and
 * dev_slot find and keep them.
 */
static inline __attribute__((always_inline)) struct adaptive_timing timing_begin(int fd)
{
	uint32_t flags = (unsigned)fd < PATH_FD_MAX
				 ? atomic_load_explicit(&fd_paths[fd].flags, memory_order_acquire)
				 : FD_KIND_OTHER;
	struct adaptive_timing t = { .kind = flags & FD_KIND_MASK };

	if (likely(t.kind != FD_KIND_UNKNOWN && (flags & FD_DEV_MASK))) {
		t.dev = ((flags & FD_DEV_MASK) >> FD_DEV_SHIFT) - 1; /* as dev_slot decodes it */
	} else {
		t.kind = kind_of(fd);
		if (t.kind != FD_KIND_STORAGE && t.kind != FD_KIND_FILE)
			return t;
		t.dev = dev_slot(fd);
	}
	if (t.kind == FD_KIND_STORAGE || t.kind == FD_KIND_FILE) {
		t.start = now_ns();
		adaptive_region_fg_begin(adaptive_on, t.dev, t.start); /* the fast path: in flight */
	}
	return t;
}

struct adaptive_timing adaptive_read_begin(int fd)
{
	if (!self_is_foreground()) {
		if (self_is_urgent())
			adaptive_urgent_io(); /* a flush's read */
		return (struct adaptive_timing){ 0 };
	}
	return timing_begin(fd);
}

/*
 * A read that moved nothing (an error, the end of a file) did not wait for the device the
 * way the window means. A buffered read under the floor was a page-cache hit: counting
 * those would bury the device's latency under memory copies.
 */
static inline __attribute__((always_inline)) void read_end(struct adaptive_timing t,
							   ssize_t ret)
{
	uint64_t end, ns;
	bool queued;

	if (!t.start)
		return;
	if (ret <= 0) {
		adaptive_region_fg_end(adaptive_on, t.dev, 0);
		return;
	}
	end = now_ns();
	ns = end - t.start;
	queued = t.start - last_read_end_ns < ADAPTIVE_QUEUED_GAP_NS;
	last_read_end_ns = end;
	/* A page-cache hit ends nothing the device saw: the start's time stands. */
	if (t.kind == FD_KIND_STORAGE || ns >= ADAPTIVE_PAGE_CACHE_FLOOR_NS) {
		adaptive_region_fg_end(adaptive_on, t.dev, end);
		/* Not beside a piece a held low thread let go in a probe: not alone. */
		if (adaptive_region_fg_alone(adaptive_on, t.dev, t.start))
			adaptive_region_note_read_queued(adaptive_on, ns, queued);
	} else {
		adaptive_region_fg_end(adaptive_on, t.dev, 0);
	}
	/* No step here: the foreground's path is these atomics (low threads step). */
}

void adaptive_read_end(struct adaptive_timing t, ssize_t ret)
{
	read_end(t, ret);
}

/*
 * A low or an urgent thread's pread: out of line, so that a high thread's timed read (the
 * common case, and the one whose cost is the foreground's) keeps a small frame.
 */
static __attribute__((noinline)) ssize_t other_pread(int fd, void *buf, size_t n, off_t off)
{
	struct low_call call = LOW_CALL(fd, OP_PREAD);

	if (self_is_gated())
		return low_io(&call, buf, n, off);
	adaptive_urgent_io(); /* a flush's read */
	return REAL(pread)(fd, buf, n, off);
}

ssize_t adaptive_pread(int fd, void *buf, size_t n, off_t off)
{
	struct adaptive_timing t;
	ssize_t ret;

	if (unlikely(!self_is_foreground()))
		return other_pread(fd, buf, n, off);
	t = timing_begin(fd);
	ret = REAL(pread)(fd, buf, n, off);
	read_end(t, ret);
	return ret;
}

ssize_t adaptive_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct low_call call = LOW_CALL(fd, OP_PWRITE);

	if (!self_is_gated()) {
		adaptive_high_writes(fd);
		return REAL(pwrite)(fd, buf, n, off);
	}
	return low_io(&call, (char *)buf, n, off);
}

void adaptive_async_submitted(uint64_t bytes)
{
	low_gate_exit(&adaptive_on->gate, 0, bytes);
	if (self_is_gated()) /* not an urgent thread's: it is neither signal nor gated */
		maybe_step(coarse_now_ns());
}
