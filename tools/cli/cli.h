/* SPDX-License-Identifier: MIT */
/*
 * cli.h: the face of tools/cli/ (libiotier-cli.a), what every subcommand shares: the usage
 * and error lines (cli_usage.h), the getopt loop and how it refuses a bad flag
 * (cli_getopt.h), the small argument parsers (cli_parse.h), and the pieces of a run loop
 * (cli_loop.h). Rooms above include this header, not the units behind it.
 */
#ifndef IOTIER_CLI_H
#define IOTIER_CLI_H

#include "cli_getopt.h"
#include "cli_loop.h"
#include "cli_parse.h"
#include "cli_usage.h"

#endif
