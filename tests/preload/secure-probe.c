// SPDX-License-Identifier: MIT
/*
 * secure-probe.c: load libiotier.so (argv[1]) the way /etc/ld.so.preload would give it to
 * a setuid program, then report what the shim did to this process: the calling thread's
 * I/O priority class and whether it sits in an iotier-low cgroup. dlopen rather than
 * LD_PRELOAD, because ld.so drops a preload by path from a secure program, and a test may
 * not edit /etc/ld.so.preload on a shared machine. Prints "class=N low_cgroup=0|1".
 */
#include <dlfcn.h>
#include <linux/ioprio.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int in_low_cgroup(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int low = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		low |= strstr(line, "/iotier-low.") != NULL;
	fclose(f);
	return low;
}

int main(int argc, char **argv)
{
	long prio;

	if (argc != 2) {
		fprintf(stderr, "usage: secure-probe LIBIOTIER\n");
		return 2;
	}
	/* Its constructor runs now: configuration, the main thread's tier, the process's. */
	if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "secure-probe: %s\n", dlerror());
		return 1;
	}
	prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	printf("class=%ld low_cgroup=%d\n", prio < 0 ? -1 : IOPRIO_PRIO_CLASS(prio),
	       in_low_cgroup());
	return 0;
}
