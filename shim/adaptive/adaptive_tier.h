/* SPDX-License-Identifier: MIT */
/*
 * adaptive_tier.h: the adaptive tier's face: the controller, its histogram reads, the region
 * shared by a process tree and its reader, the debt log, the gate and the splitter. The
 * preloaded library's adaptive hook and the CLI's views (iotier threads, the exporter)
 * include this; the design is at the head of adaptive.c.
 */
#ifndef IOTIER_ADAPTIVE_TIER_H
#define IOTIER_ADAPTIVE_TIER_H

#include "adaptive/adaptive.h"
#include "adaptive/adaptive_hist.h"
#include "adaptive/adaptive_region.h"
#include "adaptive/adaptive_view.h"
#include "adaptive/debt_log.h"
#include "adaptive/low_gate.h"
#include "adaptive/split_io.h"

#endif
