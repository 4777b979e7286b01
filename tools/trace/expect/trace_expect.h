/* SPDX-License-Identifier: MIT */
/*
 * trace_expect.h: the face of tools/trace/expect/ (libiotier-trace-expect.a): the --expect
 * language of `iotier check`, its tiers, ops, causes and classes (expect.h), and the tier a
 * traced thread is in by the shim's own rules (tier_classify.h). Above tools/trace/common,
 * below lat, stalls and check.
 */
#ifndef IOTIER_TRACE_EXPECT_H
#define IOTIER_TRACE_EXPECT_H

#include "expect.h"
#include "tier_classify.h"

#endif
