// SPDX-License-Identifier: MIT
/*
 * api_helper.c: libiotier-api.a, what `pkg-config --libs iotier` links. A program calls
 * iotier_set_tier() whether or not libiotier.so is preloaded: with the shim, the helper
 * forwards to the shim's definition (the next one after the executable in symbol lookup
 * order), so explicit calls and rules share one record per thread; without it, the helper
 * sets the priority itself.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "api_direct.h"
#include "iotier.h"

static int (*shim_set_tier)(int);
static int (*shim_get_tier)(void);
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;

static void lookup_shim(void)
{
	shim_set_tier = (int (*)(int))dlsym(RTLD_NEXT, "iotier_set_tier");
	shim_get_tier = (int (*)(void))dlsym(RTLD_NEXT, "iotier_get_tier");
}

int iotier_set_tier(int tier)
{
	pthread_once(&lookup_once, lookup_shim);
	return shim_set_tier ? shim_set_tier(tier) : api_direct_set_tier(tier);
}

int iotier_get_tier(void)
{
	pthread_once(&lookup_once, lookup_shim);
	return shim_get_tier ? shim_get_tier() : api_direct_get_tier();
}
