/* SPDX-License-Identifier: MIT */
/*
 * log.h: the shim's one logger, in its bottom layer beside sys.h: one line at a time on
 * stderr, "iotier: ...", written with one raw write so that it neither goes through the
 * shim's own write() wrapper nor touches the program's stdio buffers. Warnings that could
 * repeat (a denied priority, a full table, a cgroup that cannot be made) print once.
 * Safe in a signal handler: no malloc, no lock.
 */
#ifndef IOTIER_LOG_H
#define IOTIER_LOG_H

#include "sys.h"

enum log_level { LOG_OFF = 0, LOG_WARN = 1, LOG_DEBUG = 2 };

/*
 * One bit per warning that is printed at most once per process tree: the bits are shared
 * with forked children once log_share_with_children() has run (log.c says why so).
 */
enum warn_key { WARN_CONFIG = 1u << 0, WARN_RT_DENIED = 1u << 1, WARN_SLOTS = 1u << 2,
		WARN_TABLE = 1u << 3, WARN_IOPRIO = 1u << 4, WARN_CGROUP = 1u << 5,
		WARN_ADAPTIVE = 1u << 6, WARN_TREE = 1u << 7 };

/* Share the warned bits with the children this process forks; call before it forks. */
SHIM_HIDDEN void log_share_with_children(void);

/* From IOTIER_LOG, once it is loaded; until then only warnings are shown. */
SHIM_HIDDEN void log_set_level(enum log_level level);

SHIM_HIDDEN void shim_log(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning, printed only the first time @key is given. */
SHIM_HIDDEN void shim_warn_once(unsigned key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
