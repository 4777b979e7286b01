/* SPDX-License-Identifier: MIT */
/*
 * ioprio.h: an I/O priority value taken apart, the one decode of "class << 13 | data" for
 * everything that reads one: ioprio_get(2)'s answers, and the values bpf/ records with each
 * request and stall (bpf/iotrack.h, bpf/stalls.h). Header-only, over the kernel UAPI's
 * <linux/ioprio.h>, so the shim and tools/ can both use it without linking anything. The
 * class names are not here: they live once, in rules.c (ioprio_class_name()).
 */
#ifndef IOTIER_IOPRIO_H
#define IOTIER_IOPRIO_H

#include <linux/ioprio.h>

/* The class (IOPRIO_CLASS_NONE, _RT, _BE, _IDLE; 4..7 are invalid) of @ioprio. */
static inline unsigned ioprio_class_of(unsigned ioprio)
{
	return IOPRIO_PRIO_CLASS(ioprio);
}

/*
 * The level (0..7) of @ioprio: the low three bits of its data. Newer kernels put hints above
 * them (IOPRIO_PRIO_HINT), which no level comparison may see; IOPRIO_PRIO_LEVEL came with the
 * hints and older UAPI headers lack it, so the mask is spelled here.
 */
static inline unsigned ioprio_level_of(unsigned ioprio)
{
	return IOPRIO_PRIO_DATA(ioprio) & 7u;
}

#endif
