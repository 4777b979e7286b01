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

#include "lat_snapshot.h"

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

#endif
