/* SPDX-License-Identifier: MIT */
/*
 * kernel_probe.h: what the running kernel offers the tracers, read from its BTF the way
 * libbpf-tools does (a tracepoint's signature is its btf_trace_<name> typedef), never
 * guessed from a version number. Each answer that is "no" comes with one line naming what
 * is missing and which kernel has it, so a command can refuse clearly instead of loading
 * something that would count wrong.
 *
 * For tests, IOTIER_TEST_HIDE_BTF=name[,name...] makes the probe take those tracepoints as
 * missing, so the fallbacks and refusals of older kernels can be run on a new one.
 */
#ifndef IOTIER_KERNEL_PROBE_H
#define IOTIER_KERNEL_PROBE_H

#include <stddef.h>

struct btf;

/*
 * The number of arguments of tracepoint @tp, whose first must point to struct @first; -1
 * when BTF does not describe it so (or when @btf is NULL, or the test hook hides it).
 */
int kernel_tp_args(const struct btf *btf, const char *tp, const char *first);

/*
 * Where the submitter of a request can be known exactly (enum blk_start): block_io_start,
 * else block_getrq; -1 with one line in @err when neither is there.
 */
int kernel_blk_start(const struct btf *btf, char *err, size_t errlen);

/*
 * Whether every tracepoint `iotier check` attaches to has the signature it is written for;
 * 0, or -1 with one line in @err naming the first that is missing and the kernel that has it.
 */
int kernel_check_tracepoints(const struct btf *btf, char *err, size_t errlen);

#endif
