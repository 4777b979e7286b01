// SPDX-License-Identifier: MIT
/*
 * Description: the program the install tests compile from installed files only, with
 * `pkg-config --cflags --libs iotier`, as a user of the API would.
 *   tier-user api: iotier_set_tier(IOTIER_LOW) on this thread must give it class idle and
 *     iotier_get_tier() IOTIER_LOW, whether or not libiotier.so.0 is preloaded.
 *   tier-user named DIR: a thread named inst-bg writes a file in DIR (its first I/O, which
 *     a low rule tags); then DIR/ready gets "PID TID CLASS" and the program waits for DIR/stop
 *     (60 s at most) so that `iotier threads PID` can look at the thread.
 * Both print the path of the libiotier.so mapped into the process, or "none".
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <iotier.h>

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_IDLE 3

static int my_class(void)
{
	long prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, (int)syscall(SYS_gettid));

	return prio < 0 ? -1 : (int)(prio >> 13);
}

/* The path of the mapped shim, "none" when it is not preloaded. */
static void print_shim(void)
{
	char line[4096], *path;
	FILE *maps = fopen("/proc/self/maps", "r");
	const char *found = "none";

	while (maps && fgets(line, sizeof(line), maps)) {
		path = strchr(line, '/');
		if (path && strstr(path, "/libiotier.so")) {
			path[strcspn(path, "\n")] = '\0';
			found = path;
			break;
		}
	}
	printf("shim %s\n", found);
	if (maps)
		fclose(maps);
}

static int api(void)
{
	print_shim();
	if (iotier_set_tier(IOTIER_LOW) != 0) {
		perror("iotier_set_tier");
		return 1;
	}
	printf("tier %d class %d\n", iotier_get_tier(), my_class());
	return iotier_get_tier() == IOTIER_LOW && my_class() == IOPRIO_CLASS_IDLE ? 0 : 1;
}

static const char *dir;

static void *background(void *arg)
{
	char path[4096], ready[4096];
	FILE *f;
	int fd;

	(void)arg;
	pthread_setname_np(pthread_self(), "inst-bg");
	snprintf(path, sizeof(path), "%s/data", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return NULL;
	close(fd);

	snprintf(path, sizeof(path), "%s/ready.tmp", dir);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fprintf(f, "%d %ld %d\n", (int)getpid(), syscall(SYS_gettid), my_class());
	fclose(f);
	snprintf(ready, sizeof(ready), "%s/ready", dir); /* whole, or not there yet */
	rename(path, ready);

	snprintf(path, sizeof(path), "%s/stop", dir);
	for (int i = 0; i < 600 && access(path, F_OK) != 0; i++)
		usleep(100 * 1000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	if (argc == 2 && !strcmp(argv[1], "api"))
		return api();
	if (argc != 3 || strcmp(argv[1], "named")) {
		fprintf(stderr, "usage: tier-user api | tier-user named DIR\n");
		return 2;
	}
	dir = argv[2];
	print_shim();
	fflush(stdout);
	if (pthread_create(&thread, NULL, background, NULL) != 0)
		return 1;
	pthread_join(thread, NULL);
	return 0;
}
