/* SPDX-License-Identifier: MIT */
/*
 * split_io.h: cut one large read or write of the low tier into chunk-size pieces, so that a
 * high-tier read queued behind it waits for one piece, not the whole transfer. The caller
 * sees exactly what one call would have returned: the total on success, a short count
 * where a piece came up short (end of file, a full disk), the bytes done before a later
 * piece failed (as the kernel reports a partial transfer, errno untouched), and -1 with the
 * first piece's errno when nothing was transferred.
 *
 * Only for calls whose pieces are independent: pread/pwrite and read/write on a regular
 * file. Never for O_APPEND writes (two appenders could interleave between pieces) or pipes
 * and sockets (a short piece there is not the end). The caller decides.
 */
#ifndef IOTIER_SPLIT_IO_H
#define IOTIER_SPLIT_IO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * One piece: @len bytes at @buf, file offset @offset (ignored by calls that use the file
 * position, which each piece advances). Returns what the syscall returns, errno set on -1.
 */
typedef ssize_t (*split_piece_fn)(void *ctx, char *buf, size_t len, off_t offset);

/* Do @count bytes at @buf and @offset in pieces of at most @chunk (0: one piece). */
ssize_t split_io(split_piece_fn piece, void *ctx, char *buf, size_t count, off_t offset,
		 size_t chunk);

#endif
