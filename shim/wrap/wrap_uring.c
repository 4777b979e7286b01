// SPDX-License-Identifier: MIT
/*
 * wrap_uring.c: io_uring submission from low threads. A thread's ioprio only reaches the
 * I/O it submits itself; an SQE prepared by the SQPOLL kernel thread, or run by an io-wq
 * worker, takes the priority written in the SQE. So before a low thread's submission,
 * read/write SQEs with ioprio 0 get the low priority written in. An explicit priority is
 * left alone, and so are opcodes where the ioprio field means something else
 * (send/recv/accept flags). libaio is wrap_aio.c, syscall() wrap_syscall.c.
 *
 * Where submission is caught (docs/low-paths.md lists what is not):
 * - liburing: its submit functions, which publish the SQ tail. Debian's liburing 2.3 enters
 *   the kernel with an inline syscall, so libc never sees it; the SQEs between sq.sqe_head
 *   and sq.sqe_tail are the unpublished ones, and stamping them before the tail moves is what
 *   makes it hold with SQPOLL.
 * - raw io_uring through syscall() or liburing's io_uring_setup()/io_uring_enter(): the shim
 *   maps the new ring's SQ ring and SQE array itself at setup, and at enter stamps the
 *   published, not yet consumed entries between the kernel's head and tail.
 */
#include "wrap_uring.h"

#include <errno.h>
#include <liburing.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "submit.h"
#include "preload/preload.h"
#include "preload/prologue.h"

#define EXPORT __attribute__((visibility("default")))

/* Newer than the Debian 12 uapi headers; values from include/uapi/linux/io_uring.h. */
#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP (1U << 14)     /* 6.5: the application provides the memory */
#endif
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)  /* 6.6: SQ entries are used in ring order */
#endif

/*
 * Read/write opcodes: the only ones where sqe->ioprio is an I/O priority. Their fds join
 * the submission's device (submit_note_fd), read from the SQE the stamp reads anyway; a
 * registered file's (IOSQE_FIXED_FILE) is an index into the ring's table, no fd: of no
 * known device.
 */
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
	submit_note_fd(sqe->flags & IOSQE_FIXED_FILE ? -1 : sqe->fd);
	if (sqe->ioprio == 0)
		sqe->ioprio = (__u16)ioprio;
	return true;
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

/* The SQEs the application got since the last submit: what this submit hands the kernel. */
static uint32_t liburing_pending(const struct io_uring *ring)
{
	return low_submit_count((long)(ring->sq.sqe_tail - ring->sq.sqe_head));
}

/* The common body: stamp when low, submit, then charge the rate limit. */
#define URING_SUBMIT(name, ring, call)                                                     \
	do {                                                                               \
		struct low_slots slots;                                                    \
		uint64_t bytes = 0;                                                        \
		int ret;                                                                   \
		slots.taken = 0;                                                           \
		if (unlikely(!LATE(name)))                                                 \
			return -ENOSYS;                                                    \
		if (unlikely(in_shim))                                                     \
			return REAL(name) call;                                            \
		shim_io_prologue();                                                        \
		if (self_is_low())                                                         \
			bytes = LOW_SUBMISSION(&slots, liburing_pending(ring),             \
					       stamp_liburing(ring));                      \
		in_submit++;                                                               \
		ret = REAL(name) call;                                                     \
		in_submit--;                                                               \
		LOW_SUBMITTED(&slots, bytes, ret);                                         \
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
 * An entry is read by low threads entering the kernel (uring_stamp_raw) while another thread may
 * close the ring's fd, which unmaps the shim's mapping. No lock on the enter path: a reader
 * announces itself in @readers and then checks @live; the closer clears @live and then
 * waits for @readers to drain before it unmaps. Both sides use sequentially consistent
 * operations, so either the reader sees the entry dead or the closer sees the reader. The
 * wait is as long as one stamping loop (at most the ring's size in SQEs, no syscall).
 */
struct raw_ring {
	_Atomic int live;
	_Atomic int readers;   /* threads inside uring_stamp_raw on this entry */
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
void uring_track_setup(int fd, const struct io_uring_params *p)
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
uint64_t uring_stamp_raw(unsigned fd, unsigned flags)
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
		uring_track_setup(ret, p);
		errno = saved;
	}
	return ret;
}

/* The common body of the enter paths; @call runs the real function. */
#define RAW_ENTER(fd, to_submit, flags, call)                                              \
	do {                                                                               \
		struct low_slots slots;                                                    \
		uint64_t bytes = 0;                                                        \
		long ret;                                                                  \
		slots.taken = 0;                                                           \
		if (likely(!in_shim) && to_submit) {                                       \
			shim_io_prologue();                                                \
			if (self_is_low())                                                 \
				bytes = LOW_SUBMISSION(&slots, low_submit_count(to_submit), \
						       uring_stamp_raw(fd, flags));        \
		}                                                                          \
		in_submit++;                                                               \
		ret = call;                                                                \
		in_submit--;                                                               \
		LOW_SUBMITTED(&slots, bytes, ret);                                         \
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
