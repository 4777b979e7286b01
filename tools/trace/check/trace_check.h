/* SPDX-License-Identifier: MIT */
/*
 * trace_check.h: the face of tools/trace/check/ (libiotier-trace-check.a), the top room of
 * the tracing vocabulary, what `iotier check` measures: the session around bpf/iotrack and
 * bpf/iotitle (check_trace.h) and the report its expectations are answered from, read and
 * written as JSON (check_report.h). Above stalls, lat, expect and common; only the commands
 * and the tests use it.
 */
#ifndef IOTIER_TRACE_CHECK_H
#define IOTIER_TRACE_CHECK_H

#include "check_report.h"
#include "check_trace.h"

#endif
