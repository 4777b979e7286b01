// SPDX-License-Identifier: MIT
/*
 * wrap_async.c: asynchronous submission from low threads. A thread's ioprio only reaches
 * the I/O it submits itself; an io_uring SQE prepared by the SQPOLL kernel thread, or run by
 * an io-wq worker, takes the priority written in the SQE, and libaio carries one per iocb.
 * So before a low thread's submission, read/write SQEs with ioprio 0 and iocbs without
 * IOCB_FLAG_IOPRIO get the low priority written in. An explicit priority is left alone, and
 * so are opcodes where the ioprio field means something else (send/recv/accept flags).
 *
 * Where submission is caught (docs/low-paths.md lists what is not):
 * - liburing: its submit functions, which publish the SQ tail. Debian's liburing 2.3 enters
 *   the kernel with an inline syscall, so libc never sees it; the SQEs between sq.sqe_head
 *   and sq.sqe_tail are the unpublished ones, and stamping them before the tail moves is what
 *   makes it hold with SQPOLL.
 * - raw io_uring through syscall() or liburing's io_uring_setup()/io_uring_enter(): the shim
 *   maps the new ring's SQ ring and SQE array itself at setup, and at enter stamps the
 *   published, not yet consumed entries between the kernel's head and tail.
 * - libaio: io_submit() (libaio's, or syscall(SYS_io_submit)).
 */
#include <dlfcn.h>
#include <linux/aio_abi.h>
#include <liburing.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap_async.h"

#include "preload/adaptive_hook.h"
#include "preload/fork.h"
#include "preload/globals.h"
#include "preload/init.h"
#include "preload/low_paths.h"
#include "preload/prologue.h"
#include "preload/real.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * Set while a wrapped submit function runs the real one. libaio (and liburing built with
 * libc) enter the kernel through syscall(), which is wrapped too: the iocbs and SQEs are
 * already stamped and charged, so the inner call passes straight through.
 */
static SHIM_TLS int in_submit;

/*
 * liburing and libaio may arrive after the shim resolved its symbols, in a library that is
 * dlopen()ed later: look again rather than fail a call that would work without the shim.
 * A library opened RTLD_LOCAL is not in RTLD_NEXT's search order, so it is also asked for
 * by soname, without loading anything. Rare path: the store is a plain pointer write, and
 * two threads racing here store the same value.
 */
static void *late_symbol(const char *name)
{
	/*
	 * The sonames in use: libaio.so.1t64 after Debian's and Ubuntu's 64-bit time_t
	 * transition, liburing-ffi.so.2 for liburing's non-inline build (2.4 and later).
	 */
	static const char *const aio_sonames[] = { "libaio.so.1", "libaio.so.1t64", NULL };
	static const char *const uring_sonames[] = { "liburing.so.2", "liburing-ffi.so.2", NULL };
	const char *const *soname = strncmp(name, "io_uring", 8) ? aio_sonames : uring_sonames;
	void *sym = dlsym(RTLD_NEXT, name), *lib;

	for (; !sym && *soname; soname++) {
		lib = dlopen(*soname, RTLD_LAZY | RTLD_NOLOAD);
		if (!lib)
			continue;
		sym = dlsym(lib, name);
		dlclose(lib); /* drops only the reference RTLD_NOLOAD took */
	}
	return sym;
}

