/* SPDX-License-Identifier: MIT */
/*
 * shim_locate.h: where libiotier.so is, for subcommands that start a program under it. The
 * same binary works from the build tree and once installed.
 */
#ifndef IOTIER_SHIM_LOCATE_H
#define IOTIER_SHIM_LOCATE_H

#include <stddef.h>

/*
 * Fill @out with the shim's path: $IOTIER_SHIM if set, else ../shim/libiotier.so.0 beside this
 * executable (the build tree), else the installed path. Returns 0, or -1 with a message in
 * @err when no readable library is found.
 */
int shim_locate(char *out, size_t len, char *err, size_t errlen);

/* Set LD_PRELOAD so that @shim comes first, keeping what was already preloaded. */
int shim_preload_env(const char *shim);

#endif
