// SPDX-License-Identifier: MIT
/*
 * adaptive_low.c: the region pointer, the low side of the gate (a low thread's I/O, the
 * writeback push, async submissions), each asking its own device's fast path (dev_slot), and
 * the device's request size, which bounds a gated piece (see adaptive_low.h).
 */
#include "adaptive_low.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "fd_table.h"
#include "globals.h"
#include "adaptive/adaptive_region.h"
#include "core/sys.h"

struct adaptive_region *adaptive_on;

pid_t adaptive_self_tid(void)
{
	struct state_slot *slot = self_slot;

	return slot && slot->tid ? slot->tid : sys_gettid();
}

/*
 * The pid is a syscall: it is read only while a cap is in force. The wait is bounded by
 * IOTIER_GATE_WAIT, this process's own setting: nothing in the shared region can lengthen it.
 */
uint32_t adaptive_gate_enter(int fd, uint64_t bytes)
{
	struct adaptive_region *r = adaptive_on;

	if (atomic_load_explicit(&r->gate.cap, memory_order_relaxed) == LOW_GATE_UNLIMITED ||
	    adaptive_region_bad(r))
		return 0;
	return adaptive_region_gate_enter_on(r, sys_getpid(), adaptive_self_tid(),
					     shim.cfg.gate_wait_ns, dev_slot(fd), bytes);
}

uint32_t adaptive_push_chunk(int fd)
{
	struct adaptive_region *r = adaptive_on;
	uint32_t chunk;
	bool idle;

	if (!r || atomic_load_explicit(&r->gate.cap, memory_order_relaxed) == LOW_GATE_UNLIMITED)
		return 0;
	chunk = adaptive_region_chunk(r);
	if (chunk == ADAPTIVE_UNLIMITED)
		return 0;
	/*
	 * The foreground idle on the file's device: 1 MiB pieces at least, as the splitter's
	 * (adaptive_region_piece_on), whole. Otherwise one slot, one request: no larger than
	 * the device takes.
	 */
	chunk = adaptive_region_piece_on(r, dev_slot(fd), chunk, &idle);
	return idle ? chunk : adaptive_piece_limit(fd, chunk);
}

/*
 * A piece's bytes let it go in a reader's gap on its device, by the service time learnt
 * there from the low tier's O_DIRECT pieces. The push's own times teach nothing: a range
 * the flusher wrote meanwhile is pushed in microseconds, whatever its size.
 */
uint32_t adaptive_push_enter(int fd, uint64_t bytes)
{
	atomic_fetch_add_explicit(&adaptive_on->pushes, 1, memory_order_relaxed);
	return adaptive_gate_enter(fd, bytes);
}

void adaptive_push_exit(uint32_t ticket)
{
	low_gate_exit(&adaptive_on->gate, ticket, 0);
}

/* ---- the device's request size -------------------------------------------------------- */

/*
 * The kernel cuts a bio larger than its queue's max_sectors_kb into several requests, so a
 * 1 MiB piece on a device whose limit is 512 KiB is two I/Os on the device under one slot.
 * The limit is read once per device (a few per process) from sysfs, on a low thread's path,
 * never a high one's: a partition has no queue of its own, its disk's is one directory up.
 * Each entry is one word, so readers need no lock: major << 28 | minor << 8 | log2 + 1 (0
 * for a device without a limit we can read). Major numbers have 12 bits and minors 20 in
 * the kernel; a device beyond them, or a full table, is looked up again at each new fd.
 */
#define REQ_DEVICES 16u
static _Atomic uint64_t req_devices[REQ_DEVICES];

