/* SPDX-License-Identifier: MIT */
/*
 * stalls_snapshot.h: what the write-path stall tracer (stalls_session.h) read in one
 * interval, as plain data: every thread's stalls by cause and I/O priority, and who dirtied
 * page cache. Free of BPF, so the report side and its tests need no tracer.
 */
#ifndef IOTIER_STALLS_SNAPSHOT_H
#define IOTIER_STALLS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "stalls.h"

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

/* Free what @snap holds and leave it empty. */
void stalls_snapshot_free(struct stalls_snapshot *snap);

#endif
