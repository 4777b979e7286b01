/* SPDX-License-Identifier: MIT */
/*
 * core.h: the policy core's face, for the rooms above it and for the CLI: rules and class
 * names, the settings and their loader, cgroup placement, the process title, the adaptive
 * target, an I/O priority's class and level. One include, so that a user of the core need
 * not know how it is cut into files. Not sys.h and log.h: those are the shim's own way into
 * the kernel and its logger, which the core's users include by name when they need them.
 */
#ifndef IOTIER_CORE_H
#define IOTIER_CORE_H

#include "core/adaptive_target.h"
#include "core/cgroup_tier.h"
#include "core/config.h"
#include "core/ioprio.h"
#include "core/rules.h"
#include "core/title.h"

#endif
