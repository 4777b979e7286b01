/* SPDX-License-Identifier: MIT */
/*
 * api_direct.h: the tier API without the shim's rules: low is the idle class (or
 * IOTIER_LOW_CLASS), high and default give back the priority the thread had at its first
 * call. Used by the static helper when no shim is loaded, and by the shim when it is off.
 */
#ifndef IOTIER_API_DIRECT_H
#define IOTIER_API_DIRECT_H

int api_direct_set_tier(int tier);
int api_direct_get_tier(void);

#endif
