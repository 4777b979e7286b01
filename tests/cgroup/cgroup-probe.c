// SPDX-License-Identifier: MIT
/*
 * cgroup-probe.c: the program the cgroup tests run under libiotier.so (or `iotier run`).
 * It starts two named threads, bg-compact and fg-serve, makes each do a little I/O through
 * wrapped calls so the shim tiers them, prints "ready PID BG_TID FG_TID" and then waits for
 * its stdin to close, so the test can look at /proc/PID/task/TID/cgroup from outside while
 * everything is still running. It then ends with exit(), or _exit() when argv[1] is "_exit",
 * which is how the test checks that the shim removes the cgroup on both paths. With
 * "cgroup-probe EXIT PATH MB" the main thread first writes MB MiB to PATH with buffered
 * writes and no fsync, for the VM's writeback check.
 * Not a test on its own; built for tests/cgroup/test-cgroup-v1.c and the VM checks.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int done_fd[2];

static void touch_io(void)
{
	char buf[64];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			perror("read");
		close(fd);
	}
}

struct worker {
	const char *name;
	pid_t tid;
	int ready[2];
};

static void *work(void *arg)
{
	struct worker *w = arg;
	char c;

	pthread_setname_np(pthread_self(), w->name);
	touch_io();
	w->tid = (pid_t)syscall(SYS_gettid);
	if (write(w->ready[1], "r", 1) < 0)
		return NULL;
	while (read(done_fd[0], &c, 1) > 0)
		;
	return NULL;
}

/* Dirty @mb MiB of page cache; writeback happens later, from the flusher. */
static int write_file(const char *path, int mb)
{
	static char chunk[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		perror(path);
		return -1;
	}
	memset(chunk, 'w', sizeof(chunk));
	for (int i = 0; i < mb; i++)
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) {
			perror("write");
			close(fd);
			return -1;
		}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct worker bg = { .name = "bg-compact" }, fg = { .name = "fg-serve" };
	pthread_t tb, tf;
	char c;

	if (pipe(done_fd) < 0 || pipe(bg.ready) < 0 || pipe(fg.ready) < 0)
		return 1;
	touch_io();
	if (argc > 3 && write_file(argv[2], atoi(argv[3])) < 0)
		return 1;
	if (pthread_create(&tb, NULL, work, &bg) || pthread_create(&tf, NULL, work, &fg))
		return 1;
	if (read(bg.ready[0], &c, 1) != 1 || read(fg.ready[0], &c, 1) != 1)
		return 1;
	printf("ready %d %d %d\n", (int)getpid(), (int)bg.tid, (int)fg.tid);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	close(done_fd[1]);
	pthread_join(tb, NULL);
	pthread_join(tf, NULL);
	if (argc > 1 && !strcmp(argv[1], "_exit"))
		_exit(0);
	return 0;
}
