// SPDX-License-Identifier: MIT
/* adaptive_worker.c: the adaptive tests' worker process and its probes (adaptive_worker.h). */
#include "adaptive_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adaptive/adaptive_view.h"
#include "cleanup.h"
#include "self_maps.h"
#include "test_env.h"

#define MAX_ARGS 8

static volatile pid_t child;

struct adaptive_region *adaptive_worker_region(void)
{
	return self_mapping(ADAPTIVE_REGION_LINK);
}

struct adaptive_region *adaptive_worker_region_or_fail(void)
{
	struct adaptive_region *r = adaptive_worker_region();

	if (!r)
		test_fail("no %s mapping: is the shim preloaded with a target?", ADAPTIVE_REGION_NAME);
	return r;
}

uint64_t adaptive_worker_noted(struct adaptive_region *r)
{
	uint64_t n = 0;

	for (uint32_t s = 0; s < ADAPTIVE_HIST_SLOTS; s++)
		for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
			n += ADAPTIVE_HIST_READS(atomic_load(&r->hist[s].count[i]));
	return n;
}

int adaptive_worker_write_file(const char *path, uint32_t bytes)
{
	static char block[64 * 1024];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	memset(block, 'w', sizeof(block));
	for (uint32_t off = 0; fd >= 0 && off < bytes; off += sizeof(block)) {
		size_t n = bytes - off < sizeof(block) ? bytes - off : sizeof(block);

		if (pwrite(fd, block, n, off) != (ssize_t)n) {
			close(fd);
			return test_fail("write %s: %m", path);
		}
	}
	if (fd < 0 || fsync(fd) != 0) {
		if (fd >= 0)
			close(fd);
		return test_fail("%s: %m", path);
	}
	close(fd);
	return 0;
}

long adaptive_worker_thread_syscall(pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr;
}

bool adaptive_worker_in_futex(pid_t tid)
{
	return adaptive_worker_thread_syscall(tid) == SYS_futex;
}

bool adaptive_worker_view_readable(struct adaptive_region *r)
{
	struct adaptive_view v;

	return adaptive_view_read(adaptive_view_copy_local, r, &v) == 0;
}

uint64_t adaptive_worker_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int adaptive_worker_child_loop(int stop_fd, bool (*low_io)(void))
{
	struct pollfd p = { .fd = stop_fd, .events = POLLIN };
	uint64_t until = adaptive_worker_now_ns() + 40000000000ull; /* adaptive_worker.h: why */

	prctl(PR_SET_NAME, "bg-child", 0, 0, 0);
	while (adaptive_worker_now_ns() < until && poll(&p, 1, 0) == 0)
		if (!low_io() || usleep(1000))
			return 2;
	return poll(&p, 1, 0) == 1 ? 0 : 1;
}

pid_t adaptive_worker_start_child(const char *self, const char *how, const char *dir, int stop_fd)
{
	char fd_text[16];
	pid_t pid;

	snprintf(fd_text, sizeof(fd_text), "%d", stop_fd);
	pid = fork();
	if (pid == 0) {
		setenv("IOTIER_TEST_STEP", how, 1);
		execl(self, self, "worker", "child", dir, fd_text, (char *)NULL);
		_exit(127);
	}
	return pid;
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

/* In the child: the environment, then exec; never returns. */
static void exec_worker(const char *self, const char *preload, const char *target,
			char *const env[], const char *const args[])
{
	const char *argv[MAX_ARGS + 3] = { self, "worker" };
	int n = 2;

	setenv("LD_PRELOAD", preload, 1);
	setenv("IOTIER_LOW", "bg-*", 1);
	setenv("IOTIER_TARGET", target, 1);
	setenv("IOTIER_LOG", "warn", 1);
	for (int i = 0; env && env[i]; i++)
		putenv(env[i]);
	for (int i = 0; args[i] && n < MAX_ARGS + 2; i++)
		argv[n++] = args[i];
	execv(self, (char *const *)argv);
	_exit(127);
}

int adaptive_worker_run(const char *self, const char *preload, const char *target,
			char *const env[], const char *const args[])
{
	int status;

	child = fork();
	if (child < 0)
		return T_EXIT_FAIL;
	if (child == 0)
		exec_worker(self, preload, target, env, args);
	if (waitpid(child, &status, 0) != child)
		return T_EXIT_FAIL;
	child = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : T_EXIT_FAIL;
}
