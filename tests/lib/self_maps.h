/* SPDX-License-Identifier: MIT */
/*
 * self_maps.h: find one of this process's mappings by its path in /proc/self/maps, e.g. the
 * shim's shared regions, which are memfds ("/memfd:iotier-adaptive").
 */
#ifndef IOTIER_SELF_MAPS_H
#define IOTIER_SELF_MAPS_H

/* The start of the first mapping whose path contains @part, or NULL. */
void *self_mapping(const char *part);

#endif
