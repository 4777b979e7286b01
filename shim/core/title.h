/* SPDX-License-Identifier: MIT */
/*
 * title.h: a process's command line as cmdline: rules see it, from the bytes of its argument
 * area. Shared by the shim (process_identity.c, which reads its own memory) and `iotier
 * check` (whose tracer copies the same bytes out of the submitting process), so both turn
 * the same bytes into the same string. Pure functions: no syscalls, no allocation.
 */
#ifndef IOTIER_TITLE_H
#define IOTIER_TITLE_H

#include <stddef.h>

#define TITLE_MAX 4096 /* bytes of a title looked at; a larger argument area is not matched */

/*
 * The length of the title as the kernel's /proc/PID/cmdline defines it, for @area holding
 * the argument area ([arg_start, arg_end), @arg_len bytes) and readable on to @limit bytes
 * (up to env_end): the argument area, and, when its last byte is not a NUL (a rewritten
 * title that ran long), on into the environment area up to the first NUL. At most TITLE_MAX:
 * a larger argument area is cut to its first TITLE_MAX bytes, which rules then match.
 */
size_t title_length(const char *area, size_t arg_len, size_t limit);

/* Arguments joined by spaces, trailing NUL padding dropped (PostgreSQL pads with NULs). */
void title_to_cmdline(const char *bytes, size_t len, char *out, size_t outlen);

#endif
