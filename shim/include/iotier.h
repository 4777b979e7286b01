/* SPDX-License-Identifier: MIT */
/*
 * iotier.h: the public API of iotier, for programs that want to name their own tier instead
 * of (or as well as) being matched by rules. Link with `pkg-config --libs iotier`, which adds
 * the small static helper libiotier-api.a: when libiotier.so is preloaded the helper forwards
 * to it, so rules and explicit calls agree; without the shim it sets the I/O priority itself.
 */
#ifndef IOTIER_H
#define IOTIER_H

#ifdef __cplusplus
extern "C" {
#endif

enum iotier_tier {
	IOTIER_DEFAULT = 0, /* no explicit choice: the rules decide */
	IOTIER_HIGH = 1,    /* foreground: IOTIER_HIGH_CLASS, or the thread's own priority */
	IOTIER_LOW = 2,     /* background: IOTIER_LOW_CLASS (idle unless configured) */
};

/*
 * Put the calling thread in @tier. Returns 0, or -1 with errno set (EINVAL for an unknown
 * tier, or what ioprio_set(2) reported). IOTIER_DEFAULT hands the thread back to the rules.
 */
int iotier_set_tier(int tier);

/* The calling thread's effective tier: IOTIER_LOW, IOTIER_HIGH or IOTIER_DEFAULT (untagged). */
int iotier_get_tier(void);

#ifdef __cplusplus
}
#endif
#endif
