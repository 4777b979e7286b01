/* SPDX-License-Identifier: MIT */
/*
 * expo.h: the face of tools/exporter/ (libiotier-exporter.a): `iotier lat --listen
 * ADDR:PORT` and `--textfile PATH`, the long-running Prometheus exporter. cmd_lat.c parses
 * its usual options, hands the exporter's four options to expo_set_option() and, when one
 * of --listen or --textfile was given, gives the whole run to expo_main(). Everything the
 * exporter is lives under tools/exporter/, one header per file: options and validation
 * (expo_options.c), collection (expo_collect.c), rendering (expo_render.c), the HTTP
 * server (expo_http.c), the textfile writer (expo_textfile.c), the shims' state
 * (expo_shim.c), their adaptive controllers (expo_adaptive.c) and the loop that ties them
 * together (expo_main.c); the state they share is expo_state.h. cmd_lat.c includes this
 * header, not the units behind it.
 */
#ifndef IOTIER_EXPO_H
#define IOTIER_EXPO_H

#include "expo_main.h"
#include "expo_options.h"

#endif
