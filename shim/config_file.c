// SPDX-License-Identifier: MIT
/*
 * config_file.c: read the IOTIER_CONFIG file, for the shim and the CLI alike, refusing
 * anything but a regular text file before a byte of it is read (see config.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int config_file_read(const char *path, char *buf, char *err, size_t errlen)
{
	struct stat st;
	const char *nul;
	size_t used = 0;
	long fd;
	int ret;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerrordesc_np(errno));
		return -1;
	}
	if (fstat((int)fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		syscall(SYS_close, (int)fd);
		return -1;
	}
	ret = config_read_fd((int)fd, buf, CONFIG_FILE_MAX, &used);
	syscall(SYS_close, (int)fd);
	if (ret == -EFBIG) {
		snprintf(err, errlen, "larger than %d bytes", CONFIG_FILE_MAX - 1);
		return -1;
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", strerrordesc_np(-ret));
		return -1;
	}
	nul = memchr(buf, '\0', used);
	if (nul) {
		snprintf(err, errlen, "a NUL byte at offset %zu: not a text file",
			 (size_t)(nul - buf));
		return -1;
	}
	return 0;
}
