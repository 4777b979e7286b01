// SPDX-License-Identifier: MIT
/*
 * fork.c: every way a new process can start from one running the shim, and the one list of
 * what a child resets.
 * - fork() and posix_spawn's fork: libc runs the atfork handler in the child.
 * - _Fork(), clone(), clone3() and syscall(SYS_fork): no handler runs. The child still holds
 *   the parent's thread table, tids included, and the table's owner pid tells it apart: the
 *   slow paths ask shim_fork_check() first, which resets the child then.
 * - vfork() and clone(CLONE_VM): the child runs in the parent's memory until it execs. It
 *   must touch nothing: shim_memory_borrowed() tells it apart with kcmp(KCMP_VM).
 * The cgroup layer needs no reset here: it compares its pid on every call (cgroup_tier.c).
 * The resets belong to the layers above (thread table, process identity): they register
 * here, so this file, which they all ask, calls none of them by name.
 */
#include "fork.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "globals.h"

#ifndef KCMP_VM
#define KCMP_VM 1 /* include/uapi/linux/kcmp.h */
#endif

/*
 * What a child resets, registered once by init.c (the layers above this one): the thread
 * table, then the process identity. Written before fork_hooks_init(), read-only after.
 */
#define FORK_RESETS_MAX 4
static void (*fork_resets[FORK_RESETS_MAX])(void);
static unsigned n_fork_resets;

void fork_on_child(void (*reset)(void))
{
	if (n_fork_resets < FORK_RESETS_MAX)
		fork_resets[n_fork_resets++] = reset;
}

/* In the child, once per fork: only the forking thread survives, as the main thread. */
static void fork_reset_child(void)
{
	if (atomic_load(&shim.status) != SHIM_ACTIVE)
		return;
	/*
	 * Reset already, by a pthread_create() in this child before the atfork handlers ran
	 * (ThreadSanitizer restarts its own thread there): the thread table's reset sets the
	 * owner pid, and a second reset would free the new thread's record.
	 */
	if (shim.table && __atomic_load_n(&shim.table->header.pid, __ATOMIC_RELAXED) == sys_getpid())
		return;
	for (unsigned i = 0; i < n_fork_resets; i++)
		fork_resets[i]();
}

int fork_hooks_init(void)
{
	return pthread_atfork(NULL, NULL, fork_reset_child);
}

/* Costs a getpid syscall: the slow paths only. Returns whether the caller may act. */
bool shim_fork_check(void)
{
	struct state_table *table = shim.table;

	if (!table || table->header.pid == sys_getpid())
		return true;
	if (shim_memory_borrowed())
		return false;
	fork_reset_child();
	return true;
}

/*
 * After a normal fork the atfork handler has set header.pid to the child's pid, so a pid
 * that differs means a child that ran no handler: a vfork() child sharing our memory, or a
 * child of a raw fork with its own copy. kcmp(KCMP_VM) tells them apart (0: the same mm);
 * where kcmp is unavailable, any mismatch counts as shared, the safe side: a raw-fork
 * child then keeps stale entries until the next open of that number.
 */
bool shim_memory_borrowed(void)
{
	struct state_table *table = shim.table;
	int saved = errno;
	pid_t self, owner;
	long same;

	if (!table || atomic_load(&shim.status) != SHIM_ACTIVE)
		return false;
	self = sys_getpid();
	owner = __atomic_load_n(&table->header.pid, __ATOMIC_RELAXED);
	if (self == owner)
		return false;
	same = sys_call(SYS_kcmp, self, owner, KCMP_VM, 0UL, 0UL);
	errno = saved;
	return same <= 0; /* 0: one mm; 1, 2, 3: different ones; -1: cannot tell */
}
