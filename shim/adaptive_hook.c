// SPDX-License-Identifier: MIT
/*
 * adaptive_hook.c: the adaptive tier inside the wrappers (see adaptive_hook.h): a high
 * thread's synchronous reads timed into the window, a low thread's I/O through the gate
 * and the splitter, and the gate's side of the writeback push and of async submissions.
 */
#include "adaptive_hook.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_low.h"
#include "adaptive_region.h"
#include "adaptive_tree.h"
#include "low_paths.h"
#include "real.h"
#include "split_io.h"
#include "state_file.h"
#include "sys.h"


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
}

/* When this process's state file next shows the controller's decisions. */
static _Atomic uint64_t next_publish_ns;

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

/* Run the controller if the window ended; errno as it was. */
static void maybe_step(uint64_t now)
{
	int saved;

	if (likely(!adaptive_region_due(adaptive_on, now)))
		return;
	saved = errno;
	if (adaptive_region_maybe_step(adaptive_on, now, sys_getpid(), adaptive_self_tid()) &&
	    now >= atomic_load_explicit(&next_publish_ns, memory_order_relaxed)) {
		/* The exporter's view of the controller; a second stale at most. */
		atomic_store_explicit(&next_publish_ns, now + STATE_FILE_ADAPTIVE_EVERY_NS,
				      memory_order_relaxed);
		state_file_publish();
	}
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

/* ---- the low side ---------------------------------------------------------------- */

/* adaptive_low_begin for an fd whose kind is known. */
static uint32_t low_begin(uint32_t kind, bool write)
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
		low_gate_exit(&adaptive_on->gate, adaptive_gate_enter(), 0);
		return 0;
	}
	return adaptive_gate_enter();
}

uint32_t adaptive_low_begin(int fd, bool write)
{
	return low_begin(kind_of(fd), write);
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
};

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

/* One piece of a low thread's I/O: through the gate, then the real call. */
static ssize_t gated_piece(void *ctx, char *buf, size_t len, off_t off)
{
	const struct low_call *call = ctx;
	uint32_t ticket = low_begin(call->kind, op_writes(call->op));
	ssize_t ret = real_io(call, buf, len, off);

	adaptive_low_end(ticket, ret);
	return ret;
}

/*
 * May this call be cut? Reads always (regular files and block devices). Writes not with
 * O_APPEND: an appender's pieces could interleave with another's, and pwrite on an O_APPEND
 * fd appends too. The flags are read only here, for a call larger than the chunk.
 */
static bool splittable(const struct low_call *call)
{
	int saved;
	long fl;

	if (!op_writes(call->op))
		return true;
	saved = errno;
	fl = sys_call(SYS_fcntl, call->fd, F_GETFL);
	errno = saved;
	return fl >= 0 && !(fl & O_APPEND);
}

static ssize_t low_io(struct low_call *call, char *buf, size_t n, off_t off)
{
	uint32_t chunk = atomic_load_explicit(&adaptive_on->chunk, memory_order_relaxed);
	uint32_t kind = call->kind = kind_of(call->fd);

	/* Pipes and sockets are left alone; a buffered write is one copy, never cut. */
	if (kind == FD_KIND_OTHER || (op_writes(call->op) && kind == FD_KIND_FILE) ||
	    chunk == ADAPTIVE_UNLIMITED || n <= chunk || !splittable(call))
		return gated_piece(call, buf, n, off);
	atomic_fetch_add_explicit(&adaptive_on->splits, 1, memory_order_relaxed);
	return split_io(gated_piece, call, buf, n, off, chunk);
}

ssize_t adaptive_read(int fd, void *buf, size_t n)
{
	struct low_call call = { .fd = fd, .op = OP_READ };

	if (!self_is_low())
		return REAL(read)(fd, buf, n);
	return low_io(&call, buf, n, -1);
}

ssize_t adaptive_write(int fd, const void *buf, size_t n)
{
	struct low_call call = { .fd = fd, .op = OP_WRITE };

	if (!self_is_low())
		return REAL(write)(fd, buf, n);
	return low_io(&call, (char *)buf, n, -1);
}

/* Storage and regular files only: a pipe, a socket or a tty says nothing about the disk. */
static struct adaptive_timing timing_begin(int fd)
{
	struct adaptive_timing t = { .kind = kind_of(fd) };

	if (t.kind == FD_KIND_STORAGE || t.kind == FD_KIND_FILE)
		t.start = now_ns();
	return t;
}

struct adaptive_timing adaptive_read_begin(int fd)
{
	if (self_is_low())
		return (struct adaptive_timing){ 0 };
	return timing_begin(fd);
}

/*
 * A read that moved nothing (an error, the end of a file) did not wait for the device the
 * way the window means. A buffered read under the floor was a page-cache hit: counting
 * those would bury the device's latency under memory copies.
 */
void adaptive_read_end(struct adaptive_timing t, ssize_t ret)
{
	uint64_t end, ns;

	if (!t.start || ret <= 0)
		return;
	end = now_ns();
	ns = end - t.start;
	if (t.kind == FD_KIND_STORAGE || ns >= ADAPTIVE_PAGE_CACHE_FLOOR_NS)
		adaptive_region_note_read(adaptive_on, ns);
	maybe_step(end);
}

ssize_t adaptive_pread(int fd, void *buf, size_t n, off_t off)
{
	struct low_call call = { .fd = fd, .op = OP_PREAD };
	struct adaptive_timing t;
	ssize_t ret;

	if (self_is_low())
		return low_io(&call, buf, n, off);
	t = timing_begin(fd);
	ret = REAL(pread)(fd, buf, n, off);
	adaptive_read_end(t, ret);
	return ret;
}

ssize_t adaptive_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct low_call call = { .fd = fd, .op = OP_PWRITE };

	if (!self_is_low())
		return REAL(pwrite)(fd, buf, n, off);
	return low_io(&call, (char *)buf, n, off);
}

void adaptive_async_pass(void)
{
	low_gate_exit(&adaptive_on->gate, adaptive_gate_enter(), 0);
}

void adaptive_async_submitted(uint64_t bytes)
{
	low_gate_exit(&adaptive_on->gate, 0, bytes);
	maybe_step(coarse_now_ns());
}
