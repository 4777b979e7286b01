/* SPDX-License-Identifier: MIT */
/*
 * wrap_async.h: what wrap_async.c offers the other wrappers: close() (wrap_fd.c) tells it
 * that a raw io_uring ring's fd goes away.
 */
#ifndef IOTIER_WRAP_ASYNC_H
#define IOTIER_WRAP_ASYNC_H

#include "core/compiler.h"

#define RING_FD_MAX 4096 /* rings on fds above this are not tracked */

/* Forget the io_uring ring mapped for @fd, if any. */
SHIM_HIDDEN void uring_fd_closing(int fd);

#endif
