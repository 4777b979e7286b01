/* SPDX-License-Identifier: MIT */
/*
 * tree_flags.h: one word of flags shared by a process and every child it forks, so that a
 * warning is printed once per process tree. PostgreSQL forks an autovacuum worker every few
 * seconds, each without exec; each used to repeat the same "cannot create cgroup" warning.
 */
#ifndef IOTIER_TREE_FLAGS_H
#define IOTIER_TREE_FLAGS_H

#include <stdatomic.h>

/* Bits of the shared word: the shim's warn keys (shim.h) use the low byte. */
#define TREE_WARNED_CGROUP (1u << 8)

/*
 * The shared word. Call it once early (at shim start, before the program forks) so that
 * children share it; until then, and if the mapping fails, it is this process's own word.
 */
_Atomic unsigned *tree_flags(void);

/* Set @bits; returns whether all of them were set already (someone in the tree warned). */
static inline int tree_flags_test_and_set(unsigned bits)
{
	return (atomic_fetch_or(tree_flags(), bits) & bits) == bits;
}

#endif
