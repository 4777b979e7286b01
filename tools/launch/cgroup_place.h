/* SPDX-License-Identifier: MIT */
/*
 * cgroup_place.h: `iotier run --cgroup-weight N` moves the command into its low cgroup
 * before exec, so that the command is low as a whole from its first instruction, including
 * I/O done before the shim's constructor runs and programs the shim cannot enter (static
 * binaries). The shim then finds itself in iotier-low.<pid> and keeps it (cgroup_tier.h).
 */
#ifndef IOTIER_CGROUP_PLACE_H
#define IOTIER_CGROUP_PLACE_H

#include "core/core.h"

/*
 * Place the calling process as @cfg says (IOTIER_CGROUP, IOTIER_LOW_WEIGHT), checked already
 * by shim_config_check(). Without permission it warns once and CMD goes on with ioprio
 * tagging only; IOTIER_CGROUP is then set to off so that the shim does not warn again.
 */
void cgroup_place_before_exec(const struct config *cfg);

#endif