#define LATE(name)                                                                         \
	(likely(REAL(name) != NULL)                                                        \
		 ? real.name                                                               \
		 : (real.name = (__typeof__(real.name))late_symbol(#name)))

/* Newer than the Debian 12 uapi headers; values from include/uapi/linux/io_uring.h. */
#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP (1U << 14)     /* 6.5: the application provides the memory */
#endif
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)  /* 6.6: SQ entries are used in ring order */
#endif

/* Read/write opcodes: the only ones where sqe->ioprio is an I/O priority. */
static bool sqe_stamp(struct io_uring_sqe *sqe, int ioprio, uint64_t *bytes)
{
	switch (sqe->opcode) {
	case IORING_OP_READ:
	case IORING_OP_WRITE:
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED:
		*bytes += sqe->len;
		break;
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
		break; /* the iovecs are not read here: a bad pointer is the kernel's to report */
	default:
		return false;
	}
	if (sqe->ioprio == 0)
		sqe->ioprio = (__u16)ioprio;
	return true;
}

/*
 * A low thread's submission passes the adaptive gate first (docs/adaptive.md): it cannot be
 * counted in flight, so it only waits while the low tier is held (or every slot is taken).
 * Then it is stamped; its bytes go to the rate limit and the controller once it succeeded.
 */
#define LOW_SUBMISSION(stamp) ((unlikely(adaptive_on) ? adaptive_async_pass() : (void)0), (stamp))

static void low_submitted(uint64_t bytes)
{
	low_rate_charge(bytes);
	if (unlikely(adaptive_on))
		adaptive_async_submitted(bytes);
}

/* ---- liburing ------------------------------------------------------------------------ */

/* Stamp the SQEs the application got since the last submit; returns their byte count. */
static uint64_t stamp_liburing(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned mask = *sq->kring_mask, shift = ring->flags & IORING_SETUP_SQE128 ? 1 : 0;
	int ioprio = shim.cfg.low_ioprio;
	uint64_t bytes = 0;

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++)
		sqe_stamp(&sq->sqes[(i & mask) << shift], ioprio, &bytes);
	return bytes;
}

/* The common body: stamp when low, submit, then charge the rate limit. */
#define URING_SUBMIT(name, ring, call)                                                     \
	do {                                                                               \
		uint64_t bytes = 0;                                                        \
		int ret;                                                                   \
		if (unlikely(!LATE(name)))                                                 \
			return -ENOSYS;                                                    \
		if (unlikely(in_shim))                                                     \
			return REAL(name) call;                                            \
		shim_io_prologue();                                                        \
		if (self_is_low())                                                         \
			bytes = LOW_SUBMISSION(stamp_liburing(ring));                                      \
		in_submit++;                                                               \
		ret = REAL(name) call;                                                     \
		in_submit--;                                                               \
		if (bytes && ret > 0)                                                      \
			low_submitted(bytes);                                            \
		return ret;                                                                \
	} while (0)

EXPORT int io_uring_submit(struct io_uring *ring)
{
	URING_SUBMIT(io_uring_submit, ring, (ring));
}

EXPORT int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	URING_SUBMIT(io_uring_submit_and_wait, ring, (ring, wait_nr));
}

EXPORT int io_uring_submit_and_wait_timeout(struct io_uring *ring, struct io_uring_cqe **cqe,
					    unsigned wait_nr, struct __kernel_timespec *ts,
					    sigset_t *sigmask)
{
	URING_SUBMIT(io_uring_submit_and_wait_timeout, ring, (ring, cqe, wait_nr, ts, sigmask));
}

EXPORT int io_uring_submit_and_get_events(struct io_uring *ring)
{
	URING_SUBMIT(io_uring_submit_and_get_events, ring, (ring));
}

/* ---- rings entered without liburing's submit ------------------------------------------ */

/*
 * An entry is read by low threads entering the kernel (stamp_raw) while another thread may
 * close the ring's fd, which unmaps the shim's mapping. No lock on the enter path: a reader
 * announces itself in @readers and then checks @live; the closer clears @live and then
 * waits for @readers to drain before it unmaps. Both sides use sequentially consistent
 * operations, so either the reader sees the entry dead or the closer sees the reader. The
 * wait is as long as one stamping loop (at most the ring's size in SQEs, no syscall).
 */
struct raw_ring {
	_Atomic int live;
	_Atomic int readers;   /* threads inside stamp_raw on this entry */
	bool own_mapping;      /* mapped by the shim: unmapped when the fd closes */
	unsigned *khead, *ktail, *array, mask, shift;
	struct io_uring_sqe *sqes;
	void *sq_map, *sqe_map;
	size_t sq_map_len, sqe_map_len;
};

