/* SPDX-License-Identifier: MIT */
/*
 * btf_tp.h: tracepoint signatures from the kernel's BTF, for the tracers' load-time probes.
 */
#ifndef IOTIER_BTF_TP_H
#define IOTIER_BTF_TP_H

struct btf;

/*
 * The number of arguments of tracepoint @tp from its btf_trace_<tp> typedef, checking that
 * the first one points to struct @first; -1 when BTF does not describe it so (or @btf is
 * NULL).
 */
int btf_tp_params(const struct btf *btf, const char *tp, const char *first);

#endif
