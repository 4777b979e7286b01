/* SPDX-License-Identifier: MIT */
/*
 * wrap_aio.h: what wrap_aio.c offers syscall() (wrap_syscall.c): stamping a low thread's
 * iocbs before the kernel reads them.
 */
#ifndef IOTIER_WRAP_AIO_H
#define IOTIER_WRAP_AIO_H

#include <stdint.h>

#include "core/compiler.h"

struct iocb;

/* Stamp the first @nr iocbs of @ios (read through the kernel); returns their byte count. */
SHIM_HIDDEN uint64_t aio_stamp_iocbs(long nr, struct iocb **ios);

#endif
