/* SPDX-License-Identifier: MIT */
/*
 * lat_tracer.h: `iotier lat` running in the background while a test does its I/O, for the
 * tests of `iotier lat` itself and as a witness beside another tracer (check-test's
 * coverage mode): started, waited for until it has attached, then stopped with SIGINT and
 * its whole standard output kept.
 *
 *	struct lat_tracer t;
 *	if (lat_tracer_start(&t, iotier, "loop7", extra) < 0) ...
 *	... the I/O ...
 *	status = lat_tracer_stop(&t, &out);   (free(out) after)
 */
#ifndef IOTIER_LAT_TRACER_H
#define IOTIER_LAT_TRACER_H

#include <sys/types.h>

struct lat_tracer {
	pid_t pid;
	int out, err;
};

/*
 * Run `@iotier lat -d @dev @extra...` (@extra NULL-terminated, may be NULL) and wait, up to
 * 60 s, for the banner it prints once attached: no I/O may start before it. 0, or -1 with
 * what it printed on stderr (it is then killed and reaped).
 */
int lat_tracer_start(struct lat_tracer *t, const char *iotier, const char *dev,
		     const char *const *extra);

/* SIGINT it and collect its whole stdout into *@out (malloc'd); its exit status, or -1 (then
 * *@out is untouched) when it could not be read or did not exit by itself. */
int lat_tracer_stop(struct lat_tracer *t, char **out);

#endif
