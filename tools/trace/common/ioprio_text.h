/* SPDX-License-Identifier: MIT */
/*
 * ioprio_text.h: the I/O priority a tracer recorded (a request's as it arrived, a thread's
 * as its stall ended: class << 13 | level), as the reports spell it. The one formatter of
 * `check`'s and `stalls`' class columns, so both read "be:4" the same way, and the shim's
 * own spelling (ioprio_format() in shim/rules.c) underneath.
 */
#ifndef IOTIER_IOPRIO_TEXT_H
#define IOTIER_IOPRIO_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "idle", "be:4", "rt:0", "none": the class of @ioprio and its level where one means
 * something; "?" for a class that is none of the four. Returns @buf. */
const char *ioprio_text(uint16_t ioprio, char *buf, size_t len);

#endif
