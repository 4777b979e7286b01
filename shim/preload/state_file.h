/* SPDX-License-Identifier: MIT */
/*
 * state_file.h: the shim's side of the state file (state_file.c): writing this process's
 * <pid>.state, hidden in libiotier.so. The format, which the exporter reads too, is
 * include/state_file_format.h.
 */
#ifndef IOTIER_STATE_FILE_H
#define IOTIER_STATE_FILE_H

#include "state_file_format.h"
#include "core/compiler.h"

/* Take IOTIER_STATE_DIR from the loaded configuration (ignored in secure mode, like every
 * setting: a set-user-ID program never writes where its caller says). */
SHIM_HIDDEN void state_file_init(void);
/* Rewrite this process's file; raw syscalls, no allocation, no lock: callable anywhere. */
SHIM_HIDDEN void state_file_publish(void);
/* Show the controller in @r in the file from now on (adaptive_hook, once it maps one). */
struct adaptive_region;
SHIM_HIDDEN void state_file_show_adaptive(struct adaptive_region *r);
/* Remove this process's file, if this process wrote it (not a vfork child). */
SHIM_HIDDEN void state_file_remove(void);

#endif