/* The first decimal number in @path's first 31 bytes, read with raw calls; 0 if none. */
static uint64_t sysfs_number(const char *path)
{
	char text[32];
	long fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY), n;
	uint64_t v = 0;

	if (fd < 0)
		return 0;
	n = sys_call(SYS_read, (int)fd, text, sizeof(text) - 1);
	sys_call(SYS_close, (int)fd);
	for (long i = 0; i < n && text[i] >= '0' && text[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(text[i] - '0');
	return v;
}

/* log2 + 1 of the largest power of two within the request size of MAJ:MIN; 0: none. */
static uint32_t device_req_log(unsigned major, unsigned minor)
{
	static const char *const tails[] = { "/queue/max_sectors_kb", "/../queue/max_sectors_kb" };
	char path[96] = "/sys/dev/block/", *end;
	uint64_t kb = 0;

	end = path + strlen(path);
	end += sys_decimal(major, end);
	*end++ = ':';
	end += sys_decimal(minor, end);
	for (unsigned i = 0; i < 2 && !kb; i++) {
		strcpy(end, tails[i]);
		kb = sysfs_number(path);
	}
	if (!kb || kb >= (1ull << 20)) /* none, or 1 GiB and more: no limit worth a cut */
		return 0;
	return 63u - (uint32_t)__builtin_clzll(kb) + 10u + 1u;
}

/* The entry of MAJ:MIN, looked up or found now. log2 + 1, 0 for none. */
static uint32_t device_req(unsigned major, unsigned minor)
{
	uint64_t id = (uint64_t)major << 28 | (uint64_t)minor << 8, slot = (id >> 8) % REQ_DEVICES;
	uint32_t log;

	if (major >= (1u << 12) || minor >= (1u << 20))
		return device_req_log(major, minor);
	for (unsigned i = 0; i < REQ_DEVICES; i++) {
		uint64_t e = atomic_load_explicit(&req_devices[(slot + i) % REQ_DEVICES],
						  memory_order_relaxed);

		if (e && (e & ~0xffull) == id)
			return (uint32_t)(e & 0xff);
	}
	log = device_req_log(major, minor);
	for (unsigned i = 0; i < REQ_DEVICES; i++) {
		uint64_t free_entry = 0;

		if (atomic_compare_exchange_strong(&req_devices[(slot + i) % REQ_DEVICES],
						   &free_entry, id | log))
			break;
	}
	return log;
}

uint32_t adaptive_request_max(int fd)
{
	struct fd_path *p;
	uint32_t flags, found;
	struct stat st;
	int saved;

	if ((unsigned)fd >= PATH_FD_MAX)
		return 0;
	p = &fd_paths[fd];
	flags = atomic_load_explicit(&p->flags, memory_order_acquire);
	found = (flags & FD_REQ_MASK) >> FD_REQ_SHIFT;
	if (likely(found))
		return found == FD_REQ_NONE ? 0 : 1u << (found - 1);
	if ((flags & FD_KIND_MASK) == FD_KIND_UNKNOWN)
		return 0; /* not classified yet: its entry is not this fd's for certain */
	saved = errno;
	found = 0;
	if (sys_call(SYS_fstat, fd, &st) == 0) {
		dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;

		found = device_req(major(dev), minor(dev));
	}
	errno = saved;
	if (!found || found > 31u)
		found = FD_REQ_NONE;
	/* Only onto the entry it was found for: an fd reset meanwhile is looked up again. */
	atomic_compare_exchange_strong(&p->flags, &flags, flags | found << FD_REQ_SHIFT);
	return found == FD_REQ_NONE ? 0 : 1u << (found - 1);
}

uint32_t adaptive_piece_limit(int fd, uint32_t piece)
{
	uint32_t req = adaptive_request_max(fd);

	return req && req < piece ? req : piece;
}

/* ---- the device an fd's I/O goes to: the fast path's key ------------------------------ */

/*
 * The whole disk of MAJ:MIN as the region keys it: a partition's parent (sysfs: a
 * partition has a "partition" file, its disk's "dev" one directory up), else the device
 * itself. Major 0 is no block device (tmpfs, btrfs, overlayfs number their own): its file
 * system's number stands. A stacked device (dm, md, a loop device over a file) is keyed by
 * its own number, not its disks'. Raw calls, once per device per process; errno is the
 * caller's to keep.
 */
static uint64_t whole_disk_key(unsigned maj, unsigned min)
{
	char path[64] = "/sys/dev/block/", text[32], *end = path + strlen(path);
	unsigned part[2] = { 0, 0 }, i = 0;
	long fd, n;

	if (!maj)
		return adaptive_dev_key(maj, min);
	end += sys_decimal(maj, end);
	*end++ = ':';
	end += sys_decimal(min, end);
	strcpy(end, "/partition");
	fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return adaptive_dev_key(maj, min);
	sys_call(SYS_close, (int)fd);
	strcpy(end, "/../dev");
	fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : sys_call(SYS_read, (int)fd, text, sizeof(text) - 1);
	if (fd >= 0)
		sys_call(SYS_close, (int)fd);
	for (long k = 0; k < n && i < 2; k++) {
		if (text[k] >= '0' && text[k] <= '9')
			part[i] = part[i] * 10 + (unsigned)(text[k] - '0');
		else
			i++; /* ':' between the two, '\n' after */
	}
	return i == 2 ? adaptive_dev_key(part[0], part[1]) : adaptive_dev_key(maj, min);
}

/*
 * The devices this process looked up, MAJ:MIN to the region's slot, so that a new fd of a
 * known device costs one fstat and no sysfs read: one word each, major << 28 | minor << 8
 * | slot + 1. Slots are the region's for good (adaptive_region_dev_slot), so an entry never
 * goes stale; a fork shares the region and inherits the table. Full: looked up again.
 */
#define DEV_CACHE 16u
static _Atomic uint64_t dev_cache[DEV_CACHE];

static uint32_t device_slot(unsigned maj, unsigned min)
{
	uint64_t id = (uint64_t)maj << 28 | (uint64_t)min << 8, home = (id >> 8) % DEV_CACHE;
	uint32_t slot;

	if (maj >= (1u << 12) || min >= (1u << 20))
		return adaptive_region_dev_slot(adaptive_on, whole_disk_key(maj, min));
	for (unsigned i = 0; i < DEV_CACHE; i++) {
		uint64_t e = atomic_load_explicit(&dev_cache[(home + i) % DEV_CACHE],
						  memory_order_relaxed);

		if (e && (e & ~0xffull) == id)
			return (uint32_t)(e & 0xff) - 1;
	}
	slot = adaptive_region_dev_slot(adaptive_on, whole_disk_key(maj, min));
	for (unsigned i = 0; i < DEV_CACHE; i++) {
		uint64_t free_entry = 0;

		if (atomic_compare_exchange_strong(&dev_cache[(home + i) % DEV_CACHE], &free_entry,
						   id | (slot + 1)))
			break;
	}
	return slot;
}

/* dev_slot's first look at @fd (adaptive_low.h): a block device's number, a file's fs's. */
uint32_t dev_slot_find(int fd)
{
	struct fd_path *p = &fd_paths[fd];
	uint32_t flags = atomic_load_explicit(&p->flags, memory_order_acquire), slot;
	int saved = errno;
	struct stat st;
	dev_t dev;

	if ((flags & FD_KIND_MASK) == FD_KIND_UNKNOWN || sys_call(SYS_fstat, fd, &st) != 0) {
		errno = saved;
		return ADAPTIVE_DEV_ANY; /* not classified: the entry is not this fd's for certain */
	}
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	slot = device_slot(major(dev), minor(dev));
	errno = saved;
	/* Only onto the entry it was found for: an fd reset meanwhile is looked up again. */
	atomic_compare_exchange_strong(&p->flags, &flags, flags | (slot + 1) << FD_DEV_SHIFT);
	return slot;
}

/* ---- readahead under a cap ------------------------------------------------------------ */

void adaptive_low_readahead_off(int fd)
{
	struct fd_path *p;
	uint32_t flags;
	int saved;

	if ((unsigned)fd >= PATH_FD_MAX)
		return;
	p = &fd_paths[fd];
	flags = atomic_load_explicit(&p->flags, memory_order_relaxed);
	if (likely(flags & FD_RA_OFF) || (flags & FD_KIND_MASK) != FD_KIND_FILE)
		return;
	/* One thread advises: the bit says it is done. */
	if (!atomic_compare_exchange_strong(&p->flags, &flags, flags | FD_RA_OFF))
		return;
	saved = errno;
	sys_call(SYS_fadvise64, fd, (off_t)0, (off_t)0, POSIX_FADV_RANDOM);
	errno = saved;
}

/* ---- asynchronous submissions ---------------------------------------------------------- */

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fast path, between waits, on the submission's device. */
struct async_wait {
	struct adaptive_region *r;
	uint32_t dev;
};

/*
 * The foreground fell idle on the device: the submission goes at full. No wake-up hint:
 * under a finite cap the N-slot waiter polls every millisecond anyway.
 */
static bool async_fg_idle(void *arg, uint64_t *hint)
{
	const struct async_wait *w = arg;

	(void)hint;
	return adaptive_region_fg_idle_on(w->r, w->dev, monotonic_ns());
}

/*
 * No gap filling: the N I/Os of a submission go together, and what they cost together is
 * not what one piece's learnt time says.
 */
uint32_t adaptive_async_enter(uint32_t dev, uint32_t n, uint32_t *tickets)
{
	struct async_wait w = { .r = adaptive_on,
				.dev = dev < ADAPTIVE_FG_SLOTS ? dev : ADAPTIVE_DEV_ANY };
	uint64_t now;

	if (!w.r || !n ||
	    atomic_load_explicit(&w.r->gate.cap, memory_order_relaxed) == LOW_GATE_UNLIMITED ||
	    adaptive_region_bad(w.r))
		return 0;
	now = monotonic_ns();
	/* A garbled gate is refused where every single-slot call looks (adaptive_region.c). */
	if (!low_gate_sane(&w.r->gate, now) || adaptive_region_fg_idle_on(w.r, w.dev, now))
		return 0;
	if (n > LOW_GATE_HOLDERS)
		n = LOW_GATE_HOLDERS;
	return low_gate_enter_n(&w.r->gate, sys_getpid(), adaptive_self_tid(), n,
				shim.cfg.gate_wait_ns, async_fg_idle, &w, tickets);
}

void adaptive_async_exit(const uint32_t *tickets, uint32_t taken)
{
	for (uint32_t i = 0; i < taken; i++)
		low_gate_exit(&adaptive_on->gate, tickets[i], 0);
}

uint32_t adaptive_submit_dev(uint32_t dev, int fd)
{
	uint32_t slot;
	int saved;

	if (dev == ADAPTIVE_DEV_ANY)
		return dev; /* already several: nothing more to look at */
	if ((unsigned)fd >= PATH_FD_MAX)
		return ADAPTIVE_DEV_ANY;
	saved = errno;
	switch (fd_kind(fd)) { /* classifies the fd once: dev_slot needs its kind */
	case FD_KIND_STORAGE:
	case FD_KIND_FILE:
		slot = dev_slot(fd);
		break;
	default:
		slot = dev; /* not the disk's (a socket, a pipe, a closed fd) */
		break;
	}
	errno = saved;
	return dev == ADAPTIVE_SUBMIT_NONE || dev == slot ? slot : ADAPTIVE_DEV_ANY;
}