static struct raw_ring raw_rings[RING_FD_MAX];

/* Set while this thread stamps: a signal handler closing the ring must not wait on it. */
static SHIM_TLS int in_stamp_raw;

static void ring_forget(struct raw_ring *r)
{
	atomic_store(&r->live, 0);
	if (r->own_mapping && in_stamp_raw) {
		r->own_mapping = false; /* left mapped: better a kept ring than a deadlock */
		return;
	}
	while (atomic_load(&r->readers) > 0)
		sched_yield();
	if (r->own_mapping) {
		munmap(r->sq_map, r->sq_map_len);
		munmap(r->sqe_map, r->sqe_map_len);
		r->own_mapping = false;
	}
}

void uring_fd_closing(int fd)
{
	/* A vfork child closing its copy of the fd must not unmap the parent's mapping. */
	if ((unsigned)fd < RING_FD_MAX &&
	    atomic_load_explicit(&raw_rings[fd].live, memory_order_relaxed)) {
		int saved = errno;

		if (!shim_memory_borrowed())
			ring_forget(&raw_rings[fd]);
		errno = saved;
	}
}

/*
 * Only an active shim tracks rings: a disabled one (bad configuration) leaves the program
 * untouched, and mapping its rings is not untouched. A ring set up before the constructor
 * ran settles the configuration first, as a thread's first I/O would.
 */
static bool rings_tracked(void)
{
	int saved = errno;

	if (unlikely(atomic_load(&shim.status) == SHIM_UNINITIALISED))
		shim_init();
	errno = saved;
	return atomic_load(&shim.status) == SHIM_ACTIVE;
}

/* A ring the kernel just set up on @fd: map its SQ side for ourselves. */
static void ring_track_setup(int fd, const struct io_uring_params *p)
{
	struct raw_ring *r;
	size_t sq_len, sqe_len;
	void *sq, *sqes;

	if ((unsigned)fd >= RING_FD_MAX || (p->flags & IORING_SETUP_NO_MMAP) || !rings_tracked())
		return;
	r = &raw_rings[fd];
	ring_forget(r);
	sq_len = (p->flags & IORING_SETUP_NO_SQARRAY) ? p->sq_off.ring_entries + sizeof(unsigned)
						       : p->sq_off.array + p->sq_entries * sizeof(unsigned);
	if (sq_len < p->sq_off.tail + sizeof(unsigned))
		sq_len = p->sq_off.tail + sizeof(unsigned);
	sqe_len = (size_t)p->sq_entries * sizeof(struct io_uring_sqe)
		  << (p->flags & IORING_SETUP_SQE128 ? 1 : 0);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return;
	sqes = mmap(NULL, sqe_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		    IORING_OFF_SQES);
	if (sqes == MAP_FAILED) {
		munmap(sq, sq_len);
		return;
	}
	r->sq_map = sq;
	r->sq_map_len = sq_len;
	r->sqe_map = sqes;
	r->sqe_map_len = sqe_len;
	r->own_mapping = true;
	r->khead = (unsigned *)((char *)sq + p->sq_off.head);
	r->ktail = (unsigned *)((char *)sq + p->sq_off.tail);
	r->mask = *(unsigned *)((char *)sq + p->sq_off.ring_mask);
	r->array = (p->flags & IORING_SETUP_NO_SQARRAY) ? NULL
							: (unsigned *)((char *)sq + p->sq_off.array);
	r->sqes = sqes;
	r->shift = p->flags & IORING_SETUP_SQE128 ? 1 : 0;
	atomic_store(&r->live, 1);
}

