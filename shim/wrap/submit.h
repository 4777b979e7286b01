/* SPDX-License-Identifier: MIT */
/*
 * submit.h: what the asynchronous wrappers (wrap_uring.c, wrap_aio.c, wrap_syscall.c)
 * share (submit.c): the guard that lets a submit's inner syscall() pass, the late lookup
 * of liburing and libaio, and a low submission's gate and charge.
 */
#ifndef IOTIER_SUBMIT_H
#define IOTIER_SUBMIT_H

#include <stdint.h>

#include "adaptive/low_gate.h"
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
 * The gate slots a low submission holds while it runs (adaptive_async_enter): as many as
 * it submits I/Os, up to the cap. @taken is set to 0 before the submission (the tickets
 * are written only as taken), and they are released after it by LOW_SUBMITTED whatever it
 * returned.
 */
struct low_slots {
	uint32_t taken;
	uint32_t tickets[LOW_GATE_HOLDERS];
};

/*
 * The device of the submission being stamped (adaptive_submit_dev): set to
 * ADAPTIVE_SUBMIT_NONE by LOW_SUBMISSION, joined with each read or write the stamp reads
 * (submit_note_fd), read by the gate right after. A signal handler's own submission in
 * between changes only which device's reads this one asks.
 */
extern SHIM_TLS uint32_t submit_dev SHIM_HIDDEN;

static inline void submit_note_fd(int fd)
{
	if (unlikely(adaptive_on))
		submit_dev = adaptive_submit_dev(submit_dev, fd);
}

/* The gate of a stamped submission of @count I/Os; returns its @bytes. */
static inline uint64_t low_submission_gate(struct low_slots *slots, uint32_t count,
					   uint64_t bytes)
{
	if (unlikely(adaptive_on) && !self_is_urgent())
		slots->taken = adaptive_async_enter(submit_dev, count, slots->tickets);
	return bytes;
}

/*
 * A low thread's submission of @count I/Os is stamped (@stamp, its bytes), which finds its
 * device, then passes the adaptive gate (docs/adaptive.md; not an urgent one's): it waits,
 * bounded, until @count slots are free (or all of a smaller cap), unless the foreground is
 * idle on that device, and holds them in @slots while it is submitted. Its bytes go to the
 * rate limit and the controller once it succeeded.
 */
#define LOW_SUBMISSION(slots, count, stamp)                                                \
	(submit_dev = ADAPTIVE_SUBMIT_NONE, low_submission_gate((slots), (count), (stamp)))

/* After the submission returned: its slots released, and on success its bytes charged. */
#define LOW_SUBMITTED(slots, bytes, ret)                                                   \
	do {                                                                               \
		if (unlikely((slots)->taken))                                              \
			adaptive_async_exit((slots)->tickets, (slots)->taken);             \
		if ((bytes) && (ret) > 0)                                                  \
			low_submitted(bytes);                                              \
	} while (0)

/* A submission's count of I/Os as the gate takes it (a count the program passed: any long). */
static inline uint32_t low_submit_count(long n)
{
	return n <= 0 ? 0 : n > LOW_GATE_HOLDERS ? LOW_GATE_HOLDERS : (uint32_t)n;
}

/* After a low submission succeeded: charge its @bytes to the rate limit and the controller. */
SHIM_HIDDEN void low_submitted(uint64_t bytes);

#endif
