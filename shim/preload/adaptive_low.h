/* SPDX-License-Identifier: MIT */
/*
 * adaptive_low.h: the adaptive tier's region as the shim's lower files see it, and the low
 * side of its gate: what both the wrappers' hook (adaptive_hook.c) and the writeback push
 * (low_paths.c) call, so that neither calls the other. With no IOTIER_TARGET the region
 * pointer stays NULL and a caller pays one load and a branch.
 */
#ifndef IOTIER_ADAPTIVE_LOW_H
#define IOTIER_ADAPTIVE_LOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fd_table.h"
#include "core/compiler.h"

struct adaptive_region;
extern struct adaptive_region *adaptive_on SHIM_HIDDEN;

/* The calling thread's id, from its state slot when it has one. */
SHIM_HIDDEN pid_t adaptive_self_tid(void);

/*
 * Before a low I/O of @bytes (0: not known, or its time is not the device's) to @fd's
 * device (dev_slot, below): wait until it may go (adaptive_region_gate_enter_on: at full
 * once the foreground is idle on that device, in a reader's gap there if it fits); the
 * ticket goes to low_gate_exit. At full, one load and a branch. Keeps errno.
 */
SHIM_HIDDEN uint32_t adaptive_gate_enter(int fd, uint64_t bytes);

/*
 * The fast path's slot of @fd's device (adaptive_region_dev_slot): its whole disk's, a
 * block device's own number, a file's file system's. Found once per fd (dev_slot_find: an
 * fstat, and once per device a sysfs read) and kept in its entry (FD_DEV_MASK): after that,
 * one load. ADAPTIVE_DEV_ANY when it cannot be found (a high read then counts in the
 * catch-all, a low I/O asks every slot). For an fd below PATH_FD_MAX whose kind is known
 * (fd_kind); errno kept.
 */
SHIM_HIDDEN __attribute__((noinline)) uint32_t dev_slot_find(int fd);
static inline uint32_t dev_slot(int fd)
{
	uint32_t v = (atomic_load_explicit(&fd_paths[fd].flags, memory_order_relaxed) &
		      FD_DEV_MASK) >> FD_DEV_SHIFT;

	return likely(v) ? v - 1 : dev_slot_find(fd);
}

/*
 * The writeback push of a low thread (low_paths.c), on @fd's device (dev_slot):
 * adaptive_push_chunk: 0 while the tier is at full or there is no target (push as without
 * one), else the size of each gated piece of @fd's range (1 MiB at least while the
 * foreground is idle on the device: adaptive_region_piece_on; never more than one request
 * of the device: adaptive_piece_limit). Each piece of @bytes holds its slot
 * (adaptive_push_enter / _exit) while it is submitted, and is waited for without one before
 * the next; it goes at full once the foreground is idle on its device, and in a reader's
 * gap there when it fits (adaptive_region_gate_enter_on).
 */
SHIM_HIDDEN uint32_t adaptive_push_chunk(int fd);
SHIM_HIDDEN uint32_t adaptive_push_enter(int fd, uint64_t bytes);
SHIM_HIDDEN void adaptive_push_exit(uint32_t ticket);

/*
 * The largest request @fd's device takes (its queue's max_sectors_kb, rounded down to a
 * power of two; a partition's disk's), in bytes; 0 when unknown or none. The kernel cuts a
 * larger bio into several requests, each a device I/O, while the gate counts one. Read once
 * per device and kept per fd (FD_REQ_MASK): after the first call, one load.
 */
SHIM_HIDDEN uint32_t adaptive_request_max(int fd);

/* @piece, clamped to adaptive_request_max(@fd): one gated piece is one request. */
SHIM_HIDDEN uint32_t adaptive_piece_limit(int fd, uint32_t piece);

/*
 * Before a low thread's read of the buffered file @fd under a target: the kernel's
 * readahead, which it would submit during the call and leave in flight after it, outside
 * every slot, is turned off for the fd's description (POSIX_FADV_RANDOM: each read reads
 * what it asks, within its piece and its slot), at full too and whatever the program
 * advised. At full, a sequential reader's readahead (4 MiB windows on the reference disk,
 * doubled by POSIX_FADV_SEQUENTIAL) filled the scheduler's queue, and mq-deadline served
 * that stream in sector order until a returning reader's read reached its 500 ms deadline:
 * 0.4-0.7 s for the first read back, 195-643x alone for an open-loop reader. Without
 * readahead the sequential reads lose 2% (1 MiB preads, 166 MB/s against 170). One load
 * and a test once done; errno kept.
 */
SHIM_HIDDEN void adaptive_low_readahead_off(int fd);

/*
 * A low thread's asynchronous submission of @n I/Os (io_submit, io_uring_enter, liburing's
 * submits) to device slot @dev (adaptive_submit_dev; ADAPTIVE_DEV_ANY: several, or not
 * known): wait, bounded by IOTIER_GATE_WAIT, until min(@n, cap) slots are free and take
 * them (their tickets in @tickets, room for LOW_GATE_HOLDERS), to be released by
 * adaptive_async_exit once the submission returned: as the push's pieces, its I/Os hold
 * their slots while they are submitted, not until they complete (nobody sees that: the
 * program reaps them). At full, or with the foreground idle on @dev, none. Keeps errno.
 */
SHIM_HIDDEN uint32_t adaptive_async_enter(uint32_t dev, uint32_t n, uint32_t *tickets);
SHIM_HIDDEN void adaptive_async_exit(const uint32_t *tickets, uint32_t taken);

/*
 * The device of a submission, one I/O at a time: @dev, what its I/Os so far give
 * (ADAPTIVE_SUBMIT_NONE before the first), joined with an I/O to @fd (-1: not an fd, a
 * fixed file of io_uring's). Returns the slot they all share, or ADAPTIVE_DEV_ANY once two
 * differ or one is not known; an fd that is no storage or file (a socket) changes nothing.
 * A submission left at ADAPTIVE_SUBMIT_NONE is of no known device. Keeps errno.
 */
#define ADAPTIVE_SUBMIT_NONE (UINT32_MAX - 1u) /* beside ADAPTIVE_DEV_ANY: not a slot */
SHIM_HIDDEN uint32_t adaptive_submit_dev(uint32_t dev, int fd);

#endif
