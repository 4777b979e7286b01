// SPDX-License-Identifier: MIT
/* adaptive_worker.c: the adaptive tests' worker process and its region (adaptive_worker.h). */
#include "adaptive_worker.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "test_env.h"

static volatile pid_t child;

struct adaptive_region *adaptive_worker_region(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	void *found = NULL;

	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "/memfd:" ADAPTIVE_REGION_NAME)) {
			found = (void *)strtoull(line, NULL, 16);
			break;
		}
	if (maps)
		fclose(maps);
	return found;
}

static void kill_worker(void *arg)
{
	(void)arg;
	if (child > 0)
		kill(child, SIGKILL);
}

int adaptive_worker_kill_on_exit(void)
{
	return test_cleanup_add(kill_worker, NULL);
}

int adaptive_worker_run(const char *self, const char *preload, const char *target,
			const char *arg)
{
	int status;

	child = fork();
	if (child < 0)
		return T_EXIT_FAIL;
	if (child == 0) {
		setenv("LD_PRELOAD", preload, 1);
		setenv("IOTIER_LOW", "bg-*", 1);
		setenv("IOTIER_TARGET", target, 1);
		setenv("IOTIER_LOG", "warn", 1);
		execl(self, self, "worker", arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return T_EXIT_FAIL;
	child = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : T_EXIT_FAIL;
}
