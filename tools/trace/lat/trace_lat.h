/* SPDX-License-Identifier: MIT */
/*
 * trace_lat.h: the face of tools/trace/lat/ (libiotier-trace-lat.a), the iolat
 * block-latency tracer's user-space side: the session that loads it (lat_session.h), the
 * plain snapshot it reads (lat_snapshot.h), coverage against diskstats (lat_coverage.h), and
 * the renderers, which need jansson (lat_report.h, lat_coverage_report.h). Above
 * tools/trace/common; stalls/ and check/ use it.
 */
#ifndef IOTIER_TRACE_LAT_H
#define IOTIER_TRACE_LAT_H

#include "lat_coverage.h"
#include "lat_coverage_report.h"
#include "lat_report.h"
#include "lat_session.h"
#include "lat_snapshot.h"

#endif
