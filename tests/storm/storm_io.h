/* SPDX-License-Identifier: MIT */
/*
 * storm_io.h: what the churn and storm tests do and check on every thread: one small I/O
 * through a wrapped call (pread, which the shim's prologue sees), and the thread's own I/O
 * priority as the kernel reports it.
 */
#ifndef IOTIER_STORM_IO_H
#define IOTIER_STORM_IO_H

#include <errno.h>
#include <linux/ioprio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)

static inline int prio_of_self(void)
{
	return (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
}

/* A one-byte unlinked scratch file to read from; -1 after a message. */
static inline int storm_scratch(const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/iotier-%s.XXXXXX", name);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, "x", 1) != 1) {
		perror("scratch file");
		return -1;
	}
	unlink(path);
	return fd;
}

static inline void storm_io(int fd)
{
	char byte;

	if (pread(fd, &byte, 1, 0) != 1)
		fprintf(stderr, "pread: %s\n", strerror(errno));
}

#endif
