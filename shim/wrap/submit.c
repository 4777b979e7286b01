// SPDX-License-Identifier: MIT
/*
 * submit.c: the pieces the asynchronous wrappers share (submit.h): the in-submit guard,
 * the device of the submission being stamped, the late lookup of liburing's and libaio's
 * functions, and the charge of a low submission once it went through.
 */
#include "submit.h"

#include <dlfcn.h>
#include <string.h>

#include "preload/preload.h"

SHIM_TLS int in_submit;
SHIM_TLS uint32_t submit_dev;

/*
 * liburing and libaio may arrive after the shim resolved its symbols, in a library that is
 * dlopen()ed later: look again rather than fail a call that would work without the shim.
 * A library opened RTLD_LOCAL is not in RTLD_NEXT's search order, so it is also asked for
 * by soname, without loading anything. Rare path: the store is a plain pointer write, and
 * two threads racing here store the same value.
 */
void *late_symbol(const char *name)
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

void low_submitted(uint64_t bytes)
{
	low_rate_charge(bytes);
	if (unlikely(adaptive_on))
		adaptive_async_submitted(bytes);
}
