// SPDX-License-Identifier: MIT
/*
 * wrap_aio.c: libaio submission from low threads. libaio carries an I/O priority per iocb,
 * and the kernel's worker takes it from there, not from the submitting thread: before a
 * low thread's io_submit() (libaio's, or syscall(SYS_io_submit) through wrap_syscall.c),
 * iocbs without IOCB_FLAG_IOPRIO get the low priority written in. An explicit priority is
 * left alone, and so are commands other than reads and writes.
 */
#include "wrap_aio.h"

#include <errno.h>
#include <linux/aio_abi.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "submit.h"
#include "core/sys.h"
#include "preload/preload.h"
#include "preload/prologue.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * Stamp one iocb in place (a copy, or the program's own); false if it is not stamped. A
 * read's or a write's fd joins the submission's device (submit_note_fd), stamped or not.
 */
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
	submit_note_fd((int)cb->aio_fildes);
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

uint64_t aio_stamp_iocbs(long nr, struct iocb **ios)
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
	struct low_slots slots;
	uint64_t bytes = 0;
	int ret;

	slots.taken = 0;

	if (unlikely(!LATE(io_submit)))
		return -ENOSYS;
	if (likely(!in_shim) && nr > 0 && ios) {
		shim_io_prologue();
		if (self_is_low())
			bytes = LOW_SUBMISSION(&slots, low_submit_count(nr),
					       aio_stamp_iocbs(nr, ios));
	}
	in_submit++;
	ret = REAL(io_submit)(ctx, nr, ios);
	in_submit--;
	LOW_SUBMITTED(&slots, bytes, ret);
	return ret;
}
