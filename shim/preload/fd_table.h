/* SPDX-License-Identifier: MIT */
/*
 * fd_table.h: what the shim knows about each fd (fd_table.c), in a fixed table indexed by
 * fd, like comm_fd_tid in wrap/wrap_naming.h: nothing allocates, a lookup is a load. An
 * entry holds what the fd is (fd_kind, found once per open with raw syscalls), whether its
 * path asked for drop-behind, the splitter's alignment, the file's key and whether the
 * foreground writes it too (FD_SHARED), and the low paths' byte counters.
 */
#ifndef IOTIER_FD_TABLE_H
#define IOTIER_FD_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/compiler.h"

#define PATH_FD_MAX 65536 /* fds above this are left alone */

/* fd_path.flags */
enum {
	FD_KIND_MASK = 3u,   /* what the fd is, found with fstat on first use */
	FD_KIND_UNKNOWN = 0u,
	FD_KIND_FILE = 1u,   /* a regular file opened without O_DIRECT: steer, drop */
	FD_KIND_STORAGE = 2u,/* O_DIRECT file or block device: rate-limited, not steered */
	FD_KIND_OTHER = 3u,  /* socket, pipe, tty...: left alone */
	FD_DROP = 1u << 2,   /* its path matched IOTIER_DROP_BEHIND when it was opened */
	/*
	 * A storage fd's O_DIRECT alignment, log2 + 1 (0: not known yet), and whether it is a
	 * block device: found by the splitter once per fd (adaptive_hook.c), forgotten with the
	 * kind whenever the fd's entry is reset.
	 */
	FD_DIO_SHIFT = 3,
	FD_DIO_MASK = 31u << FD_DIO_SHIFT,
	FD_BLOCKDEV = 1u << 8,
	/*
	 * The fd's file is one that a high thread of the tree writes or syncs (a WAL, a LOG, a
	 * MANIFEST): a low thread's write to it is never held (docs/adaptive.md, "A lock
	 * holder is never held"). Set when first seen, kept until the entry is reset.
	 */
	FD_SHARED = 1u << 9,
	/*
	 * The largest request of the fd's device (its queue's max_sectors_kb, rounded down to
	 * a power of two), log2 + 1, or FD_REQ_NONE when it has none we can read (0: not
	 * looked up yet): found by the low side once per fd (adaptive_low.c), forgotten with
	 * the kind.
	 */
	FD_REQ_SHIFT = 10,
	FD_REQ_MASK = 31u << FD_REQ_SHIFT,
	FD_REQ_NONE = 31u,
	/*
	 * Readahead (docs/adaptive.md, "What a low thread's calls see"): the shim advised
	 * POSIX_FADV_RANDOM on this fd for a low thread's reads under a target; cleared when
	 * the program gives the fd an access pattern of its own, so the next low read advises
	 * it again.
	 */
	FD_RA_OFF = 1u << 16,
	/*
	 * The adaptive tier's slot for the fd's whole-disk device (adaptive_region_dev_slot),
	 * + 1 (0: not looked up yet): found once per fd (dev_slot, adaptive_low.c),
	 * forgotten with the kind whenever the entry is reset.
	 */
	FD_DEV_SHIFT = 17,
	FD_DEV_MASK = 15u << FD_DEV_SHIFT,
};

struct fd_path {
	_Atomic uint32_t flags;
	/* The region's count of shared files when this fd's was last looked up and not found. */
	_Atomic uint32_t shared_seen;
	/* The file's identity (fd_file_key), found with its kind; 0: not a file. */
	_Atomic uint64_t file_key;
	_Atomic uint64_t since_steer; /* bytes written by low threads since the last push */
	_Atomic uint64_t since_drop;  /* bytes written since the last drop */
	_Atomic int64_t drop_lo;      /* where the next drop starts; -1: not known yet */
	_Atomic int64_t steer_end;    /* strict mode: file offset at the previous push */
	_Atomic uint64_t unsettled;   /* dirty budget: bytes low threads wrote, not waited for */
};

extern struct fd_path fd_paths[PATH_FD_MAX] SHIM_HIDDEN;

/*
 * One past the highest fd whose entry was ever set (raised before a kind is stored): a
 * walk over a range of fds (close_range, closefrom) stops there, not at PATH_FD_MAX.
 */
extern _Atomic uint32_t fd_paths_end SHIM_HIDDEN;

/* Raise fd_paths_end to @end (one past an fd): a CAS loop only while the end moves up. */
SHIM_HIDDEN void fd_table_raise_end(uint32_t end);

/*
 * What @fd (< PATH_FD_MAX) is, FD_KIND_*: found once per open with raw syscalls, and with
 * it the file's key (file_key) for a regular file or a block device.
 */
SHIM_HIDDEN uint32_t fd_kind(int fd);

/*
 * A file's identity as one nonzero word: its device, inode number and (where statx has one)
 * birth time, mixed. The birth time tells a new file from a deleted one whose inode number
 * it reuses (RocksDB deletes a WAL and creates an SST file). A collision of two live files
 * is 2^-64-unlikely and only lets a low write pass ungated.
 */
SHIM_HIDDEN uint64_t fd_file_key(uint64_t dev, uint64_t ino, uint64_t btime);

#endif
