/* SPDX-License-Identifier: MIT */
/*
 * submit.h: what the asynchronous wrappers (wrap_uring.c, wrap_aio.c, wrap_syscall.c)
 * share (submit.c): the guard that lets a submit's inner syscall() pass, the late lookup
 * of liburing and libaio, and a low submission's gate and charge.
 */
#ifndef IOTIER_SUBMIT_H
#define IOTIER_SUBMIT_H

#include <stdint.h>

#include "core/compiler.h"
#include "preload/preload.h"

/*
 * Set while a wrapped submit function runs the real one. libaio (and liburing built with
 * libc) enter the kernel through syscall(), which is wrapped too: the iocbs and SQEs are
 * already stamped and charged, so the inner call passes straight through.
 */
extern SHIM_TLS int in_submit SHIM_HIDDEN;

/* A libaio or liburing function looked up now, when REAL() found none (see submit.c). */
SHIM_HIDDEN void *late_symbol(const char *name);
#define LATE(name)                                                                         \
	(likely(REAL(name) != NULL)                                                        \
		 ? real.name                                                               \
		 : (real.name = (__typeof__(real.name))late_symbol(#name)))

/*
 * A low thread's submission passes the adaptive gate first (docs/adaptive.md; not an urgent
 * one's): it cannot be
 * counted in flight, so it only waits while the low tier is held (or every slot is taken).
 * Then it is stamped; its bytes go to the rate limit and the controller once it succeeded.
 */
#define LOW_SUBMISSION(stamp)                                                              \
	((unlikely(adaptive_on) && !self_is_urgent() ? adaptive_async_pass() : (void)0), (stamp))

/* After a low submission succeeded: charge its @bytes to the rate limit and the controller. */
SHIM_HIDDEN void low_submitted(uint64_t bytes);

#endif