/* A ring liburing set up: use liburing's own mappings. */
static void ring_track_liburing(const struct io_uring *ring)
{
	struct raw_ring *r;

	if ((unsigned)ring->ring_fd >= RING_FD_MAX || !rings_tracked())
		return;
	r = &raw_rings[ring->ring_fd];
	ring_forget(r);
	r->khead = ring->sq.khead;
	r->ktail = ring->sq.ktail;
	r->mask = *ring->sq.kring_mask;
	r->array = ring->sq.array;
	r->sqes = ring->sq.sqes;
	r->shift = ring->flags & IORING_SETUP_SQE128 ? 1 : 0;
	atomic_store(&r->live, 1);
}

/*
 * Before io_uring_enter on a ring we know: stamp the entries published but not yet consumed.
 * Without SQPOLL the kernel consumes them only inside this enter, so nothing races; with
 * SQPOLL its thread may already have taken them (documented as best effort).
 */
static uint64_t stamp_raw(unsigned fd, unsigned flags)
{
	struct raw_ring *r;
	unsigned head, tail, n = 0;
	uint64_t bytes = 0;

	if (fd >= RING_FD_MAX || (flags & IORING_ENTER_REGISTERED_RING))
		return 0;
	r = &raw_rings[fd];
	if (!atomic_load_explicit(&r->live, memory_order_relaxed))
		return 0; /* the common miss: no ring here, nothing announced */
	atomic_fetch_add(&r->readers, 1);
	if (!atomic_load(&r->live))
		goto out; /* closed meanwhile: the closer may be waiting to unmap */
	in_stamp_raw++;
	head = __atomic_load_n(r->khead, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(r->ktail, __ATOMIC_ACQUIRE);
	for (unsigned i = head; i != tail && n <= r->mask; i++, n++) {
		unsigned idx = r->array ? r->array[i & r->mask] : i;

		sqe_stamp(&r->sqes[(idx & r->mask) << r->shift], shim.cfg.low_ioprio, &bytes);
	}
	in_stamp_raw--;
out:
	atomic_fetch_sub(&r->readers, 1);
	return bytes;
}

EXPORT int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
				      struct io_uring_params *p)
{
	int ret;

	if (unlikely(!LATE(io_uring_queue_init_params)))
		return -ENOSYS;
	ret = REAL(io_uring_queue_init_params)(entries, ring, p);
	if (ret == 0 && !in_shim)
		ring_track_liburing(ring);
	return ret;
}

EXPORT int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
	int ret;

	if (unlikely(!LATE(io_uring_queue_init)))
		return -ENOSYS;
	ret = REAL(io_uring_queue_init)(entries, ring, flags);
	if (ret == 0 && !in_shim)
		ring_track_liburing(ring);
	return ret;
}

/* liburing unmaps the ring and closes its fd with inline syscalls: forget it first. */
EXPORT void io_uring_queue_exit(struct io_uring *ring)
{
	if (likely(LATE(io_uring_queue_exit) != NULL)) {
		uring_fd_closing(ring->ring_fd);
		REAL(io_uring_queue_exit)(ring);
	}
}

EXPORT int io_uring_setup(unsigned entries, struct io_uring_params *p)
{
	int ret, saved;

	if (unlikely(!LATE(io_uring_setup)))
		return -ENOSYS;
	ret = REAL(io_uring_setup)(entries, p);
	if (ret >= 0 && !in_shim) {
		saved = errno;
		ring_track_setup(ret, p);
		errno = saved;
	}
	return ret;
}

/* The common body of the enter paths; @call runs the real function. */
#define RAW_ENTER(fd, to_submit, flags, call)                                              \
	do {                                                                               \
		uint64_t bytes = 0;                                                        \
		long ret;                                                                  \
		if (likely(!in_shim) && to_submit) {                                       \
			shim_io_prologue();                                                \
			if (self_is_low())                                                 \
				bytes = LOW_SUBMISSION(stamp_raw(fd, flags));                              \
		}                                                                          \
		in_submit++;                                                               \
		ret = call;                                                                \
		in_submit--;                                                               \
		if (bytes && ret > 0)                                                      \
			low_submitted(bytes);                                            \
		return ret;                                                                \
	} while (0)

