// SPDX-License-Identifier: MIT
/*
 * bpf_print.c: libbpf's output, hidden unless -v (see bpf_print.h).
 */
#include "bpf_print.h"

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>

static bool show_libbpf;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!show_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void bpf_print_setup(bool verbose)
{
	show_libbpf = verbose;
	libbpf_set_print(print_libbpf);
}
