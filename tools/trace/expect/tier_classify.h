/* SPDX-License-Identifier: MIT */
/*
 * tier_classify.h: the tier a traced thread belongs to, decided by the shim's own rules
 * (shim/rules.c) on what a tracer saw: the thread's name, its process's name and command
 * line. `iotier check` and `iotier stalls` both classify through here, so they agree with
 * each other and with the shim.
 */
#ifndef IOTIER_TIER_CLASSIFY_H
#define IOTIER_TIER_CLASSIFY_H

#include "core/core.h"
#include "expect.h"

/* TIER_LOW, TIER_HIGH or TIER_DEFAULT; @cmdline is arguments joined by spaces, "" if unknown. */
enum expect_tier tier_classify(const struct config *cfg, const char *thread, const char *process,
			       const char *cmdline);

/* /proc/@pid/cmdline joined by spaces into @buf ("" when the process is gone). */
const char *tier_proc_cmdline(unsigned pid, char *buf, size_t len);

#endif
