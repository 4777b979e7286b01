/* SPDX-License-Identifier: MIT */
/*
 * threads_json.h: `iotier threads --json`, a threads_report as one JSON document
 * (docs/threads-json.md). threads_json.c writes it; in a build without jansson,
 * threads_json_stub.c says why it cannot.
 */
#ifndef IOTIER_THREADS_JSON_H
#define IOTIER_THREADS_JSON_H

#include <stdio.h>

#include "threads_report.h"

/* Write @r as one JSON document (docs/threads-json.md); 0, or -1 when out of memory. */
int threads_report_json(FILE *out, const struct threads_report *r);

#endif
