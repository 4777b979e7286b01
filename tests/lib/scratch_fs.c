// SPDX-License-Identifier: MIT
/*
 * scratch_fs.c: see scratch_fs.h. The namespace is entered before the mount so that the
 * host never sees it; the loop device is created in the host's /dev as usual.
 */
#include "scratch_fs.h"
#include "cleanup.h"
#include "run_capture.h"
#include "test_env.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int scratch_fs_private_mounts(void)
{
	static bool entered;

	if (entered)
		return 0;
	/* The guardian stays in the host's namespace, where the mount point is a plain directory. */
	if (test_guardian_start() < 0)
		return test_fail("cannot start the guardian: %s", strerror(errno));
	if (unshare(CLONE_NEWNS) < 0)
		return test_skip("cannot create a mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return test_skip("cannot make mounts private");
	entered = true;
	return 0;
}

static int make_fs(struct scratch_fs *fs, const struct scratch_fs_opts *o)
{
	char prog[32], out[2048];
	const char *argv[24];
	int n = 0, ret;

	snprintf(prog, sizeof(prog), "mkfs.%s", o->type);
	argv[n++] = prog;
	argv[n++] = "-q";
	argv[n++] = "-F";
	for (const char *const *a = o->mkfs_args; a && *a && n < 22; a++)
		argv[n++] = *a;
	argv[n++] = fs->dev.path;
	argv[n] = NULL;
	ret = run_capture(argv, out, sizeof(out), NULL);
	if (ret == 127)
		return test_skip("no mkfs (e2fsprogs missing?)");
	if (ret != 0)
		return test_fail("%s %s exited %d: %s", prog, fs->dev.path, ret, out);
	return 0;
}

static int make_mount_point(struct scratch_fs *fs, const char *want)
{
	size_t len = strlen(want);

	snprintf(fs->mnt, sizeof(fs->mnt), "%s", want);
	if (len >= 6 && !strcmp(want + len - 6, "XXXXXX") ? !mkdtemp(fs->mnt)
							  : mkdir(fs->mnt, 0700) < 0) {
		fs->mnt[0] = '\0';
		return test_fail("mount point %s: %s", want, strerror(errno));
	}
	fs->made_mnt = true;
	test_guardian_rmtree(fs->mnt);
	return 0;
}

static void destroy_cleanup(void *fs)
{
	scratch_fs_destroy(fs);
}

int scratch_fs_create(struct scratch_fs *fs, const struct scratch_fs_opts *o)
{
	int ret;

	memset(fs, 0, sizeof(*fs));
	fs->dev.index = -1;
	if (geteuid() != 0)
		return test_skip("needs root for a loop device and a mount");
	ret = scratch_fs_private_mounts();
	if (ret)
		return ret;
	test_cleanup_add(destroy_cleanup, fs);
	ret = loopdev_create(&fs->dev, o->backing_dir, o->bytes, o->scheduler, o->nr_requests);
	if (ret == -EPERM || ret == -ENOENT || ret == -ENXIO || ret == -EACCES)
		ret = test_skip("no loop devices");
	else if (ret < 0)
		ret = test_fail("loopdev_create: %s", strerror(-ret));
	if (!ret)
		ret = make_fs(fs, o);
	if (!ret)
		ret = make_mount_point(fs, o->mnt);
	if (!ret && mount(fs->dev.path, fs->mnt, o->type, 0, NULL) < 0)
		ret = errno == EPERM ? test_skip("cannot mount")
				     : test_fail("mount %s: %s", fs->dev.path, strerror(errno));
	if (ret) {
		scratch_fs_destroy(fs);
		return ret;
	}
	fs->mounted = true;
	loopdev_settle(); /* udev probes the new file system; not during the test's counting */
	return 0;
}

void scratch_fs_destroy(struct scratch_fs *fs)
{
	test_cleanup_remove(destroy_cleanup, fs);
	if (fs->mounted)
		umount2(fs->mnt, MNT_DETACH);
	fs->mounted = false;
	if (fs->made_mnt)
		rmdir(fs->mnt);
	fs->made_mnt = false;
	loopdev_destroy(&fs->dev);
}
