/* SPDX-License-Identifier: MIT */
/*
 * expo_http.h: the exporter's HTTP server (expo_http.c, on libmicrohttpd): /metrics.
 */
#ifndef IOTIER_EXPO_HTTP_H
#define IOTIER_EXPO_HTTP_H

#include <stddef.h>

#include "expo_state.h"

struct expo_http;
/* Serve on the bound, listening @fd; NULL with a message in @err. */
struct expo_http *expo_http_start(struct expo *e, int fd, char *err, size_t errlen);
void expo_http_stop(struct expo_http *h);

#endif
