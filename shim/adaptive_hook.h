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
#include <sys/types.h>

#include "shim.h"

struct adaptive_region;
extern struct adaptive_region *adaptive_on SHIM_HIDDEN;

/* From shim_init, after the configuration: map the region if a target is set. */
SHIM_HIDDEN void adaptive_hook_init(void);

/*
 * The program opened @path as @fd, for writing if @writable: if it is the database's log
 * (IOTIER_DEBT_LOG), the debt guard starts reading it. errno as it was.
 */
SHIM_HIDDEN void adaptive_hook_opened(int fd, const char *path, bool writable);

/* pread and pwrite while adaptive_on: same results and errno as the real calls. */
SHIM_HIDDEN ssize_t adaptive_pread(int fd, void *buf, size_t n, off_t off);
SHIM_HIDDEN ssize_t adaptive_pwrite(int fd, const void *buf, size_t n, off_t off);

#endif
