/* SPDX-License-Identifier: MIT */
/*
 * cgroup_tier.h: the cgroup half of the low tier. An I/O priority follows neither buffered
 * writeback (the flusher submits it) nor the way bfq and iocost share a disk (by cgroup
 * weight), so a process that is low as a whole is also moved into a child cgroup with a low
 * blkio (v1) or io (v2) weight. The child is created below the cgroup the process already sits
 * in, so iotier only ever writes inside a subtree the process was given (delegation), and is
 * named iotier-low.<pid>: one per process, so that two processes never race to create or
 * remove the same directory, each keeps the weight it was configured with, and a directory
 * whose pid is dead is stale beyond doubt. docs/cgroup.md explains v1 against v2.
 *
 * Every function here may run on an I/O path or in a signal handler: no malloc, no stdio, no
 * locks; raw syscalls and stack buffers only. Problems are reported once, as one stderr line
 * starting with "iotier: ", and never stop the caller: I/O priority tagging goes on without
 * the cgroup. A kernel that offers no weight file (v1 blkio without bfq) is warned of only
 * when IOTIER_LOW_WEIGHT was given; with the default weight it shows in the state file and
 * `iotier threads` instead.
 */
#ifndef IOTIER_CGROUP_TIER_H
#define IOTIER_CGROUP_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct config;

#define CGROUP_LOW_PREFIX "iotier-low."

/*
 * Once per process, after the configuration is loaded: pick the hierarchy (v1 blkio or v2
 * io, per IOTIER_CGROUP) and remove empty iotier-low.<pid> directories of dead processes
 * next to our own. Returns 0, or -1 when IOTIER_CGROUP asked for a hierarchy that is not
 * there (warned once); in auto mode a machine without either controller is silently inert.
 */
int cgroup_tier_init(const struct config *cfg);

/*
 * Move the whole process (all threads, cgroup.procs) into its low cgroup or back out. A
 * process that `iotier run --cgroup-weight` placed, or that inherited a low cgroup from its
 * parent, stays low: the launch flag speaks for the process as a whole.
 */
void cgroup_tier_process(bool low);

/* cgroup v1 only (the tasks file): one thread in or out. v2 cannot split a process: no-op. */
void cgroup_tier_thread(pid_t tid, bool low);

/* At exit: move back and remove the low cgroup this process created, if it is then empty. */
void cgroup_tier_exit(void);

/* 1 or 2 for the hierarchy in use after cgroup_tier_init, 0 when off or unavailable. */
int cgroup_tier_version(void);

/* A hierarchy is in use and no placement has failed (after a failure we stop trying). */
bool cgroup_tier_usable(void);

/*
 * The weight of this process's low cgroup, for the state file: the weight it was given, 0
 * when the cgroup has no weight file (the kernel offers none there, as blkio v1 without bfq),
 * -1 while this process has no low cgroup. Placed by `iotier run --cgroup-weight`, the
 * weight is this process's IOTIER_LOW_WEIGHT, which the CLI wrote.
 */
int cgroup_tier_weight(void);

/*
 * For `iotier threads`: the io cgroup of thread @tid of process @pid (the blkio line on v1,
 * the unified line on v2) into @cgroup, and its weight into @weight (io.weight or
 * blkio.bfq.weight/blkio.weight; 0 when the cgroup has none, as the root has not).
 * Returns the cgroup version (1 or 2), or -errno.
 */
int cgroup_describe_task(pid_t pid, pid_t tid, char *cgroup, size_t len, unsigned *weight);

#endif
