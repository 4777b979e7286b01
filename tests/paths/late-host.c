// SPDX-License-Identifier: MIT
/*
 * Description: liburing and libaio loaded after the shim, inside a plugin opened with
 * dlopen(RTLD_LOCAL). The shim's io_uring_submit and io_submit answer the plugin's calls
 * (the preload comes first in the global scope), so they must find the real functions late
 * and by soname: the submissions succeed, and from a low thread their SQE and iocb carry
 * the low priority. Usage: late-host PLUGIN. Exit 0 pass, 1 fail, 77 skip.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/ioprio.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "test_env.h"

int main(int argc, char **argv)
{
	int (*run)(const char *, int *, int *);
	int uring = -1, aio = -1, ret;
	void *plugin;

	if (argc != 2) {
		fprintf(stderr, "usage: late-host PLUGIN\n");
		return T_EXIT_FAIL;
	}
	plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!plugin) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return T_EXIT_FAIL;
	}
	run = (int (*)(const char *, int *, int *))dlsym(plugin, "plugin_run");
	prctl(PR_SET_NAME, "bg-plugin", 0, 0, 0);
	ret = run(argv[1], &uring, &aio);
	if (ret == -ENOSYS || ret == -EPERM) {
		/* -ENOSYS is also what the shim returned when it could not find liburing. */
		fprintf(stderr, "plugin: %s\n", strerror(-ret));
		if (!dlsym(RTLD_DEFAULT, "iotier_get_tier"))
			return test_skip("io_uring or AIO not available");
	}
	if (ret != 0) {
		fprintf(stderr, "FAIL: plugin submissions failed: %d (%s)\n", ret,
			ret < 0 ? strerror(-ret) : "?");
		return T_EXIT_FAIL;
	}
	if (uring != IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0) ||
	    aio != IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) {
		fprintf(stderr, "FAIL: SQE ioprio %#x, iocb ioprio %#x, want idle\n", uring, aio);
		return T_EXIT_FAIL;
	}
	return T_EXIT_PASS;
}
