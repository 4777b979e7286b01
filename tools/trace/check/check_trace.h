/* SPDX-License-Identifier: MIT */
/*
 * check_trace.h: the tracing session of `iotier check` around bpf/iotrack.bpf.c and
 * bpf/iotitle.bpf.c. It loads and attaches the programs, follows the command's processes
 * (their command lines arrive as events, because the rules may match on them and a process
 * can be gone by the end: at exec, and again whenever a process does I/O under a title it
 * has rewritten since), and turns the BPF maps into a check_report once the command is done.
 */
#ifndef IOTIER_CHECK_TRACE_H
#define IOTIER_CHECK_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "check_report.h"
#include "iotrack.h"

struct check_trace;

/*
 * Decide the tier of one stats entry and whether it leaked; @cmdline is the process's
 * command line with arguments joined by spaces ("" when unknown).
 */
typedef enum expect_tier (*check_classify_fn)(const struct iotrack_key *key, const char *cmdline,
					      bool *leak, void *ctx);

/*
 * Open and load the program, tracing only @devs (kernel dev_t values, @n_devs of them, 0 for
 * all). Returns 0, or -errno with a message in @err.
 */
int check_trace_open(struct check_trace **out, const uint32_t *devs, unsigned n_devs,
		     bool verbose, char *err, size_t errlen);

/* Follow @pid and everything it forks from now on. Call before the process does any I/O. */
int check_trace_follow(struct check_trace *t, pid_t pid);

/* Attach every program. Returns 0, or -errno with a message in @err. */
int check_trace_attach(struct check_trace *t, char *err, size_t errlen);

/* Read process events for up to @timeout_ms. Returns the number handled, or -errno. */
int check_trace_poll(struct check_trace *t, int timeout_ms);

/* Classify every entry into @r. Returns 0 or -errno. */
int check_trace_collect(struct check_trace *t, check_classify_fn classify, void *ctx,
			struct check_report *r);

/*
 * The command line the rules see for @tgid: its title at its latest I/O, else the one it
 * exec'd with, else (a forked child that has not exec'd) its parent's; "" when unknown.
 */
const char *check_trace_cmdline(struct check_trace *t, uint32_t tgid);

void check_trace_close(struct check_trace *t);

#endif
