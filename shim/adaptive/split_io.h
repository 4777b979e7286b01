/* SPDX-License-Identifier: MIT */
/*
 * split_io.h: cut one large pread or pwrite of the low tier into pieces of the allowance
 * (the controller's chunk), so that a high-tier read queued behind it waits for one piece,
 * not the whole transfer, and so that the caller cannot tell: the same return value, errno,
 * file content, and no file position touched. Which calls may be cut at all, and why the
 * others are paced whole, is the head comment of split_io.c (and docs/adaptive.md, "What a
 * low thread's calls see"); the caller (adaptive_hook.c) asks
 * split_may_cut() and split_range_mapped() before the first piece.
 */
#ifndef IOTIER_SPLIT_IO_H
#define IOTIER_SPLIT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* MAX_RW_COUNT in the kernel: INT_MAX rounded down to a page, the most one call moves. */
#define SPLIT_KERNEL_RW_MAX 0x7ffff000ul

/*
 * One piece: @len bytes at @buf and file offset @offset. Returns what the syscall returns,
 * errno set on -1.
 */
typedef ssize_t split_piece_fn(void *ctx, char *buf, size_t len, off_t offset);

/* The most the next piece may move, asked before every piece; 0: no limit (the rest). */
typedef size_t split_allowance_fn(void *ctx);

/* How a failed piece after the first is answered. */
enum split_failure {
	/*
	 * A write: -1 with the piece's errno (the kernel's direct I/O fails a whole call that
	 * fails part-way), except EFBIG, which a piece meets only where the file's size limit
	 * begins: the whole call would have stopped there, so the bytes before it are returned.
	 */
	SPLIT_FAIL_WRITE,
	/*
	 * A read: the whole call again as one piece, whose answer is the kernel's own (a read
	 * changes nothing but the caller's buffer, which the whole call overwrites). The same
	 * when a piece comes up short with part of the buffer after it unmapped: the kernel
	 * would have failed the whole call with EFAULT, or not, and only it knows which.
	 */
	SPLIT_FAIL_REDO_READ,
	/*
	 * A buffered write: the bytes before it, errno as before. The kernel's buffered write
	 * returns what it copied before a failure (ENOSPC, EDQUOT, EFBIG, a fault), and -1 only
	 * when it copied nothing: that is what the whole call would have answered.
	 */
	SPLIT_FAIL_SHORT_WRITE,
};

struct split_call {
	split_piece_fn *piece;
	split_allowance_fn *allowance;
	void *ctx;
	size_t align;               /* every piece but the last is a multiple of this (>= 1) */
	enum split_failure failure;
};

/*
 * Do @count bytes at @buf and @offset in pieces as @c says. Together the pieces never move
 * more than SPLIT_KERNEL_RW_MAX, as one call would not. errno as before on success.
 */
ssize_t split_io(const struct split_call *c, char *buf, size_t count, off_t offset);

/*
 * May a pread or pwrite of @count bytes at @buf and @offset be cut, for a file whose direct
 * I/O alignment is @align (1: a buffered file)? False where the kernel would answer the
 * whole call differently from its pieces: a count it rejects or cuts itself, an offset it
 * rejects (negative, or past LLONG_MAX at the end), an O_DIRECT call out of alignment.
 */
bool split_may_cut(const char *buf, size_t count, off_t offset, size_t align);

/* Is every byte of [@buf, @buf + @count) mapped (mincore)? errno as before. */
bool split_range_mapped(const char *buf, size_t count);

#endif
