// SPDX-License-Identifier: MIT
/*
 * lat_tracer.c: `iotier lat` as a child process of a test (lat_tracer.h).
 */
#include "lat_tracer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int lat_tracer_start(struct lat_tracer *t, const char *iotier, const char *dev,
		     const char *const *extra)
{
	const char *argv[32] = { iotier, "lat", "-d", dev };
	int outp[2], errp[2], n = 4;
	char buf[4096];
	size_t len = 0;

	for (; extra && *extra && n < 30; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC))
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (t->pid == 0) {
		dup2(outp[1], 1);
		dup2(errp[1], 2);
		execv(iotier, (char *const *)argv);
		_exit(127);
	}
	close(outp[1]);
	close(errp[1]);
	t->out = outp[0];
	t->err = errp[0];
	/* Wait for the banner that comes after attach; the load must not start before it. */
	while (len < sizeof(buf) - 1) {
		struct pollfd p = { .fd = t->err, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 60000) <= 0)
			break;
		r = read(t->err, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
		if (strstr(buf, "Hit Ctrl-C"))
			return 0;
	}
	buf[len] = '\0';
	fprintf(stderr, "tracer did not start: %s\n", buf);
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->out);
	close(t->err);
	return -1;
}

int lat_tracer_stop(struct lat_tracer *t, char **out)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int status;
	ssize_t r;

	kill(t->pid, SIGINT);
	while (buf && (r = read(t->out, buf + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (cap - len < 4096) {
			char *n = realloc(buf, cap *= 2);

			if (!n)
				break;
			buf = n;
		}
	}
	if (buf)
		buf[len] = '\0';
	close(t->out);
	close(t->err);
	if (waitpid(t->pid, &status, 0) < 0 || !WIFEXITED(status) || !buf) {
		free(buf);
		return -1;
	}
	*out = buf;
	return WEXITSTATUS(status);
}
