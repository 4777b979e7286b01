// SPDX-License-Identifier: MIT
/*
 * shim_locate.c: find libiotier.so and put it into LD_PRELOAD for the command we start.
 */
#include "shim_locate.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotier-config.h"

static int usable(const char *path)
{
	return access(path, R_OK) == 0;
}

int shim_locate(char *out, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("IOTIER_SHIM");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (!usable(env)) {
			snprintf(err, errlen, "IOTIER_SHIM=%s: %s", env, strerror(errno));
			return -1;
		}
		snprintf(out, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, len, "%s/../shim/libiotier.so.0", exe) < len &&
			    usable(out)) {
				char *real = realpath(out, NULL);

				if (real) {
					snprintf(out, len, "%s", real);
					free(real);
				}
				return 0;
			}
		}
	}
	if (usable(IOTIER_INSTALLED_SHIM)) {
		snprintf(out, len, "%s", IOTIER_INSTALLED_SHIM);
		return 0;
	}
	snprintf(err, errlen, "cannot find libiotier.so (looked beside the executable and at %s; "
		 "set IOTIER_SHIM to its path)", IOTIER_INSTALLED_SHIM);
	return -1;
}

int shim_preload_env(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *joined;
	int ret;

	if (!old || !*old)
		return setenv("LD_PRELOAD", shim, 1);
	if (strstr(old, shim))
		return 0; /* already preloaded, by a parent iotier for example */
	/* A sanitizer runtime must be loaded before everything else, the shim included. */
	if (strstr(old, "libasan") || strstr(old, "libubsan") || strstr(old, "libtsan")) {
		if (asprintf(&joined, "%s %s", old, shim) < 0)
			return -1;
	} else if (asprintf(&joined, "%s %s", shim, old) < 0) {
		return -1;
	}
	ret = setenv("LD_PRELOAD", joined, 1);
	free(joined);
	return ret;
}
