/* SPDX-License-Identifier: MIT */
/*
 * lat_session.h: user-space side of the iolat block-latency tracer, as a unit that any
 * subcommand can drive (`iotier lat` prints it, `iotier check` judges a command with it).
 * The lifecycle is preflight -> open (configure filters, load, attach) -> read snapshots
 * -> close. A snapshot is plain data (no libbpf types), so renderers and tests need no BPF.
 *
 * To measure one command's process tree (as `iotier check` does): set filter_tgid and
 * follow_forks with no initial tgids, open the session, fork the command stopped before
 * exec (e.g. blocked on a pipe), lat_session_track() its pid, then let it exec. Every
 * process it forks from then on is tracked by the kernel side itself.
 */
#ifndef IOTIER_LAT_SESSION_H
#define IOTIER_LAT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "diskstats.h"
#include "iolat.h"

enum lat_attach {
	LAT_ATTACH_AUTO,   /* tp_btf where BTF has the tracepoint's signature, else raw_tp */
	LAT_ATTACH_BTF,
	LAT_ATTACH_RAW,
};

struct lat_options {
	unsigned ndevs;
	__u32 devs[IOLAT_MAX_DEVS];   /* kernel dev_t (major << 20 | minor); none: all devices */
	bool filter_tgid;             /* count only requests submitted by tracked tgids */
	bool follow_forks;            /* children of tracked tgids become tracked */
	unsigned ntgids;
	const __u32 *tgids;           /* initial tracked set; more via lat_session_track() */
	const char *cgroup;           /* cgroup v2 directory, or NULL */
	__u32 op_mask;                /* 1 << IOLAT_OP_*; 0 means all */
	enum lat_attach attach;
	__u32 inflight_max;           /* 0: IOLAT_DEFAULT_INFLIGHT */
	bool verbose;                 /* libbpf debug output on stderr */
};

/* One histogram row: a device, operation, class and level (level -1 once merged by class). */
struct lat_row {
	__u32 dev;
	__u32 op;
	__u32 ioclass;
	int level;
	__u64 count;
	__u64 bytes;
	struct iolat_lat q2c;
	struct iolat_lat d2c;
};

/* Devices whose completions are checked against diskstats at most (more are not checked). */
#define LAT_MAX_COVERAGE 128

/*
 * One device's completions in a window, as the kernel's diskstats count them and as the
 * tracer counted them (diskstats.h says which columns match which op). Only the ops in
 * @compared are checked: the ones traced (--op) among reads, writes and discards.
 */
struct lat_coverage {
	__u32 dev;
	__u32 compared;                   /* 1 << DISKSTATS_* */
	__u64 kernel[DISKSTATS_NR_OPS];
	__u64 traced[DISKSTATS_NR_OPS];
};

struct lat_snapshot {
	struct timespec start, end;   /* CLOCK_REALTIME bounds of the interval */
	size_t nrows, cap;
	struct lat_row *rows;
	/* Since the session was opened: */
	__u64 drops;                  /* requests not tracked, in-flight map full */
	__u64 hist_drops;             /* completions lost, histogram map full */
	__u64 requeues;
	__u64 merges;
	/* Now: */
	__u64 inflight;               /* requests in the in-flight map */
	__u32 inflight_max;
	const char *attach;           /* "tp_btf" or "raw_tp" */
	/* Coverage: one entry per traced device whose diskstats could be read. Without a
	 * submitter filter, traced counts the rows; with one (--pid, --children, --cgroup:
	 * coverage_filtered) the rows are a subset and traced counts every completion of the
	 * device that the tracer saw, so its shortfall bounds what the rows may lack. */
	bool has_coverage;
	bool coverage_filtered;
	__u64 missed_runs;            /* program runs the kernel reported skipping, this window */
	size_t ncov;
	struct lat_coverage cov[LAT_MAX_COVERAGE];
};

struct lat_session;

/*
 * Check what loading needs: kernel BTF and CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN).
 * Returns 0, or -1 with one line naming what is missing in @err.
 */
