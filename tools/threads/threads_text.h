/* SPDX-License-Identifier: MIT */
/*
 * threads_text.h: `iotier threads PID` as a table: the process's line, its adaptive
 * controller, one row per thread, and a note for a low cgroup without a weight file.
 */
#ifndef IOTIER_THREADS_TEXT_H
#define IOTIER_THREADS_TEXT_H

#include "threads_report.h"

/* Print @r on stdout. */
void threads_print_text(const struct threads_report *r);

#endif
