/* SPDX-License-Identifier: MIT */
/*
 * stalls_session.h: drives bpf/stalls.bpf.c from user space for `iotier stalls` and
 * `iotier check`. Lifecycle: open (preflight, tracepoint probes, filters, load) -> follow
 * the processes to trace, if any -> attach -> read one interval at a time -> close. A
 * snapshot is plain data, so the report side needs no BPF.
 */
#ifndef IOTIER_STALLS_SESSION_H
#define IOTIER_STALLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stalls.h"

struct stalls_session;

struct stalls_options {
	bool filter_pids;       /* trace only followed processes (stalls_session_follow) */
	bool children;          /* and what they fork from now on */
	const uint32_t *devs;   /* kernel dev_t values (major << 20 | minor); none: every device */
	unsigned n_devs;
	bool verbose;           /* libbpf's own messages */
};

/* One thread's stalls of one cause at one I/O priority. */
struct stalls_row {
	uint32_t tgid, tid;
	uint16_t ioprio;
	uint8_t cause;                       /* enum stalls_cause */
	char thread[STALLS_COMM_LEN + 1];
	char process[STALLS_COMM_LEN + 1];   /* the group leader's name */
	struct iolat_lat lat;
};

/* One thread's newly dirtied page cache. */
struct stalls_dirtier {
	uint32_t tgid, tid;
	char thread[STALLS_COMM_LEN + 1];
	char process[STALLS_COMM_LEN + 1];
	uint64_t bytes;
};

struct stalls_snapshot {
	struct stalls_row *rows;
	size_t n_rows;
	struct stalls_dirtier *dirtiers;
	size_t n_dirtiers;
	uint64_t counters[STALLS_NR_COUNTERS]; /* since the session opened */
};

/*
 * Check what loading needs (root or CAP_BPF + CAP_PERFMON, kernel BTF, the tracepoints),
 * open and load. Returns 0, or -errno with one line in @err.
 */
int stalls_session_open(struct stalls_session **out, const struct stalls_options *opt,
			char *err, size_t errlen);

/* Trace @pid (needs filter_pids); with @tree also the descendants it has now. 0 or -errno. */
int stalls_session_follow(struct stalls_session *s, pid_t pid, bool tree);

/* Attach every program: from here on stalls are counted. 0, or -errno with @err. */
int stalls_session_attach(struct stalls_session *s, char *err, size_t errlen);

/* Move what was counted since the last read into @snap (freed first). 0 or -errno. */
int stalls_session_read(struct stalls_session *s, struct stalls_snapshot *snap);

/* Free of BPF: in stalls_report.c. */
void stalls_snapshot_free(struct stalls_snapshot *snap);
void stalls_session_close(struct stalls_session *s);

#endif
