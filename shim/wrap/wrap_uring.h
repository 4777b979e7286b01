/* SPDX-License-Identifier: MIT */
/*
 * wrap_uring.h: what wrap_uring.c offers the other wrappers: close() (wrap_fd.c) says a
 * raw ring's fd goes away, syscall() (wrap_syscall.c) sets up and enters raw rings.
 */
#ifndef IOTIER_WRAP_URING_H
#define IOTIER_WRAP_URING_H

#include <stdint.h>

#include "core/compiler.h"

#define RING_FD_MAX 4096 /* rings on fds above this are not tracked */

struct io_uring_params;

/* Forget the io_uring ring mapped for @fd, if any. */
SHIM_HIDDEN void uring_fd_closing(int fd);
/* A ring the kernel just set up on @fd: map its SQ side for ourselves. */
SHIM_HIDDEN void uring_track_setup(int fd, const struct io_uring_params *p);
/* Before io_uring_enter on @fd: stamp the published entries; returns their byte count. */
SHIM_HIDDEN uint64_t uring_stamp_raw(unsigned fd, unsigned flags);

#endif
