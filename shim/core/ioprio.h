/* SPDX-License-Identifier: MIT */
/*
 * ioprio.h: an I/O priority's class and level, encoded and decoded in one place for the
 * shim and the tools. The kernel's UAPI header <linux/ioprio.h> holds the layout (class in
 * the top bits, the level below); these are its macros under names that say what they
 * give, so nobody writes the shift by hand (ioprio_make, not ioprio_value: that name is the
 * UAPI header's own three-argument helper since 6.7). The class numbers are the kernel's own
 * IOPRIO_CLASS_* (none, rt, be, idle).
 */
#ifndef IOTIER_IOPRIO_H
#define IOTIER_IOPRIO_H

#include <linux/ioprio.h>

/* The value ioprio_set(2) takes for @ioclass at @level. */
static inline int ioprio_make(unsigned ioclass, unsigned level)
{
	return (int)IOPRIO_PRIO_VALUE(ioclass, level);
}

/* The class of @ioprio: IOPRIO_CLASS_NONE, _RT, _BE or _IDLE. */
static inline unsigned ioprio_class(int ioprio)
{
	return (unsigned)IOPRIO_PRIO_CLASS((unsigned)ioprio);
}

/* The level (0 highest, 7 lowest) of @ioprio; the hint bits of newer kernels are not part. */
static inline unsigned ioprio_level(int ioprio)
{
#ifdef IOPRIO_PRIO_LEVEL
	return (unsigned)IOPRIO_PRIO_LEVEL((unsigned)ioprio);
#else
	return (unsigned)IOPRIO_PRIO_DATA((unsigned)ioprio) & 7u; /* uapi before 6.7: no hints */
#endif
}

#endif
