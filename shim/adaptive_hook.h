/* SPDX-License-Identifier: MIT */
/*
 * adaptive_hook.h: where the I/O wrappers meet the adaptive tier (docs/adaptive.md). With
 * no IOTIER_TARGET the region pointer stays NULL and a wrapper pays one load and a branch.
 * With one, a high thread's reads (read, pread, readv, preadv, preadv2 and their _chk and
 * 64 names) are timed: on an O_DIRECT file or a block device every one goes into the shared
 * window, on a buffered file only those slower than a page-cache hit can be. A low thread's
 * pread and pwrite pass the gate, cut into chunk-size pieces when they are larger. Either
 * may run the controller when its window has ended.
 */
#ifndef IOTIER_ADAPTIVE_HOOK_H
#define IOTIER_ADAPTIVE_HOOK_H

#include <stdint.h>
#include <sys/types.h>

#include "shim.h"

struct adaptive_region;
extern struct adaptive_region *adaptive_on SHIM_HIDDEN;

/* From shim_init, after the configuration: map the region if a target is set. */
SHIM_HIDDEN void adaptive_hook_init(void);

/*
 * A buffered read faster than this was served by the page cache and says nothing about the
 * device: it is timed but not noted. Measured on a loop device here (docs/adaptive.md): a
 * hit of 8 KiB takes about 1 us (p99 under 2 us), a random read from the device 50 us
 * and more; a fast NVMe read or one served by readahead still in flight falls below it.
 */
#define ADAPTIVE_PAGE_CACHE_FLOOR_NS 30000ull

/* One high read being timed: start 0 when it is not (a low thread, a pipe, a socket). */
struct adaptive_timing {
	uint64_t start;
	uint32_t kind; /* FD_KIND_FILE (buffered: the floor applies) or FD_KIND_STORAGE */
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

/* pread and pwrite while adaptive_on: same results and errno as the real calls. */
SHIM_HIDDEN ssize_t adaptive_pread(int fd, void *buf, size_t n, off_t off);
SHIM_HIDDEN ssize_t adaptive_pwrite(int fd, const void *buf, size_t n, off_t off);

#endif
