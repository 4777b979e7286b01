/* SPDX-License-Identifier: MIT */
/*
 * expo_state.h: the exporter's shared state and the functions of its units. One mutex
 * guards the tracer session and the cumulative snapshot, so concurrent scrapes and the
 * periodic collection take turns; the request counters are atomics, so a scrape that waits
 * for the mutex still shows up as in flight.
 */
#ifndef IOTIER_EXPO_STATE_H
#define IOTIER_EXPO_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "adaptive_view.h"
#include "expo.h"

/* When a series first appeared: OpenMetrics' _created. */
struct expo_created {
	__u32 dev, op, ioclass;
	int level;
	double at;              /* CLOCK_REALTIME seconds */
};

/* Totals over every state file the last scan read (expo_shim.c). */
#define EXPO_SHIM_TIERS 2       /* low, high: untagged threads are not counted */
#define EXPO_SHIM_CLASSES 4     /* none, rt, be, idle */
#define EXPO_ADAPTIVE_MAX 64    /* controllers published at most: series stay bounded */
struct expo_shim_totals {
	unsigned long processes;
	unsigned long process_tier[EXPO_SHIM_TIERS];
	unsigned long threads[EXPO_SHIM_TIERS][EXPO_SHIM_CLASSES];
	unsigned long ignored;  /* files of dead processes, or not the process owner's */
	size_t nadaptive;       /* adaptive controllers, one per process tree under a target */
	struct adaptive_view adaptive[EXPO_ADAPTIVE_MAX];
};

struct expo {
	pthread_mutex_t lock;             /* guards everything down to `shim` */
	struct lat_session *session;
	struct lat_report_opts report;
	struct lat_snapshot delta;        /* scratch for each read */
	struct lat_snapshot total;        /* cumulative since start, gone disks dropped */
	struct expo_created *created;
	size_t ncreated, capcreated;
	double start_time;                /* CLOCK_REALTIME seconds */
	__u64 missed_runs;                /* BPF program runs the kernel skipped */
	__u64 inflight[IOLAT_NR_CLASSES];  /* block requests in flight now, by class */
	double oldest_s[IOLAT_NR_CLASSES]; /* age of the oldest of them, 0 when none */
	unsigned long collect_errors;
	unsigned long textfile_writes, textfile_errors;
	double scrape_seconds;            /* sum, and count, of completed scrapes */
	unsigned long scrapes;
	const char *shim_dir;             /* NULL: --no-shim */
	struct expo_shim_totals shim;

	atomic_uint in_flight;            /* HTTP requests being answered now */
	atomic_ulong dropped;             /* HTTP requests refused: too many in flight */
};

/* expo_collect.c: read the tracer into the totals (lock held). Returns 0 or -errno. */
int expo_collect(struct expo *e);
double expo_created_at(const struct expo *e, const struct lat_row *row);
double expo_now_realtime(void);
double expo_now_monotonic(void);

/* expo_render.c: the whole exposition (lock held); OpenMetrics or Prometheus text 0.0.4. */
void expo_render(FILE *out, const struct expo *e, bool openmetrics);
/* Collect and render into a malloc'ed buffer; NULL on failure. Takes the lock. */
char *expo_scrape(struct expo *e, bool openmetrics, size_t *len);

/* expo_shim.c: scan the state directory into e->shim (lock held). */
void expo_shim_scan(struct expo *e);
/* Create the default state directory (mode 1733) if it is missing; never fails the run. */
void expo_shim_prepare_dir(const char *dir);
const char *expo_shim_dir(const struct expo_options *x);

/*
 * expo_adaptive.c: a state file's "adaptive_NAME N" line into @v (false: not one); the
 * controller of a file that @owner owns into @t, the freshest per tree; their series.
 */
bool expo_adaptive_line(struct adaptive_view *v, const char *line);
void expo_adaptive_add(struct expo_shim_totals *t, const struct adaptive_view *v, uid_t owner);
void expo_adaptive_render(FILE *out, bool om, const struct expo_shim_totals *t,
			  void (*family)(FILE *, bool, const char *, const char *, const char *));

/* expo_http.c */
struct expo_http;
/* Serve on the bound, listening @fd; NULL with a message in @err. */
struct expo_http *expo_http_start(struct expo *e, int fd, char *err, size_t errlen);
void expo_http_stop(struct expo_http *h);

/* expo_textfile.c: write @path atomically (temp file + rename); 0 or -errno. */
int expo_textfile_write(struct expo *e, const char *path);
/* Can a file be created next to @path? 0, or -errno with nothing left behind. */
int expo_textfile_probe(const char *path);

/* expo_options.c: bind and listen on ADDR:PORT; the fd, or -1 with a message in @err. */
int expo_listen(const char *addr, char *err, size_t errlen);
/* "http://ADDR:PORT/metrics" of a listening socket, for the start-up line. */
void expo_describe_listener(int fd, char *buf, size_t len);

#endif
