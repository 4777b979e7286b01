// SPDX-License-Identifier: MIT
/*
 * names-probe.c: a process whose threads carry hostile names, for `iotier threads`. Each
 * argument becomes the name of one thread (prctl(PR_SET_NAME), so any bytes, an empty name
 * or one starting with a newline included). It prints "ready" once every thread is named
 * and exits when its stdin closes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static pthread_barrier_t named;

static void *named_thread(void *arg)
{
	prctl(PR_SET_NAME, (const char *)arg);
	pthread_barrier_wait(&named);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	char buf[64];

	if (pthread_barrier_init(&named, NULL, (unsigned)argc))
		return 1;
	for (int i = 1; i < argc; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, named_thread, argv[i]))
			return 1;
	}
	pthread_barrier_wait(&named);
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
