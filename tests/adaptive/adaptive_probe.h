/* SPDX-License-Identifier: MIT */
/*
 * adaptive_probe.h: what the adaptive tests see of the shim from inside a preloaded
 * process: the shared region (found by its memfd name in /proc/self/maps), and whether a
 * thread sleeps in futex, which is where a low thread waits at the gate.
 */
#ifndef IOTIER_ADAPTIVE_PROBE_H
#define IOTIER_ADAPTIVE_PROBE_H

#include <stdbool.h>
#include <sys/types.h>

#include "adaptive_region.h"

/* The shim's region in this process, or NULL (no shim, or no target). */
struct adaptive_region *adaptive_probe_region(void);

/* Is thread @tid of this process in the futex syscall right now? */
bool adaptive_probe_in_futex(pid_t tid);

#endif
