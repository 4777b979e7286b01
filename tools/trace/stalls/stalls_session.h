/* SPDX-License-Identifier: MIT */
/*
 * stalls_session.h: drives bpf/stalls.bpf.c from user space for `iotier stalls` and
 * `iotier check`. Lifecycle: open (preflight, tracepoint probes, filters, load) -> follow
 * the processes to trace, if any -> attach -> read one interval at a time -> close. A
 * snapshot is plain data (stalls_snapshot.h), so the report side needs no BPF.
 */
#ifndef IOTIER_STALLS_SESSION_H
#define IOTIER_STALLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stalls_snapshot.h"

struct stalls_session;

struct stalls_options {
	bool filter_pids;       /* trace only followed processes (stalls_session_follow) */
	bool children;          /* and what they fork from now on */
	const uint32_t *devs;   /* kernel dev_t values (major << 20 | minor); none: every device */
	unsigned n_devs;
	bool verbose;           /* libbpf's own messages */
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

void stalls_session_close(struct stalls_session *s);

#endif
