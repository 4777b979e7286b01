/* SPDX-License-Identifier: MIT */
/*
 * compiler.h: the compiler attributes every room of the shim uses: branch hints for the hot
 * path, hidden visibility (the version script exports only what libiotier.map names) and
 * static TLS. Nothing else: no type, no function, so any file may include it.
 */
#ifndef IOTIER_COMPILER_H
#define IOTIER_COMPILER_H

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef SHIM_HIDDEN
#define SHIM_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Static TLS: no __tls_get_addr, which may allocate, on the hot path or in a signal handler. */
#define SHIM_TLS __thread __attribute__((tls_model("initial-exec")))

#endif