EXPORT int io_uring_enter(unsigned fd, unsigned to_submit, unsigned min_complete,
			  unsigned flags, sigset_t *sig)
{
	if (unlikely(!LATE(io_uring_enter)))
		return -ENOSYS;
	RAW_ENTER(fd, to_submit, flags,
		  REAL(io_uring_enter)(fd, to_submit, min_complete, flags, sig));
}

EXPORT int io_uring_enter2(unsigned fd, unsigned to_submit, unsigned min_complete,
			   unsigned flags, sigset_t *sig, size_t sz)
{
	if (unlikely(!LATE(io_uring_enter2)))
		return -ENOSYS;
	RAW_ENTER(fd, to_submit, flags,
		  REAL(io_uring_enter2)(fd, to_submit, min_complete, flags, sig, sz));
}

/* ---- libaio ----------------------------------------------------------------------------- */

/* Stamp one iocb in place (a copy, or the program's own); false if it is not stamped. */
static bool iocb_stamp(struct iocb *cb, int ioprio, uint64_t *bytes)
{
	switch (cb->aio_lio_opcode) {
	case IOCB_CMD_PREAD:
	case IOCB_CMD_PWRITE:
		*bytes += cb->aio_nbytes;
		break;
	case IOCB_CMD_PREADV:
	case IOCB_CMD_PWRITEV:
		break;
	default:
		return false;
	}
	if (cb->aio_flags & IOCB_FLAG_IOPRIO)
		return false;
	cb->aio_reqprio = (__s16)ioprio;
	cb->aio_flags |= IOCB_FLAG_IOPRIO;
	return true;
}

/*
 * The pointers come from the program, and the kernel answers a bad one with EFAULT (or with
 * the count submitted before it); a plain dereference here would be SIGSEGV instead. So the
 * pointer array and the iocbs are read, and the stamped iocbs written back, through
 * process_vm_readv/writev on ourselves, in batches: three syscalls per 64 iocbs, and only
 * for low threads. Stamping stops where the kernel's submission would stop, at the first
 * pointer or iocb it could not read. Where those calls are refused (a seccomp filter: -1
 * with ENOSYS or EPERM), the iocbs are read directly and only NULL pointers are caught.
 */
#define IOCB_BATCH 64

static _Atomic bool vm_copy_refused;

static uint64_t stamp_iocbs_direct(long nr, struct iocb **ios)
{
	int ioprio = shim.cfg.low_ioprio;
	uint64_t bytes = 0;

	for (long i = 0; i < nr && ios[i]; i++)
		iocb_stamp(ios[i], ioprio, &bytes);
	return bytes;
}

static uint64_t stamp_iocbs(long nr, struct iocb **ios)
{
	struct iocb *ptrs[IOCB_BATCH], cbs[IOCB_BATCH];
	struct iovec local[IOCB_BATCH], remote[IOCB_BATCH];
	int ioprio = shim.cfg.low_ioprio, saved = errno;
	pid_t self = (pid_t)sys_call(SYS_getpid);
	uint64_t bytes = 0;

	if (atomic_load_explicit(&vm_copy_refused, memory_order_relaxed))
		return stamp_iocbs_direct(nr, ios);
	for (long done = 0; done < nr;) {
		long n = nr - done < IOCB_BATCH ? nr - done : IOCB_BATCH, m = 0, ok, w = 0;
		struct iovec pl = { ptrs, (size_t)n * sizeof(ptrs[0]) };
		struct iovec pr = { ios + done, (size_t)n * sizeof(ptrs[0]) };
		ssize_t got = sys_call(SYS_process_vm_readv, self, &pl, 1UL, &pr, 1UL, 0UL);

		if (got < 0 && errno != EFAULT) {
			atomic_store_explicit(&vm_copy_refused, true, memory_order_relaxed);
			errno = saved;
			return bytes + stamp_iocbs_direct(nr - done, ios + done);
		}
		n = got < 0 ? 0 : got / (ssize_t)sizeof(ptrs[0]);
		while (m < n && ptrs[m]) {
			local[m] = (struct iovec){ &cbs[m], sizeof(cbs[m]) };
			remote[m] = (struct iovec){ ptrs[m], sizeof(cbs[m]) };
			m++;
		}
		got = m ? sys_call(SYS_process_vm_readv, self, local, (unsigned long)m, remote,
				  (unsigned long)m, 0UL) : 0;
		ok = got < 0 ? 0 : got / (ssize_t)sizeof(cbs[0]);
		/* Write back only the iocbs that changed, packed at the front of the iovecs. */
		for (long i = 0; i < ok; i++)
			if (iocb_stamp(&cbs[i], ioprio, &bytes)) {
				local[w] = local[i];
				remote[w] = remote[i];
				w++;
			}
		if (w)
			sys_call(SYS_process_vm_writev, self, local, (unsigned long)w, remote,
				(unsigned long)w, 0UL);
		if (ok < n || n < IOCB_BATCH)
			break; /* a bad pointer, a bad iocb, or the end */
		done += n;
	}
	errno = saved;
	return bytes;
}

