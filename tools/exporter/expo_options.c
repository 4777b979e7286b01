// SPDX-License-Identifier: MIT
/*
 * expo_options.c: the exporter's options and the checks that must pass before anything is
 * traced: the listen address is parsed and bound here (so a bad address or a port in use
 * is a usage error, not a failure after the tracer is up) and the textfile's directory is
 * tried with a real file.
 */
#include "expo_options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"

int expo_set_option(struct expo_options *x, int opt, const char *arg)
{
	switch (opt) {
	case EXPO_OPT_LISTEN:
		x->listen = arg;
		return 0;
	case EXPO_OPT_TEXTFILE:
		if (!*arg)
			return usage_error("lat", "--textfile needs a path");
		x->textfile = arg;
		return 0;
	case EXPO_OPT_SHIM_DIR:
		if (!*arg)
			return usage_error("lat", "--shim-dir needs a directory");
		x->shim_dir = arg;
		return 0;
	case EXPO_OPT_NO_SHIM:
		x->no_shim = true;
		return 0;
	}
	return usage_error("lat", "unknown exporter option");
}

/* Split "host:port", "[v6]:port" or ":port" in place; host "" means every address. */
static int split_addr(char *s, char **host, char **port)
{
	char *colon;

	if (*s == '[') {
		char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -1;
		*close = '\0';
		*host = s + 1;
		*port = close + 2;
		return 0;
	}
	colon = strrchr(s, ':');
	if (!colon || strchr(s, ':') != colon)
		return -1;
	*colon = '\0';
	*host = s;
	*port = colon + 1;
	return 0;
}

static int valid_port(const char *p)
{
	char *end;
	long v;

	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	v = strtol(p, &end, 10);
	return !errno && !*end && v >= 0 && v <= 65535;
}

static int bind_first(const struct addrinfo *ai, char *err, size_t errlen, const char *addr)
{
	int fd, one = 1, saved = 0;

	for (; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			return fd;
		saved = errno;
		close(fd);
	}
	snprintf(err, errlen, "cannot listen on '%s': %s", addr, strerror(saved ? saved : EINVAL));
	return -1;
}

int expo_listen(const char *addr, char *err, size_t errlen)
{
	/* Numeric addresses only: a daemon must not wait on DNS to start, or bind whatever a
	 * name resolves to today. */
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST };
	struct addrinfo *res = NULL;
	char buf[256], *host, *port;
	int ret;

	if (strlen(addr) >= sizeof(buf) || (snprintf(buf, sizeof(buf), "%s", addr),
					     split_addr(buf, &host, &port) < 0) ||
	    !valid_port(port)) {
		snprintf(err, errlen, "bad --listen '%s' (IP:PORT, [IPv6]:PORT or :PORT)", addr);
		return -1;
	}
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	ret = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "bad --listen '%s': %s", addr,
			 ret == EAI_NONAME ? "not a numeric IP address" : gai_strerror(ret));
		return -1;
	}
	ret = bind_first(res, err, errlen, addr);
	freeaddrinfo(res);
	return ret;
}

void expo_describe_listener(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "http://[%s]:%s/metrics" :
		 "http://%s:%s/metrics", host, port);
}
