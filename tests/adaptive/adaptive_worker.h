/* SPDX-License-Identifier: MIT */
/*
 * adaptive_worker.h: what the adaptive tier's end-to-end tests share. Each re-runs itself as
 * a worker ("SELF worker ARG") under the shim with a target and IOTIER_LOW=bg-*, and the
 * worker judges the shim by the states and counts of the shared region it finds mapped in
 * its own process.
 */
#ifndef IOTIER_TESTS_ADAPTIVE_WORKER_H
#define IOTIER_TESTS_ADAPTIVE_WORKER_H

#include "adaptive_region.h"

/* The worker's own adaptive region, found in /proc/self/maps; NULL when there is none. */
struct adaptive_region *adaptive_worker_region(void);

/* Kill a worker still running however the test ends (cleanup.h): 0, or -1. */
int adaptive_worker_kill_on_exit(void);

/*
 * Run "@self worker @arg" under @preload with IOTIER_TARGET=@target and wait for it: its
 * exit status, or T_EXIT_FAIL when it did not exit.
 */
int adaptive_worker_run(const char *self, const char *preload, const char *target,
			const char *arg);

#endif
