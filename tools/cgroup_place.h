/* SPDX-License-Identifier: MIT */
/*
 * cgroup_place.h: `iotier run --cgroup-weight N` moves the command into its low cgroup
 * before exec, so that the command is low as a whole from its first instruction, including
 * I/O done before the shim's constructor runs and programs the shim cannot enter (static
 * binaries). The shim then finds itself in iotier-low.<pid> and keeps it (cgroup_tier.h).
 */
#ifndef IOTIER_CGROUP_PLACE_H
#define IOTIER_CGROUP_PLACE_H

/*
 * Load the configuration from the environment (IOTIER_CGROUP, IOTIER_LOW_WEIGHT, ...) and
 * place the calling process. Returns 0 (placed, or warned once and carrying on with ioprio
 * only) or EXIT_USAGE after usage_error() when IOTIER_CGROUP is off.
 */
int cgroup_place_before_exec(void);

#endif
