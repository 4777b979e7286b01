// SPDX-License-Identifier: MIT
/*
 * write_file.c: one write(2) of a value into a kernel control file. One call matters: the
 * kernel parses what a single write carries, so a value must not be split.
 */
#include "write_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}
