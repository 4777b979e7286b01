/* SPDX-License-Identifier: MIT */
/*
 * shim_locate.h: where libiotier.so is, for subcommands that start a program under it. The
 * same binary works from the build tree and once installed.
 */
#ifndef IOTIER_SHIM_LOCATE_H
#define IOTIER_SHIM_LOCATE_H

#include <stddef.h>

enum { SHIM_MISSING = -1, SHIM_BAD = -2 };

/*
 * Fill @out with the shim's absolute path: $IOTIER_SHIM if set, else ../shim/libiotier.so.0
 * beside this executable (the build tree), else the installed path. Returns 0; SHIM_BAD
 * when the path found or given is not something ld.so would preload (relative and missing,
 * not an ELF shared object, a space or colon in it); SHIM_MISSING when there is none. Both
 * with one line in @err.
 */
int shim_locate(char *out, size_t len, char *err, size_t errlen);

/*
 * Set LD_PRELOAD so that @shim comes first, keeping what was already preloaded; nothing
 * changes when @shim is already one of its entries.
 */
int shim_preload_env(const char *shim);

#endif
