/* SPDX-License-Identifier: MIT */
/*
 * bpf_print.h: the one libbpf print hook of the tracers. The caller prints one clear line on
 * failure; libbpf's own lines (warnings too) reach stderr only with -v.
 */
#ifndef IOTIER_BPF_PRINT_H
#define IOTIER_BPF_PRINT_H

#include <stdbool.h>

/* Install the hook; @verbose decides whether libbpf's lines are shown. */
void bpf_print_setup(bool verbose);

#endif
