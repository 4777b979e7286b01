/* SPDX-License-Identifier: MIT */
/*
 * small_file.h: read and set one value in a sysfs, procfs or cgroup file, as every rig in
 * the tests does (queue depth and scheduler, vm.dirty_*, cgroup weights and membership).
 * Both are async-signal-safe, so cleanup code may use them from a signal handler.
 */
#ifndef IOTIER_SMALL_FILE_H
#define IOTIER_SMALL_FILE_H

#include <stddef.h>

/* Write @value to @path with one write(2). Returns 0 or -errno. */
int write_file(const char *path, const char *value);

/*
 * Read @path (one read(2), at most @len - 1 bytes) into @buf as a string, without its
 * trailing newlines. Returns 0 or -errno; @buf is "" on error.
 */
int read_small(const char *path, char *buf, size_t len);

#endif
