/* SPDX-License-Identifier: MIT */
/*
 * adaptive_worker.h: what the adaptive tier's end-to-end tests share. Each re-runs itself as
 * a worker ("SELF worker ARGS...") under the shim with a target and IOTIER_LOW=bg-*, and the
 * worker judges the shim by the states and counts of the shared region it finds mapped in
 * its own process, and by where its low threads sleep (a low thread waits at the gate in
 * futex). Tests that run under the shim themselves (adaptive-errno, tree-test) use the same
 * two probes.
 */
#ifndef IOTIER_TESTS_ADAPTIVE_WORKER_H
#define IOTIER_TESTS_ADAPTIVE_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "adaptive/adaptive_region.h"

/* The memfd link of the shim's region, as /proc/self/maps and /proc/self/fd show it. */
#define ADAPTIVE_REGION_LINK "/memfd:" ADAPTIVE_REGION_NAME

/* This process's adaptive region (self_maps.h); NULL when there is none (no shim, no target). */
struct adaptive_region *adaptive_worker_region(void);

/*
 * The same, for a test that runs under the shim itself: the region, or NULL after printing
 * the one failure line every such test gives when the shim or its target is missing.
 */
struct adaptive_region *adaptive_worker_region_or_fail(void);

/* The high tier's reads noted into @r's current window, summed over every CPU slot. */
uint64_t adaptive_worker_noted(struct adaptive_region *r);

/* The syscall thread @tid of this process is in right now, -1 if none or unknown. */
long adaptive_worker_thread_syscall(pid_t tid);

/* Is thread @tid of this process in the futex syscall right now? */
bool adaptive_worker_in_futex(pid_t tid);

/* Does adaptive_view_read copy @r whole (its seqlock even, every field sane)? */
bool adaptive_worker_view_readable(struct adaptive_region *r);

/*
 * Write @bytes (a multiple of 4096) of one byte to @path, created or truncated, and fsync it:
 * a file for the tests to read. 0, or test_fail's status after one line naming the error.
 */
int adaptive_worker_write_file(const char *path, uint32_t bytes);

/* CLOCK_MONOTONIC in nanoseconds, the shim's own clock for its stamps. */
uint64_t adaptive_worker_now_ns(void);

/*
 * A child of the tree that does low I/O (@low_io, false on an error) once a millisecond
 * until @stop_fd becomes readable or 40 seconds pass, so that it steps the controller
 * whenever a window has ended: 0 when told to stop, 1 after 40 seconds, 2 on an error. The
 * limit is a guard against a parent that never says stop, under the tests' 60 s alarm: a
 * child stopped (SIGSTOP) for most of stepper-test's takeover, which runs about 10 s, ran
 * out of a 10 s limit before it was told.
 */
int adaptive_worker_child_loop(int stop_fd, bool (*low_io)(void));

/*
 * Fork and exec "@self worker child @dir @stop_fd" with IOTIER_TEST_STEP=@how (the test
 * hook of preload/adaptive_tree.c: leave or stop inside a step); its pid.
 */
pid_t adaptive_worker_start_child(const char *self, const char *how, const char *dir, int stop_fd);

/* Kill a worker still running however the test ends (cleanup.h): 0, or -1. */
int adaptive_worker_kill_on_exit(void);

/*
 * Run "@self worker @args..." (@args NULL-terminated) under @preload with IOTIER_LOW=bg-*,
 * IOTIER_TARGET=@target and IOTIER_LOG=warn, plus the "NAME=VALUE" strings of @env (NULL, or
 * NULL-terminated), and wait for it: its exit status, or T_EXIT_FAIL when it did not exit.
 */
int adaptive_worker_run(const char *self, const char *preload, const char *target,
			char *const env[], const char *const args[]);

#endif
