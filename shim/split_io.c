// SPDX-License-Identifier: MIT
/*
 * split_io.c: one transfer as several pieces with the return value and errno of one call
 * (see split_io.h).
 */
#include "split_io.h"

#include <errno.h>

/* MAX_RW_COUNT in the kernel: INT_MAX rounded down to a page. */
#define KERNEL_RW_MAX 0x7ffff000ul

ssize_t split_io(split_piece_fn piece, void *ctx, char *buf, size_t count, off_t offset,
		 size_t chunk)
{
	int saved = errno;
	size_t done = 0;

	/* One call never moves more than this, so neither may its pieces together. */
	if (count > KERNEL_RW_MAX)
		count = KERNEL_RW_MAX;
	if (!chunk || count <= chunk)
		return piece(ctx, buf, count, offset);
	while (done < count) {
		size_t len = count - done < chunk ? count - done : chunk;
		ssize_t n = piece(ctx, buf + done, len, offset + (off_t)done);

		if (n < 0) {
			if (!done)
				return -1;
			errno = saved; /* a partial transfer is a success: errno as before */
			break;
		}
		done += (size_t)n;
		if ((size_t)n < len)
			break; /* end of file, full disk: the next piece would say the same */
	}
	return (ssize_t)done;
}
