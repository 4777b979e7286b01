// SPDX-License-Identifier: MIT
/*
 * expo_main.c: the exporter's run: check every option and bind the port before tracing
 * (a bad address, a port in use or an unwritable textfile is one line and exit 2, with
 * nothing started), then open the tracer, serve, and every interval collect and write the
 * textfile, until SIGTERM, SIGINT or --duration. Collecting on a timer as well as on each
 * scrape keeps the kernel's histogram map drained when nobody scrapes.
 */
#include "expo_main.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "expo_collect.h"
#include "expo_http.h"
#include "expo_options.h"
#include "expo_shim.h"
#include "expo_state.h"
#include "expo_textfile.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The checks of expo_main that need no root: usage errors, exit 2. Binds @fd. */
static int validate(const struct expo_options *x, const struct expo_run *run, int *fd)
{
	char err[512];
	int ret;

	if (run->format == LAT_FORMAT_JSON)
		return usage_error("lat", "--format json does not apply to --listen or --textfile");
	if (run->count)
		return usage_error("lat", "--count does not apply to --listen or --textfile");
	if (x->no_shim && x->shim_dir)
		return usage_error("lat", "--shim-dir and --no-shim exclude each other");
	if (x->textfile && (ret = expo_textfile_probe(x->textfile)) < 0)
		return usage_error("lat", "cannot write --textfile '%s': %s", x->textfile,
				   strerror(-ret));
	if (x->listen) {
		*fd = expo_listen(x->listen, err, sizeof(err));
		if (*fd < 0)
			return usage_error("lat", "%s", err);
	}
	return 0;
}

static int serve(struct expo *e, const struct expo_options *x, const struct expo_run *run,
		 struct expo_http **http, int fd)
{
	char err[512], url[128];

	/* open, configure, load, attach */
	if (lat_session_open(&e->session, &run->lat, err, sizeof(err)) < 0) {
		fprintf(stderr, "iotier lat: %s\n", err);
		return 1;
	}
	e->start_time = expo_now_realtime();
	if (fd >= 0) {
		*http = expo_http_start(e, fd, err, sizeof(err));
		if (!*http) {
			fprintf(stderr, "iotier lat: %s\n", err);
			return 1;
		}
		expo_describe_listener(fd, url, sizeof(url));
		fprintf(stderr, "Serving block I/O latency metrics on %s\n", url);
	}
	if (x->textfile)
		fprintf(stderr, "Writing block I/O latency metrics to %s\n", x->textfile);
	return 0;
}

/* Wake every 100 ms to notice signals and the duration; collect every interval. */
static int loop(struct expo *e, const struct expo_options *x, const struct expo_run *run)
{
	double interval = run->interval ? run->interval : EXPO_DEFAULT_INTERVAL;
	double start = expo_now_monotonic(), next = start;
	int ret;

	while (!stop) {
		double t = expo_now_monotonic();

		if (run->duration && t - start >= run->duration)
			break;
		if (t >= next) {
			if (x->textfile && (ret = expo_textfile_write(e, x->textfile)) < 0)
				fprintf(stderr, "iotier lat: writing %s failed: %s\n", x->textfile,
					strerror(-ret));
			else if (!x->textfile) {
				pthread_mutex_lock(&e->lock);
				expo_collect(e);
				pthread_mutex_unlock(&e->lock);
			}
			next += interval;
			continue;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
	/* the last textfile holds everything up to the end */
	if (x->textfile && expo_textfile_write(e, x->textfile) < 0)
		return 1;
	return 0;
}

int expo_main(const struct expo_options *x, const struct expo_run *run)
{
	struct expo e = { .lock = PTHREAD_MUTEX_INITIALIZER, .report = run->report };
	struct expo_http *http = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[512];
	int fd = -1, ret;

	ret = validate(x, run, &fd);
	if (ret)
		return ret;
	if (lat_preflight(err, sizeof(err)) < 0) {
		fprintf(stderr, "iotier lat: %s\n", err);
		ret = 1;
		goto cleanup;
	}
	e.shim_dir = expo_shim_dir(x);
	if (e.shim_dir)
		expo_shim_prepare_dir(e.shim_dir);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	lat_snapshot_init(&e.delta);
	lat_snapshot_init(&e.total);

	ret = serve(&e, x, run, &http, fd);
	if (http)
		fd = -1;   /* the HTTP server owns it now */
	if (!ret)
		ret = loop(&e, x, run);
cleanup:
	expo_http_stop(http);
	if (fd >= 0)
		close(fd);
	lat_session_close(e.session);
	lat_snapshot_free(&e.delta);
	lat_snapshot_free(&e.total);
	free(e.created);
	return ret;
}
