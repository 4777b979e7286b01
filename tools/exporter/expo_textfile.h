/* SPDX-License-Identifier: MIT */
/*
 * expo_textfile.h: --textfile (expo_textfile.c): the exposition written for
 * node_exporter's textfile collector.
 */
#ifndef IOTIER_EXPO_TEXTFILE_H
#define IOTIER_EXPO_TEXTFILE_H

#include "expo_state.h"

/* Write @path atomically (temp file + rename); 0 or -errno. */
int expo_textfile_write(struct expo *e, const char *path);
/* Can a file be created next to @path? 0, or -errno with nothing left behind. */
int expo_textfile_probe(const char *path);

#endif
