/* SPDX-License-Identifier: MIT */
/*
 * low_paths.h: the paths by which a low thread's I/O escapes its own priority, and the hooks
 * the wrappers call to close them: writeback steering (buffered writes pushed to the device
 * by the writer itself, so the bios carry its class instead of the flusher's), drop-behind
 * for log files, the per-process low-tier rate limit, and ioprio stamping of io_uring SQEs
 * and libaio iocbs. docs/low-paths.md says what each one covers and what it cannot.
 *
 * Per-fd state lives in fd_table.h's fixed table indexed by fd: nothing here allocates, and a high thread writing a file nobody asked to drop pays one relaxed load
 * and a branch after its write.
 */
#ifndef IOTIER_LOW_PATHS_H
#define IOTIER_LOW_PATHS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "fd_table.h"
#include "globals.h"


/* Set once by low_paths_init() from the configuration. */
struct low_paths_on {
	bool any_write;  /* steering, drop-behind, a rate or a budget: writes may need a look */
	bool rate;       /* IOTIER_LOW_RATE is set: low reads need a look too */
	bool drop;       /* IOTIER_DROP_BEHIND has globs: opens need a path match */
};
extern struct low_paths_on low_paths_on SHIM_HIDDEN;

SHIM_HIDDEN void low_paths_init(void);

static inline bool self_is_low(void)
{
	struct state_slot *slot = self_slot;

	return slot && __atomic_load_n(&slot->tier, __ATOMIC_RELAXED) == IOTIER_LOW;
}

/*
 * Is this thread urgent (IOTIER_URGENT: RocksDB's flush threads by default)? The adaptive
 * tier neither times its reads (it is not what users feel) nor holds it, whatever its tier.
 */
static inline bool self_is_urgent(void)
{
	struct state_slot *slot = self_slot;

	return slot && (__atomic_load_n(&slot->flags, __ATOMIC_RELAXED) & SLOT_URGENT);
}

/* Does the adaptive tier's gate hold this thread: low and not urgent? */
static inline bool self_is_gated(void)
{
	return self_is_low() && !self_is_urgent();
}

/* Do this thread's reads feed the adaptive tier's signal: neither low nor urgent? */
static inline bool self_is_foreground(void)
{
	return !self_is_low() && !self_is_urgent();
}


/* Out of line: the rare case where a hook has work to do. errno is kept by the callee. */
SHIM_HIDDEN void low_paths_written(int fd, size_t bytes, off_t end, bool low);

/*
 * A low thread's buffered pwrite cut into pieces under a target (split_io.c, rule 2): each
 * piece is pushed to the device as soon as it is copied, and waited for, so that the next
 * piece's copy cannot join it in one folio's writeback. begin: the description the waits
 * use, or -1 where pieces cannot be pushed so (the call then goes whole). piece: push
 * [@off, @off + @len) in the tier's pieces; false, having done nothing, at full (the rest
 * is the write's own push). end: close @own; @pushed_end (-1: not all of it) tells the
 * write's push that nothing is left. errno is the caller's to keep.
 */
SHIM_HIDDEN int low_paths_piece_push_begin(int fd);
SHIM_HIDDEN bool low_paths_piece_push(int fd, int own, off_t off, size_t len);
SHIM_HIDDEN void low_paths_piece_push_end(int fd, int own, off_t pushed_end);
SHIM_HIDDEN void low_paths_read(int fd, size_t bytes);
SHIM_HIDDEN void low_paths_opened(int fd, const char *path);
SHIM_HIDDEN void low_paths_closing(int fd);

/*
 * The program gave @fd an @advice (posix_fadvise): one on the access pattern replaces the
 * adaptive tier's POSIX_FADV_RANDOM in the kernel, so FD_RA_OFF is cleared and the next low
 * read under a target advises it again. errno kept.
 */
SHIM_HIDDEN void low_paths_advised(int fd, int advice);



/* Wait until the low tier may move @bytes more; interrupted by a signal, it returns early. */
SHIM_HIDDEN void low_rate_charge(uint64_t bytes);

/*
 * After a write of @ret bytes to @fd that ended at file offset @end (-1: at the file
 * position). High threads only look further on files marked for drop-behind.
 */
static inline void low_paths_after_write(int fd, ssize_t ret, off_t end)
{
	bool low;

	if (likely(!low_paths_on.any_write) || ret <= 0 || (unsigned)fd >= PATH_FD_MAX)
		return;
	low = self_is_low();
	if (likely(!low) &&
	    !(atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed) & FD_DROP))
		return;
	low_paths_written(fd, (size_t)ret, end, low);
}

/* After a read of @ret bytes: only the rate limit cares, and only for low threads. */
static inline void low_paths_after_read(int fd, ssize_t ret)
{
	if (likely(!low_paths_on.rate) || ret <= 0 || (unsigned)fd >= PATH_FD_MAX ||
	    !self_is_low())
		return;
	low_paths_read(fd, (size_t)ret);
}

/* An fd was opened by path, or is about to be closed: reset its state. */
static inline void low_paths_after_open(int fd, const char *path)
{
	if ((unsigned)fd < PATH_FD_MAX)
		low_paths_opened(fd, path);
}

/*
 * F_SETFL succeeded on @fd: O_DIRECT may have come or gone, which makes a file storage or
 * buffered, so its kind is found again on next use. The flags belong to the open file
 * description, shared with a vfork child, so its change is the parent's too.
 */
static inline void low_paths_flags_set(int fd)
{
	if ((unsigned)fd < PATH_FD_MAX)
		atomic_fetch_and_explicit(&fd_paths[fd].flags, ~FD_KIND_MASK, memory_order_release);
}

static inline void low_paths_before_close(int fd)
{
	if ((unsigned)fd < PATH_FD_MAX &&
	    atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed))
		low_paths_closing(fd);
}

#endif
