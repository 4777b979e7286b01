// SPDX-License-Identifier: MIT
/*
 * loopdev.c: create and remove the loop devices that tests and the demo run on. The device
 * is configured with LO_FLAGS_AUTOCLEAR and its backing file is unlinked at once, so a test
 * that crashes leaves nothing behind: the kernel detaches the device when its last fd closes.
 */
#include "loopdev.h"
#include "run_capture.h"
#include "small_file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The loop fd is kept open in a static table: AUTOCLEAR detaches when it is closed. */
static int held_fd[64] = { [0 ... 63] = -1 };

int loopdev_queue_set(const struct loopdev *dev, const char *attr, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/block/%s/queue/%s", dev->name, attr);
	return write_file(path, value);
}

static int hold(int fd)
{
	for (int i = 0; i < 64; i++)
		if (held_fd[i] < 0) {
			held_fd[i] = fd;
			return 0;
		}
	return -EMFILE;
}

static void release(const char *path)
{
	struct stat want, have;

	if (stat(path, &want) < 0)
		return;
	for (int i = 0; i < 64; i++)
		if (held_fd[i] >= 0 && fstat(held_fd[i], &have) == 0 && have.st_rdev == want.st_rdev) {
			ioctl(held_fd[i], LOOP_CLR_FD, 0);
			close(held_fd[i]);
			held_fd[i] = -1;
		}
}

void loopdev_settle(void)
{
	const char *argv[] = { "udevadm", "settle", "-t", "5", NULL };
	char out[256];

	run_capture(argv, out, sizeof(out), NULL); /* no udevadm: nothing to wait for */
}

int loopdev_create(struct loopdev *dev, const char *dir, size_t bytes, const char *scheduler,
		   unsigned nr_requests)
{
	struct loop_config config;
	int ctl = -1, backing = -1, loopfd = -1, ret;
	struct stat st;

	memset(dev, 0, sizeof(*dev));
	dev->index = -1;
	snprintf(dev->backing, sizeof(dev->backing), "%s/iotier-loop.XXXXXX", dir ? dir : "/var/tmp");
	backing = mkostemp(dev->backing, O_CLOEXEC);
	if (backing < 0)
		return -errno;
	/* The loop driver holds its own reference; nothing is left on disk after a crash. */
	unlink(dev->backing);
	dev->backing[0] = '\0';
	if (ftruncate(backing, (off_t)bytes) < 0)
		goto fail_errno;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		goto fail_errno;
	for (int attempt = 0; attempt < 8; attempt++) {
		int index = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (index < 0)
			goto fail_errno;
		snprintf(dev->path, sizeof(dev->path), "/dev/loop%d", index);
		loopfd = open(dev->path, O_RDWR | O_CLOEXEC);
		if (loopfd < 0)
			goto fail_errno;
		memset(&config, 0, sizeof(config));
		config.fd = (__u32)backing;
		config.block_size = 4096;
		config.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
		if (ioctl(loopfd, LOOP_CONFIGURE, &config) == 0) {
			dev->index = index;
			break;
		}
		ret = -errno;
		close(loopfd);
		loopfd = -1;
		if (ret != -EBUSY) /* another process took it between GET_FREE and CONFIGURE */
			goto fail;
	}
	if (dev->index < 0) {
		ret = -EBUSY;
		goto fail;
	}
	close(ctl);
	ctl = -1;
	close(backing);
	backing = -1;
	snprintf(dev->name, sizeof(dev->name), "loop%d", dev->index);
	if (fstat(loopfd, &st) == 0) {
		dev->major = major(st.st_rdev);
		dev->minor = minor(st.st_rdev);
	}
	ret = hold(loopfd);
	if (ret < 0)
		goto fail;
	loopfd = -1;

	if (nr_requests) {
		char depth[16];

		/* The depth can only be lowered below the scheduler's own minimum while it is none. */
		ret = loopdev_queue_set(dev, "scheduler", "none");
		snprintf(depth, sizeof(depth), "%u", nr_requests);
		if (!ret)
			ret = loopdev_queue_set(dev, "nr_requests", depth);
		if (ret)
			goto fail_destroy;
	}
	if (scheduler) {
		ret = loopdev_queue_set(dev, "scheduler", scheduler);
		if (ret)
			goto fail_destroy;
	}
	return 0;

fail_errno:
	ret = -errno;
fail:
	if (loopfd >= 0)
		close(loopfd);
	if (ctl >= 0)
		close(ctl);
	if (backing >= 0)
		close(backing);
	dev->index = -1;
	return ret;
fail_destroy:
	loopdev_destroy(dev);
	return ret;
}

void loopdev_destroy(struct loopdev *dev)
{
	if (dev->index < 0)
		return;
	release(dev->path);
	dev->index = -1;
}
