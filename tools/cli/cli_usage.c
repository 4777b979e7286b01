// SPDX-License-Identifier: MIT
/*
 * cli_usage.c: the one-line usage and run-time errors of the subcommands (see cli_usage.h).
 */
#include "cli_usage.h"

#include <stdarg.h>
#include <stdio.h>

#include "trace/common/text_escape.h"

/* "iotier NAME: message", the message escaped whole: it quotes values from outside, and one
 * of them could end the line early or send escape sequences to the terminal. */
static void print_message(const char *name, const char *fmt, va_list ap)
{
	fprintf(stderr, "iotier %s: ", name);
	text_escape_vfprintf(stderr, fmt, ap);
}

int usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message(name, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'iotier help %s')\n", name);
	return EXIT_USAGE;
}

void error_line(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message(name, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
