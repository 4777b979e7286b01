/* SPDX-License-Identifier: MIT */
/*
 * write_file.h: set one value in a sysfs, procfs or cgroup file, as every rig in the tests
 * does (queue depth and scheduler, vm.dirty_*, cgroup weights and membership).
 */
#ifndef IOTIER_WRITE_FILE_H
#define IOTIER_WRITE_FILE_H

/* Write @value to @path with one write(2). Returns 0 or -errno. */
int write_file(const char *path, const char *value);

#endif
