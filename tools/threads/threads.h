/* SPDX-License-Identifier: MIT */
/*
 * threads.h: the face of tools/threads/ (libiotier-threads.a), what `iotier threads PID`
 * reads from a live process and how it shows it: the report and the steps that gather it
 * (threads_report.h), its adaptive controller (threads_adaptive.h), and the two renderings,
 * text (threads_text.h) and JSON (threads_json.h). cmd_threads.c includes this header, not
 * the units behind it.
 */
#ifndef IOTIER_THREADS_H
#define IOTIER_THREADS_H

#include "threads_adaptive.h"
#include "threads_json.h"
#include "threads_report.h"
#include "threads_text.h"

#endif
