/* SPDX-License-Identifier: MIT */
/*
 * trace_common.h: the face of tools/trace/common/ (libiotier-trace-common.a), the bottom
 * room of the tracing vocabulary: the one device resolver (blkdev.h), the kernel's
 * diskstats (diskstats.h), text escapes and the one UTF-8 decoder (text_escape.h), outside
 * text as JSON (json_text.h, with jansson), a traced ioprio as text (ioprio_text.h), and
 * with libbpf the one print hook (bpf_print.h) and what the kernel's BTF offers
 * (kernel_probe.h). Rooms above include this header or, to say what they use, the
 * unit's own ("trace/common/blkdev.h").
 */
#ifndef IOTIER_TRACE_COMMON_H
#define IOTIER_TRACE_COMMON_H

#include "blkdev.h"
#include "bpf_print.h"
#include "diskstats.h"
#include "ioprio_text.h"
#include "json_text.h"
#include "kernel_probe.h"
#include "text_escape.h"

#endif
