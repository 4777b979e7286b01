/* SPDX-License-Identifier: MIT */
/*
 * threads_memfd.h: where the shim's memfds are in another process. `iotier threads` reads
 * the state table and the adaptive region of a live process through /proc/PID/mem, and
 * first needs their addresses.
 */
#ifndef IOTIER_THREADS_MEMFD_H
#define IOTIER_THREADS_MEMFD_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Find the memfd mapping /memfd:@name in @pid's maps: 0 with its start and length, -ENOENT
 * when there is none, or -errno when the maps cannot be read (as another user: EACCES).
 */
int threads_find_memfd(pid_t pid, const char *name, uint64_t *addr, uint64_t *len);

#endif
