// SPDX-License-Identifier: MIT
/*
 * split_io.c: one large low-tier transfer as several pieces, indistinguishable from the one
 * call (see split_io.h). A split call must give the calling thread, every other thread and
 * every other process what the unsplit call gives: the same return value and errno, the same
 * file offset and file content, and the atomicity of XSH 2.9.7. Where that cannot be had,
 * the call is not cut: it passes the gate once, whole, holding one slot (it is "paced
 * whole"). The rules, each with the case that needs it (the cases are issue 25's, and
 * tests/adaptive/adaptive-split.c checks each one against the raw syscall):
 *
 *  1. read() and write() are never cut: they use the file position of a description that
 *     threads, dup(), fork() and SCM_RIGHTS can share, and nothing cheap proves it is not.
 *     The kernel moves the position under f_pos_lock once per call, so two write()s of 1 MiB
 *     records to one O_DIRECT fd never mix, and four read()s of 1 MiB from one fd each get
 *     one contiguous 1 MiB; cut into 16 KiB pieces, 64 of 64 records were mixed and most
 *     buffers were not contiguous. Only pread and pwrite, which name their offset, are cut.
 *  2. A pwrite is never cut with O_APPEND (fcntl F_GETFL at each such call: it can change):
 *     two appenders' pieces interleave. With O_DIRECT its pieces are the device's requests.
 *     A buffered pwrite is a copy into memory whose device I/O is the writeback push, and
 *     the kernel writes back whole folios: a 1 MiB pwrite makes (or dirties all of) a 1 MiB
 *     folio, which a push of any part of it puts on the device whole. So a buffered pwrite
 *     is cut only where each piece is pushed as soon as it is copied and waited for before
 *     the next one dirties more of the same folio (low_paths_piece_push): writeback
 *     steering on, the file neither the foreground's nor dropped behind, no record lock (the
 *     wait's own description), and no O_SYNC or O_DSYNC (each piece would sync: the same
 *     content, but a device flush per piece). On ext4 (6.18), 4 MiB rewritten over cached
 *     1 MiB folios went to the device in 16 KiB requests when each 16 KiB piece was pushed
 *     and waited for, and in 128 KiB ones (the device's largest) when pushed after all.
 *  3. The count: over SSIZE_MAX the kernel fails the whole call (EINVAL, or EFAULT from its
 *     range check); over MAX_RW_COUNT it cuts the call itself. Both go whole.
 *  4. The offset: negative, or with offset + count past LLONG_MAX, the kernel fails the
 *     whole call with EINVAL, while a first piece near LLONG_MAX reads 0 bytes, which the
 *     program takes for the end of the file (a pread at LLONG_MAX - 100000). Whole.
 *  5. O_DIRECT alignment: offset, count and buffer must be multiples of the file's alignment
 *     (the larger of STATX_DIOALIGN's two; the logical block size or st_blksize where statx
 *     has none; found once per fd), or the call goes whole. The kernel checks alignment per
 *     extent, after the bios of earlier extents went out: an O_DIRECT pwrite of 1 MiB + 100
 *     bytes fails with EINVAL and writes nothing, where its pieces wrote 1 MiB and returned
 *     it; the same pread fails, but one whose unaligned tail lies in a hole succeeds. Only
 *     the whole call knows. Pieces are then multiples of the alignment.
 *  6. A pwrite's source must be mapped end to end (mincore) before the first piece: a 2 MiB
 *     O_DIRECT write whose second MiB is unmapped fails with EFAULT and leaves the file as it
 *     was; its pieces wrote the first MiB and returned 1 MiB.
 *  7. A pwrite must end within the file size limit (RLIMIT_FSIZE): a piece that starts at
 *     the limit fails with EFBIG and raises SIGXFSZ, where the whole call stops short at the
 *     limit with no signal. Past a file system's own limit (s_maxbytes) no signal is sent,
 *     and a piece's EFBIG there means the whole call would have stopped at that piece: its
 *     bytes so far are the answer. On a block device it must end within the device: a piece
 *     starting at its end fails with ENOSPC, where the whole call comes up short.
 *  8. A piece after the first that fails is never turned into a short count where the
 *     whole call would fail. A read is done again whole (it changes nothing but the
 *     caller's buffer): a 2 MiB O_DIRECT pread whose second MiB is unmapped then fails with
 *     EFAULT as the kernel says. An O_DIRECT write returns -1 with that errno, as direct
 *     I/O fails a whole call that fails part-way (EIO, ENOSPC). A buffered write returns
 *     the bytes before it, as the kernel's buffered write returns what it copied.
 *  9. A read piece that comes up short ends the call (end of file, as the whole call would
 *     find it), except when part of the buffer after it is unmapped: an O_DIRECT read past
 *     the end of the file zero-fills the rest of the buffer and fails with EFAULT on an
 *     unmapped tail, a buffered one does not. That read is done again whole.
 * 10. The allowance is asked before every piece: a tier released while a 64 MiB write runs
 *     at 16 KiB pieces sends the rest as one piece, not 4000 more.
 *
 * What a split pread or pwrite still does not keep (docs/adaptive.md says the same):
 *  - Atomicity against a concurrent write of the same bytes: a split pread can return some
 *    pieces from before and some from after another thread's overlapping write, and two
 *    overlapping split pwrites can leave a mix. Decided, and accepted: the program has not
 *    ordered the two calls, Linux does not order them either in most of the cases cut here
 *    (ext4, btrfs and block devices read the page cache without the inode lock, so a read
 *    can see half a write; ext4 and XFS run aligned O_DIRECT overwrites under a shared lock,
 *    block devices under none), and the programs this is for never read or write a range
 *    another thread is writing (RocksDB's table files are immutable once written;
 *    PostgreSQL's 8 KiB and InnoDB's 16 KiB pages are below the smallest chunk, 16 KiB, and
 *    are never cut). Where Linux does order them (XFS buffered reads against writes, buffered
 *    writes against each other under the inode lock, an extending O_DIRECT write on ext4)
 *    a split call is weaker than the raw one. Likewise a
 *    split pwrite past the end grows the file piece by piece, where the raw call grows it
 *    once, at its end: another thread's stat() or read() can see the file part-grown.
 *  - A failure part-way (EIO, ENOSPC, EDQUOT) leaves the earlier pieces written; so would
 *    the raw call's earlier bios, but an extending raw write would not have grown the file.
 *  - A source page that is mapped but not readable (PROT_NONE) passes mincore: -1 and
 *    EFAULT as the kernel says, with the pieces before it written.
 */