/* libaio's io_submit returns -errno, like the raw syscall through syscall() returns -1. */
EXPORT int io_submit(unsigned long ctx, long nr, struct iocb **ios)
{
	uint64_t bytes = 0;
	int ret;

	if (unlikely(!LATE(io_submit)))
		return -ENOSYS;
	if (likely(!in_shim) && nr > 0 && ios) {
		shim_io_prologue();
		if (self_is_low())
			bytes = LOW_SUBMISSION(stamp_iocbs(nr, ios));
	}
	in_submit++;
	ret = REAL(io_submit)(ctx, nr, ios);
	in_submit--;
	if (bytes && ret > 0)
		low_submitted(bytes);
	return ret;
}

/* ---- syscall() ----------------------------------------------------------------------- */

/* The program's own syscall() goes to libc's, as it would without the shim. */
static long real_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long (*fn)(long, ...) = REAL(syscall);

	return fn ? fn(nr, a1, a2, a3, a4, a5, a6) : sys_call6(nr, a1, a2, a3, a4, a5, a6);
}

/*
 * syscall() takes up to six register arguments; reading six from the va_list is what every
 * wrapper of it does (the unused ones are whatever the registers held).
 */
EXPORT long syscall(long nr, ...)
{
	long a1, a2, a3, a4, a5, a6, ret;
	uint64_t bytes = 0;
	va_list ap;

	va_start(ap, nr);
	a1 = va_arg(ap, long);
	a2 = va_arg(ap, long);
	a3 = va_arg(ap, long);
	a4 = va_arg(ap, long);
	a5 = va_arg(ap, long);
	a6 = va_arg(ap, long);
	va_end(ap);
	if (likely(nr != __NR_io_uring_enter && nr != __NR_io_uring_setup &&
		   nr != __NR_io_submit) || in_shim || in_submit)
		return real_syscall6(nr, a1, a2, a3, a4, a5, a6);

	if (nr == __NR_io_uring_setup) {
		ret = real_syscall6(nr, a1, a2, a3, a4, a5, a6);
		if (ret >= 0) {
			int saved = errno;

			ring_track_setup((int)ret, (const struct io_uring_params *)a2);
			errno = saved;
		}
		return ret;
	}
	if (nr == __NR_io_uring_enter && a2 > 0) {
		shim_io_prologue();
		if (self_is_low())
			bytes = LOW_SUBMISSION(stamp_raw((unsigned)a1, (unsigned)a4));
	} else if (nr == __NR_io_submit && a2 > 0 && a3) {
		shim_io_prologue();
		if (self_is_low())
			bytes = LOW_SUBMISSION(stamp_iocbs(a2, (struct iocb **)a3));
	}
	ret = real_syscall6(nr, a1, a2, a3, a4, a5, a6);
	if (bytes && ret > 0)
		low_submitted(bytes);
	return ret;
}
