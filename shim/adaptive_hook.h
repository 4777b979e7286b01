/* SPDX-License-Identifier: MIT */
/*
 * adaptive_hook.h: where the I/O wrappers meet the adaptive tier (docs/adaptive.md). With
 * no IOTIER_TARGET the region pointer stays NULL and a wrapper pays one load and a branch.
 * With one, a high thread's pread on an O_DIRECT file or a block device is timed into the
 * shared window, and a low thread's pread and pwrite pass the gate, cut into chunk-size
 * pieces when they are larger. Either may run the controller when its window has ended.
 */
#ifndef IOTIER_ADAPTIVE_HOOK_H
#define IOTIER_ADAPTIVE_HOOK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "adaptive_low.h"
#include "low_paths.h"
#include "shim.h"


/* From shim_init, after the configuration: map the region if a target is set. */
SHIM_HIDDEN void adaptive_hook_init(void);

/*
 * read, write, pread and pwrite while adaptive_on: same results and errno as the real calls.
 * A low thread's call larger than the chunk is cut into pieces (never a buffered write, never
 * O_APPEND), each through the gate.
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

/* @call on @fd, gated whole when a target is set and the thread is low. */
#define ADAPTIVE_GATED(fd, write, call)                                                    \
	(likely(!adaptive_on) || !self_is_low()                                            \
		 ? (call)                                                                  \
		 : ({                                                                      \
			   uint32_t ticket_ = adaptive_low_begin(fd, write);                 \
			   ssize_t ret_ = (call);                                            \
			   adaptive_low_end(ticket_, ret_);                                  \
			   ret_;                                                             \
		   }))

/*
 * An io_uring or libaio submission of a low thread: it cannot be counted in flight (it
 * completes later, elsewhere), so it only passes the gate first: it waits while the low
 * tier is held or every slot is taken, and holds none. @bytes: what was submitted.
 */
SHIM_HIDDEN void adaptive_async_pass(void);
SHIM_HIDDEN void adaptive_async_submitted(uint64_t bytes);

#endif
