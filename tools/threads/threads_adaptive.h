/* SPDX-License-Identifier: MIT */
/*
 * threads_adaptive.h: the adaptive controller of a process under a target, as `iotier
 * threads` shows it: read from the process's adaptive region, then printed above the table.
 */
#ifndef IOTIER_THREADS_ADAPTIVE_H
#define IOTIER_THREADS_ADAPTIVE_H

#include <stdio.h>

#include "threads_report.h"

/* Read the adaptive controller of r->pid, if it has one, into r->adaptive*. */
void threads_read_adaptive(struct threads_report *r);
/* Its lines of the text output; nothing for a process without a target. */
void threads_print_adaptive(FILE *out, const struct threads_report *r);

#endif