int lat_preflight(char *err, size_t errlen);

/* Open, configure, load and attach. Returns 0 or -errno with a message in @err. */
int lat_session_open(struct lat_session **out, const struct lat_options *opt, char *err,
		     size_t errlen);

/* Track one more tgid (needs filter_tgid). Returns 0 or -errno. */
int lat_session_track(struct lat_session *s, __u32 tgid);

/*
 * Move what was counted since the last read into @snap (rows are reset, counters refreshed)
 * and clear it in the kernel. With @final, also take what arrived during the read itself.
 * Returns 0 or -errno.
 */
int lat_session_read(struct lat_session *s, struct lat_snapshot *snap, bool final);

void lat_session_close(struct lat_session *s);

/* BPF program runs the kernel skipped (recursion or preemption), summed over the tracer's
 * programs: those requests were not seen. Returns 0 or -errno. */
int lat_session_missed_runs(struct lat_session *s, __u64 *missed);

/* Requests in flight now, by priority class, and when the oldest of each class started
 * (CLOCK_MONOTONIC ns, 0 when none): a class whose requests wait without completing is
 * starved. Returns 0 or -errno. */
int lat_session_inflight_by_class(struct lat_session *s, __u64 count[IOLAT_NR_CLASSES],
				  __u64 oldest_ns[IOLAT_NR_CLASSES]);

/* Snapshot helpers, free of BPF (lat_snapshot.c). */
/* Add the distribution @src into @dst: counts, sums, buckets, min and max. */
void lat_sum(struct iolat_lat *dst, const struct iolat_lat *src);
void lat_snapshot_init(struct lat_snapshot *snap);
void lat_snapshot_free(struct lat_snapshot *snap);
/* Find or add the row for a key; NULL on allocation failure. */
struct lat_row *lat_snapshot_row(struct lat_snapshot *snap, __u32 dev, __u32 op, __u32 ioclass,
				 int level);
/* Add @src's rows and counters into @dst (for cumulative reports). Returns 0 or -ENOMEM. */
int lat_snapshot_merge(struct lat_snapshot *dst, const struct lat_snapshot *src);
/* Fill each coverage entry's traced counts from the rows (before any by-class merge); not
 * for a filtered snapshot, whose traced counts are the device's. */
void lat_coverage_count(struct lat_snapshot *snap);
/* Add @src's coverage into @dst's, device by device. */
void lat_coverage_merge(struct lat_snapshot *dst, const struct lat_snapshot *src);
/* Completions diskstats counted and the tracer did not, over the compared ops (negative
 * when the tracer counted more), and the totals of both. */
long long lat_coverage_missing(const struct lat_coverage *c, __u64 *kernel, __u64 *traced);
/* How many of the report's requests on @c's device may be missing at most: the device's
 * missing completions, and with a filter (@filtered) also every program run the kernel
 * reported skipping (@missed_runs: a skipped start leaves a request untracked unseen). */
unsigned long long lat_coverage_may_be_missing(const struct lat_coverage *c, bool filtered,
					       __u64 missed_runs);
/* Merge levels: one row per device, op and class, with level -1. Returns 0 or -ENOMEM. */
int lat_snapshot_by_class(struct lat_snapshot *snap);
/* Sort rows by device, op, class, level. */
void lat_snapshot_sort(struct lat_snapshot *snap);

/*
 * The @p-th percentile (0 < p <= 100) of @l in ns: the midpoint of the bucket holding that
 * rank, clamped to [min, max], so percentiles are monotone and P100 is the exact max.
 * 0 when @l is empty.
 */
__u64 lat_percentile(const struct iolat_lat *l, double p);

const char *lat_op_name(__u32 op);
const char *lat_class_name(__u32 ioclass);
/* Parse "read,write,..." into a mask; -1 with the bad token in @bad (size @badlen). */
int lat_parse_ops(const char *list, __u32 *mask, char *bad, size_t badlen);

#endif
