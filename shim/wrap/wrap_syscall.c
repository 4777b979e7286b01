// SPDX-License-Identifier: MIT
/*
 * wrap_syscall.c: the program's own syscall(). libaio, and liburing built with libc, enter
 * the kernel through it, and so may a program that skips both: an io_uring_setup, an
 * io_uring_enter or an io_submit from a low thread is stamped here as through the
 * libraries' functions (wrap_uring.c, wrap_aio.c). Every other number goes straight to
 * libc's syscall(), as it would without the shim.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "submit.h"
#include "wrap_aio.h"
#include "wrap_uring.h"
#include "core/sys.h"
#include "preload/preload.h"
#include "preload/prologue.h"

#define EXPORT __attribute__((visibility("default")))

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
	struct low_slots slots; /* only taken is read, and only once set below */
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

			uring_track_setup((int)ret, (const struct io_uring_params *)a2);
			errno = saved;
		}
		return ret;
	}
	slots.taken = 0;
	if (nr == __NR_io_uring_enter && a2 > 0) {
		shim_io_prologue();
		if (self_is_low())
			bytes = LOW_SUBMISSION(&slots, low_submit_count((unsigned)a2),
					       uring_stamp_raw((unsigned)a1, (unsigned)a4));
	} else if (nr == __NR_io_submit && a2 > 0 && a3) {
		shim_io_prologue();
		if (self_is_low())
			bytes = LOW_SUBMISSION(&slots, low_submit_count(a2),
					       aio_stamp_iocbs(a2, (struct iocb **)a3));
	}
	ret = real_syscall6(nr, a1, a2, a3, a4, a5, a6);
	LOW_SUBMITTED(&slots, bytes, ret);
	return ret;
}
