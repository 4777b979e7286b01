// SPDX-License-Identifier: MIT
/*
 * expo_http.c: the exporter's HTTP side, on libmicrohttpd. GET /metrics answers with the
 * exposition, in OpenMetrics when the Accept header asks for it (as Prometheus does) and
 * in the Prometheus text format otherwise; GET / answers a short HTML page. Memory stays
 * bounded: libmicrohttpd holds at most EXPO_MAX_CONNECTIONS connections, idle ones time
 * out, and beyond EXPO_MAX_IN_FLIGHT requests at once the next is refused with 503 and
 * counted, rather than queued behind the mutex.
 */
#include "expo_http.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "expo_render.h"
#include "expo_state.h"

#define EXPO_MAX_CONNECTIONS 32
#define EXPO_MAX_IN_FLIGHT 8
#define EXPO_IDLE_TIMEOUT_S 30

#define OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define PROM_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><title>iotier exporter</title></head><body>\n"
	"<h1>iotier exporter</h1>\n"
	"<p>Block I/O latency per I/O priority class, traced with BPF.</p>\n"
	"<p><a href=\"/metrics\">Metrics</a></p>\n"
	"</body></html>\n";

struct expo_http {
	struct MHD_Daemon *daemon;
};

/*
 * OpenMetrics when the scraper lists it with a q-value at least that of text/plain; a
 * missing Accept, or one of any type, gets the Prometheus text format, which every tool
 * reads. The q-value of @type in @accept: 1 by default, -1 when it is not listed.
 */
static double accept_q(const char *accept, const char *type)
{
	const char *p = strstr(accept, type), *end, *q;

	if (!p)
		return -1.0;
	end = strchr(p, ',');
	q = strstr(p, ";q=");
	return q && (!end || q < end) ? strtod(q + 3, NULL) : 1.0;
}

static bool wants_openmetrics(struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	double om;

	if (!accept)
		return false;
	om = accept_q(accept, "application/openmetrics-text");
	return om > 0 && om >= accept_q(accept, "text/plain");
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg),
		     MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_metrics(struct expo *e, struct MHD_Connection *c)
{
	bool om = wants_openmetrics(c);
	size_t len = 0;
	char *body;

	if (atomic_fetch_add(&e->in_flight, 1) >= EXPO_MAX_IN_FLIGHT) {
		atomic_fetch_sub(&e->in_flight, 1);
		atomic_fetch_add(&e->dropped, 1);
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "too many scrapes at once\n");
	}
	body = expo_scrape(e, om, &len);
	atomic_fetch_sub(&e->in_flight, 1);
	if (!body)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render the metrics\n");
	return reply(c, MHD_HTTP_OK, om ? OPENMETRICS_TYPE : PROM_TEXT_TYPE, body, len,
		     MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	(void)version;
	(void)upload;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	/* A request body would arrive in further calls; a GET has none, answer at once. */
	if (*upload_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	(void)req_cls;
	if (!strcmp(url, "/metrics"))
		return serve_metrics(cls, c);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)index_html,
			     sizeof(index_html) - 1, MHD_RESPMEM_PERSISTENT);
	return text(c, MHD_HTTP_NOT_FOUND, "not found; the metrics are at /metrics\n");
}

struct expo_http *expo_http_start(struct expo *e, int fd, char *err, size_t errlen)
{
	struct expo_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, e,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)EXPO_MAX_CONNECTIONS,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)EXPO_IDLE_TIMEOUT_S,
				     MHD_OPTION_END);
	if (!h->daemon) {
		snprintf(err, errlen, "cannot start the HTTP server");
		free(h);
		return NULL;
	}
	return h;
}

void expo_http_stop(struct expo_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	free(h);
}
