/* SPDX-License-Identifier: MIT */
/*
 * init.h: bringing the shim up (init.c): from its constructor, or from the first wrapped
 * call that runs before it.
 */
#ifndef IOTIER_INIT_H
#define IOTIER_INIT_H

#include "core/compiler.h"

struct state_slot;

SHIM_HIDDEN void shim_init(void);
/*
 * Attach the calling thread (not created through our pthread_create, or the main thread),
 * bringing the shim up first if nothing has yet (init.c).
 */
SHIM_HIDDEN struct state_slot *thread_attach_self(void);

#endif
