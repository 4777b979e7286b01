/* SPDX-License-Identifier: MIT */
/*
 * adaptive_hook.h: where the I/O wrappers meet the adaptive tier (docs/adaptive.md). With
 * no IOTIER_TARGET the region pointer stays NULL and a wrapper pays one load and a branch.
 * With one, a high thread's reads (read, pread, readv, preadv, preadv2 and their _chk and
 * 64 names) are timed: on an O_DIRECT file or a block device every one goes into the shared
 * window, on a buffered file only those slower than a page-cache hit can be. A low thread's
 * reads and writes pass the gate; a pread or a pwrite (O_DIRECT, or buffered with each piece
 * pushed as it is copied) larger than the chunk is cut into pieces where the program cannot
 * tell (split_io.c), any other call is paced whole.
 * Either may run the controller when its window has ended.
 */
#ifndef IOTIER_ADAPTIVE_HOOK_H
#define IOTIER_ADAPTIVE_HOOK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "adaptive_low.h"
#include "low_paths.h"
#include "core/compiler.h"

/* From shim_init, after the configuration: map the region if a target is set. */
SHIM_HIDDEN void adaptive_hook_init(void);

/*
 * The program opened @path as @fd, for writing if @writable: if it is the database's log
 * (IOTIER_DEBT_LOG), the debt guard starts reading it. errno as it was.
 */
SHIM_HIDDEN void adaptive_hook_opened(int fd, const char *path, bool writable);

/*
 * A buffered read faster than this was served by the page cache and says nothing about the
 * device: it is timed but not noted. Measured on a loop device here
 * (docs/bench/adaptive-measurements.md): a hit of 8 KiB takes about 1 us (p99 under 2 us),
 * a random read from the device 50 us and more; a fast NVMe read or one served by
 * readahead still in flight falls below it.
 */
#define ADAPTIVE_PAGE_CACHE_FLOOR_NS 30000ull

/* One high read being timed: start 0 when it is not (a low thread, a pipe, a socket). */
struct adaptive_timing {
	uint64_t start;
	uint32_t kind; /* FD_KIND_FILE (buffered: the floor applies) or FD_KIND_STORAGE */
	uint32_t dev;  /* the fast path's slot of its device (adaptive_region_dev_slot) */
};

SHIM_HIDDEN struct adaptive_timing adaptive_read_begin(int fd);
/* The read returned @ret: note it in the window if it moved data and counts; errno kept. */
SHIM_HIDDEN void adaptive_read_end(struct adaptive_timing t, ssize_t ret);

/*
 * @call, a read of @fd by this thread: when a target is set and the thread is high, timed
 * into the window. Without a target, one load and a branch, as before.
 */
#define ADAPTIVE_TIMED_READ(fd, call)                                                      \
	(likely(!adaptive_on) ? (call) : ({                                                \
		struct adaptive_timing timing_ = adaptive_read_begin(fd);                  \
		ssize_t ret_ = (call);                                                     \
		adaptive_read_end(timing_, ret_);                                          \
		ret_;                                                                      \
	}))


/*
 * read, write, pread and pwrite while adaptive_on: same results, errno, file offset and
 * content as the real calls. A low thread's pread, or pwrite without O_APPEND (O_DIRECT, or
 * buffered without O_SYNC), larger than the allowance is cut into pieces, each through the
 * gate, when the rules at the head of split_io.c allow; read and write (the shared file
 * position) never are.
 */
SHIM_HIDDEN ssize_t adaptive_pread(int fd, void *buf, size_t n, off_t off);
SHIM_HIDDEN ssize_t adaptive_pwrite(int fd, const void *buf, size_t n, off_t off);
SHIM_HIDDEN ssize_t adaptive_read(int fd, void *buf, size_t n);
SHIM_HIDDEN ssize_t adaptive_write(int fd, const void *buf, size_t n);

/*
 * A low thread's call that is gated whole (the vectored ones): begin before it, end after
 * it with its return value. Pipes and sockets get ADAPTIVE_UNGATED and are left alone; a
 * buffered write waits while the tier is held but holds no slot. Both keep errno.
 */
#define ADAPTIVE_UNGATED UINT32_MAX
SHIM_HIDDEN uint32_t adaptive_low_begin(int fd, bool write);
SHIM_HIDDEN void adaptive_low_end(uint32_t ticket, ssize_t ret);

/*
 * A high thread (or an untagged one) writes or syncs @fd while a target is set: its file is
 * shared with the foreground, and a low thread's writes to it are never held
 * (docs/adaptive.md, "A lock holder is never held"). One load and a branch once the fd is
 * marked; the first time, a statx at most (adaptive_high_note).
 */
SHIM_HIDDEN void adaptive_high_note(int fd);

/* An urgent thread's I/O: noted in the window, so that a baseline probe under way is void. */
SHIM_HIDDEN void adaptive_urgent_io(void);

static inline void adaptive_high_writes(int fd)
{
	if (unlikely(self_is_urgent()))
		adaptive_urgent_io(); /* a flush's write or sync */
	if ((unsigned)fd < PATH_FD_MAX &&
	    unlikely(!(atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed) &
		       FD_SHARED)))
		adaptive_high_note(fd);
}

/* Before a sync of @fd (fsync, fdatasync, sync_file_range): a high one notes the file. */
static inline void adaptive_before_sync(int fd)
{
	if (unlikely(adaptive_on) && !self_is_gated())
		adaptive_high_writes(fd);
}

/*
 * @call on @fd, gated whole when a target is set and the thread is low (not urgent); any
 * other thread's write notes its file as shared.
 */
#define ADAPTIVE_GATED(fd, write, call)                                                    \
	(likely(!adaptive_on) || !self_is_gated()                                          \
		 ? ((write) && adaptive_on ? adaptive_high_writes(fd) : (void)0), (call)   \
		 : ({                                                                      \
			   uint32_t ticket_ = adaptive_low_begin(fd, write);                 \
			   ssize_t ret_ = (call);                                            \
			   adaptive_low_end(ticket_, ret_);                                  \
			   ret_;                                                             \
		   }))

/*
 * After an io_uring or libaio submission of a low thread succeeded (its slots, taken by
 * adaptive_async_enter, are released by then): its @bytes feed the controller, and the
 * thread steps it if the window ended.
 */
SHIM_HIDDEN void adaptive_async_submitted(uint64_t bytes);

#endif
