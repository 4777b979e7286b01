// SPDX-License-Identifier: MIT
/*
 * wrap_exit.c: leave and remove the low cgroup on _exit() too. Destructors cover exit(), but
 * some programs end with _exit() (dash does, for one), which would leave an empty
 * iotier-low.<pid> behind until the next run's clean-up. A forked or vforked child calling
 * _exit() is not the owner, so cgroup_tier_exit() does nothing there.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "core/cgroup_tier.h"
#include "core/sys.h"
#include "preload/preload.h"

#define EXPORT __attribute__((visibility("default")))

/* glibc's _exit is exit_group and nothing else; calling it directly needs no dlsym. */
static __attribute__((noreturn)) void exit_now(int status)
{
	cgroup_tier_exit();
	state_file_remove();
	for (;;)
		sys_call(SYS_exit_group, status);
}

EXPORT void _exit(int status)
{
	exit_now(status);
}

EXPORT void _Exit(int status)
{
	exit_now(status);
}
