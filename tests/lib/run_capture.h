/* SPDX-License-Identifier: MIT */
/*
 * run_capture.h: run a program to its end and keep what it printed, for tests that judge
 * a command's exit status and output (iotier itself, mkfs).
 */
#ifndef IOTIER_RUN_CAPTURE_H
#define IOTIER_RUN_CAPTURE_H

#include <stddef.h>

/*
 * Run @argv (found on PATH when argv[0] has no slash) with stdout and stderr, interleaved,
 * into @out as a string, cut at @size - 1 bytes (the rest is read and dropped); @out NULL
 * leaves both to the test's own. @before_exec, when not NULL, runs in the child just before
 * exec; if it returns nonzero the child exits 126. Returns the exit status (127: could not
 * exec), or -1 when it could not start or was killed by a signal.
 */
int run_capture(const char *const *argv, char *out, size_t size, int (*before_exec)(void));

/*
 * A @before_exec for run_capture: become user and group nobody (65534) with no
 * supplementary groups, so that the program has no capabilities and regains none at exec.
 */
int run_as_nobody(void);

#endif