#include "split_io.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/sys.h"

/* mincore's answer for this many pages at a time: 2 MiB a syscall, on the caller's stack. */
#define MAPPED_PAGES 512u

bool split_may_cut(const char *buf, size_t count, off_t offset, size_t align)
{
	uintptr_t mask = align - 1;

	if (count > SPLIT_KERNEL_RW_MAX || offset < 0 || (off_t)count > LLONG_MAX - offset)
		return false;
	if (!align || (align & mask))
		return false; /* not a power of two: no alignment we understand */
	return !(((uintptr_t)buf | (uintptr_t)offset | count) & mask);
}

bool split_range_mapped(const char *buf, size_t count)
{
	static long page_size;
	unsigned char vec[MAPPED_PAGES];
	uintptr_t page, start, end;
	int saved = errno;
	bool mapped = true;

	if (!count)
		return true;
	if (!page_size)
		page_size = sysconf(_SC_PAGESIZE);
	page = (uintptr_t)page_size;
	start = (uintptr_t)buf & ~(page - 1);
	if ((uintptr_t)buf + count < (uintptr_t)buf)
		return false; /* wraps around the address space */
	end = (uintptr_t)buf + count;
	while (mapped && start < end) {
		uintptr_t len = end - start;

		if (len > MAPPED_PAGES * page)
			len = MAPPED_PAGES * page;
		/* ENOMEM: part of the range is not mapped, or is not user memory at all. */
		mapped = sys_call(SYS_mincore, start, len, vec) == 0;
		start += len;
	}
	errno = saved;
	return mapped;
}

/* The next piece's length: the allowance, a multiple of the alignment, at most @rest. */
static size_t piece_len(const struct split_call *c, size_t rest)
{
	size_t limit = c->allowance(c->ctx);

	if (!limit)
		return rest;
	limit = (limit + c->align - 1) & ~(c->align - 1);
	return limit < rest ? limit : rest;
}

/* A read done again whole: its answer, with errno as before when it succeeds. */
static ssize_t redo_whole(const struct split_call *c, char *buf, size_t count, off_t offset,
			  int saved)
{
	ssize_t n;

	errno = saved;
	n = c->piece(c->ctx, buf, count, offset);
	if (n >= 0)
		errno = saved;
	return n;
}

/* A piece after the first failed (rule 8), with @done bytes moved before it. */
static ssize_t later_failure(const struct split_call *c, char *buf, size_t count, off_t offset,
			     size_t done, int saved)
{
	if (c->failure == SPLIT_FAIL_REDO_READ)
		return redo_whole(c, buf, count, offset, saved);
	if (errno == EFBIG || c->failure == SPLIT_FAIL_SHORT_WRITE) {
		errno = saved; /* the whole call would have stopped here, with what it moved */
		return (ssize_t)done;
	}
	return -1;
}

ssize_t split_io(const struct split_call *c, char *buf, size_t count, off_t offset)
{
	size_t total = count > SPLIT_KERNEL_RW_MAX ? SPLIT_KERNEL_RW_MAX : count, done = 0;
	int saved = errno;

	do {
		size_t len = piece_len(c, total - done);
		ssize_t n = c->piece(c->ctx, buf + done, len, offset + (off_t)done);

		if (n < 0)
			return done ? later_failure(c, buf, count, offset, done, saved) : -1;
		done += (size_t)n;
		if ((size_t)n < len) {
			/* Rule 9: the end of the file, unless the kernel would fault after it. */
			if (c->failure == SPLIT_FAIL_REDO_READ && done < total &&
			    !split_range_mapped(buf + done, total - done))
				return redo_whole(c, buf, count, offset, saved);
			break;
		}
	} while (done < total);
	return (ssize_t)done;
}
