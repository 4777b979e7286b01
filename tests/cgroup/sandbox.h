/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h: a throwaway cgroup for the cgroup tests. Each test runs below its own
 * iotier-test.<pid> directory in the blkio (v1) or unified (v2) hierarchy, so whatever
 * iotier-low.<pid> children the code under test creates are found and removed by the
 * sandbox even when the test fails or is killed: tasks are moved back out and every
 * directory is removed, deepest first.
 */
#ifndef IOTIER_TEST_SANDBOX_H
#define IOTIER_TEST_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "small_file.h"

struct sandbox {
	char mount[PATH_MAX];   /* hierarchy mount point */
	char home[PATH_MAX];    /* the cgroup the test started in, as a path */
	char dir[PATH_MAX];     /* home/iotier-test.<pid> */
	char rel[PATH_MAX];     /* dir as /proc/PID/cgroup shows it */
	int version;
};

/* Create the sandbox under the caller's own cgroup. 0, or -errno (the test should skip). */
int sandbox_create(struct sandbox *sb, int version);

/* Move process @pid (all threads) into the sandbox. */
int sandbox_enter(const struct sandbox *sb, pid_t pid);

/* Move everything back home and remove the whole sandbox tree. Safe to call twice. */
void sandbox_destroy(struct sandbox *sb);

/* The cgroup path of thread @tid of @pid in the sandbox's hierarchy, as /proc shows it. */
int task_cgroup_path(const struct sandbox *sb, pid_t pid, pid_t tid, char *out, size_t len);

bool dir_exists(const char *path);

#endif
