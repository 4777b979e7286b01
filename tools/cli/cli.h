/* SPDX-License-Identifier: MIT */
/*
 * cli.h: the face of tools/cli/ (libiotier-cli.a), what every subcommand shares: the usage
 * and error lines (cli_usage.h), the getopt loop and how it refuses a bad flag
 * (cli_getopt.h), and the small argument parsers and run-loop pieces (cli_common.h). Rooms above include this header, not the units behind it.
 */
#ifndef IOTIER_CLI_H
#define IOTIER_CLI_H

#include "cli_common.h"
#include "cli_getopt.h"
#include "cli_usage.h"

#endif
