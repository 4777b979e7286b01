// SPDX-License-Identifier: MIT
/*
 * globals.c: the shim's state that every layer above sys/log reads (globals.h): the global
 * record and the per-thread variables. Only definitions: nothing here calls anything.
 */
#include "globals.h"

struct shim_globals shim;
SHIM_TLS struct state_slot *self_slot;
SHIM_TLS int in_shim;
SHIM_TLS unsigned io_calls;
