// SPDX-License-Identifier: MIT
/*
 * adaptive_hook.c: the adaptive tier inside the wrappers (see adaptive_hook.h). Only the
 * positional calls are covered so far (pread, pwrite: what RocksDB and PostgreSQL use for
 * direct and data-file I/O); the rest of what docs/adaptive.md lists comes next.
 */
#include "adaptive_hook.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adaptive_region.h"
#include "low_paths.h"
#include "real.h"
#include "split_io.h"
#include "state_file.h"
#include "sys.h"

struct adaptive_region *adaptive_on;

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

static pid_t self_tid(void)
{
	struct state_slot *slot = self_slot;

	return slot && slot->tid ? slot->tid : sys_gettid();
}

void adaptive_hook_init(void)
{
	struct adaptive_params p;

	if (!shim.cfg.target.set)
		return;
	adaptive_params_default(&p);
	p.floor_rate = shim.cfg.low_min_rate;
	adaptive_on = adaptive_region_create(&p, &shim.cfg.target, now_ns());
	state_file_show_adaptive(adaptive_on);
	if (!adaptive_on)
		shim_warn_once(WARN_ADAPTIVE, "cannot map the adaptive tier's state: %s; the target "
			       "is not applied", strerrordesc_np(errno));
}

/* When this process's state file next shows the controller's decisions. */
static _Atomic uint64_t next_publish_ns;

/* Run the controller if the window ended; errno as it was. */
static void maybe_step(uint64_t now)
{
	int saved;

	if (likely(!adaptive_region_due(adaptive_on, now)))
		return;
	saved = errno;
	if (adaptive_region_maybe_step(adaptive_on, now, sys_getpid(), self_tid()) &&
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

struct low_call {
	int fd;
	bool write;
};

/* One piece of a low thread's I/O: through the gate, then the real call. */
static ssize_t gated_piece(void *ctx, char *buf, size_t len, off_t off)
{
	const struct low_call *call = ctx;
	struct low_gate *gate = &adaptive_on->gate;
	uint32_t ticket = 0;
	ssize_t ret;
	int saved;

	/* The pid is a syscall: only when a cap is in force is it needed. */
	if (atomic_load_explicit(&gate->cap, memory_order_relaxed) != LOW_GATE_UNLIMITED)
		ticket = low_gate_enter(gate, sys_getpid(), self_tid());
	ret = call->write ? REAL(pwrite)(call->fd, buf, len, off)
			  : REAL(pread)(call->fd, buf, len, off);
	saved = errno;
	low_gate_exit(gate, ticket, ret > 0 ? (uint64_t)ret : 0);
	maybe_step(coarse_now_ns());
	errno = saved;
	return ret;
}

static ssize_t low_io(struct low_call *call, char *buf, size_t n, off_t off)
{
	uint32_t chunk = atomic_load_explicit(&adaptive_on->chunk, memory_order_relaxed);

	if (kind_of(call->fd) == FD_KIND_OTHER) /* a pipe, a socket: not the disk's business */
		return call->write ? REAL(pwrite)(call->fd, buf, n, off)
				   : REAL(pread)(call->fd, buf, n, off);
	if (chunk != ADAPTIVE_UNLIMITED && n > chunk) {
		atomic_fetch_add_explicit(&adaptive_on->splits, 1, memory_order_relaxed);
		return split_io(gated_piece, call, buf, n, off, chunk);
	}
	return gated_piece(call, buf, n, off);
}

ssize_t adaptive_pread(int fd, void *buf, size_t n, off_t off)
{
	struct low_call call = { .fd = fd, .write = false };
	uint64_t start;
	ssize_t ret;

	if (self_is_low())
		return low_io(&call, buf, n, off);
	if (kind_of(fd) != FD_KIND_STORAGE)
		return REAL(pread)(fd, buf, n, off);
	start = now_ns();
	ret = REAL(pread)(fd, buf, n, off);
	if (ret >= 0) {
		uint64_t end = now_ns();

		adaptive_region_note_read(adaptive_on, end - start);
		maybe_step(end);
	}
	return ret;
}

ssize_t adaptive_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct low_call call = { .fd = fd, .write = true };

	if (!self_is_low())
		return REAL(pwrite)(fd, buf, n, off);
	return low_io(&call, (char *)buf, n, off);
}
