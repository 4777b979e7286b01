/* SPDX-License-Identifier: MIT */
/*
 * class_trace.h: bytes that reached one block device, per I/O priority class and level,
 * counted by the iolat tracer (tools/trace/lat_session.c) where the request is created, so the
 * class is the one the block layer saw. Shared by the low-path tests and their benchmark.
 */
#ifndef IOTIER_CLASS_TRACE_H
#define IOTIER_CLASS_TRACE_H

#include <stdint.h>
#include <sys/types.h>

struct lat_session;

struct class_bytes {
	uint64_t bytes[4][8];   /* [IOPRIO_CLASS_*][level] */
	uint64_t total;
	/* Completions the kernel's diskstats counted on the device and the tracer did not
	 * (docs/lat.md "Coverage against diskstats"); 0 when filtered by process (not compared). */
	long long missing;
};

struct class_trace {
	struct lat_session *session;
};

/*
 * Trace device @major:@minor, operations @op_mask (1 << IOLAT_OP_*), and only process @tgid
 * and its children when @tgid > 0 (which may also be added later with class_trace_track).
 * Returns 0, or -errno with a line in @err; -EPERM/-ENOENT/-EOPNOTSUPP mean "cannot run here".
 */
int class_trace_open(struct class_trace *t, unsigned major, unsigned minor, uint32_t op_mask,
		     int filter_tgid, char *err, size_t errlen);
int class_trace_track(struct class_trace *t, pid_t tgid);
/* What completed since the last read. Returns 0 or -errno. */
int class_trace_read(struct class_trace *t, struct class_bytes *out);
void class_trace_close(struct class_trace *t);

/* Bytes not at class idle: what escaped the low tier. */
uint64_t class_bytes_not_idle(const struct class_bytes *c);

#endif
