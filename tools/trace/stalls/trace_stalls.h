/* SPDX-License-Identifier: MIT */
/*
 * trace_stalls.h: the face of tools/trace/stalls/ (libiotier-trace-stalls.a), the
 * write-path stall tracer's user-space side: the session that loads bpf/stalls.bpf.c
 * (stalls_session.h), the plain snapshot it reads (stalls_snapshot.h), and its report, which
 * also answers check's `stall` paths (stalls_report.h, with jansson). Above lat, expect and
 * common; check/ uses it.
 */
#ifndef IOTIER_TRACE_STALLS_H
#define IOTIER_TRACE_STALLS_H

#include "stalls_report.h"
#include "stalls_session.h"
#include "stalls_snapshot.h"

#endif
