/* SPDX-License-Identifier: MIT */
/*
 * launch.h: the face of tools/launch/ (libiotier-launch.a), starting a program under
 * libiotier.so, for `iotier run` and `iotier check`: the shim's settings as flags and their
 * check before anything starts (shim_options.h, which finds the shim through shim_locate.h),
 * and the start itself (spawn.h, which places the command in its low cgroup through
 * cgroup_place.h). Rooms above include this header, not the units behind it.
 */
#ifndef IOTIER_LAUNCH_H
#define IOTIER_LAUNCH_H

#include "shim_options.h"
#include "spawn.h"

#endif
