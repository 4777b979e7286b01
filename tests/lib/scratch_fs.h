/* SPDX-License-Identifier: MIT */
/*
 * scratch_fs.h: a throwaway file system on a throwaway loop device (loopdev.h), mounted
 * in a private mount namespace: the mount goes when the test and its children do, and with
 * it the last user of the auto-clearing loop device, however the test ends. The mount
 * point is removed by scratch_fs_destroy, which is also a registered cleanup (cleanup.h).
 */
#ifndef IOTIER_SCRATCH_FS_H
#define IOTIER_SCRATCH_FS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "loopdev.h"

struct scratch_fs_opts {
	size_t bytes;                 /* device size */
	const char *backing_dir;      /* where its backing file goes (NULL: /var/tmp) */
	const char *scheduler;        /* as loopdev_create */
	unsigned nr_requests;         /* as loopdev_create */
	const char *type;             /* "ext4", "ext2" */
	const char *const *mkfs_args; /* options after mkfs.<type> -q -F, NULL-terminated */
	const char *mnt;              /* the mount point: a mkdtemp template ("...XXXXXX"), or
					 a directory to create */
};

struct scratch_fs {
	struct loopdev dev;
	char mnt[80];             /* short, so that paths below it fit small buffers */
	bool made_mnt, mounted;
};

/*
 * Move the whole process into a private mount namespace (once; later calls do nothing), so
 * that whatever it mounts from now on is gone when it and its children are, after starting
 * the guardian (cleanup.h) outside it, which removes the mount points the test made. 0, or the
 * test's exit status from test_skip(). Call it before mounting anything else of the test's.
 */
int scratch_fs_private_mounts(void);

/*
 * Enter the private mount namespace, create the device, make the
 * file system and mount it. Returns 0, or the test's exit status: test_skip() when the
 * machine cannot (no root, loop devices or mkfs.<type>), T_EXIT_FAIL when something that
 * should work did not; either way it says why, and undoes what it had done.
 */
int scratch_fs_create(struct scratch_fs *fs, const struct scratch_fs_opts *opts);

/* Unmount, remove the mount point, detach the device. Safe to call twice. */
void scratch_fs_destroy(struct scratch_fs *fs);

#endif
