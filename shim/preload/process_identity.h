/* SPDX-License-Identifier: MIT */
/*
 * process_identity.h: the process's own name and command line (process_identity.c), which
 * comm: and cmdline: rules match, looked at again when the title may have changed and
 * after fork.
 */
#ifndef IOTIER_PROCESS_IDENTITY_H
#define IOTIER_PROCESS_IDENTITY_H

#include "core/compiler.h"

SHIM_HIDDEN void process_identity_init(void);
SHIM_HIDDEN void process_identity_refresh(void);
SHIM_HIDDEN void process_check_title(void);
SHIM_HIDDEN void process_after_fork_child(void);

#endif
