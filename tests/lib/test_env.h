/* SPDX-License-Identifier: MIT */
/*
 * test_env.h: how iotier's integration tests judge, skip and fail. A test that cannot run
 * here (no root, no BPF, no loop device) exits 77, which meson reports as a skip; with
 * IOTIER_TEST_STRICT=1, as CI sets it, the same situation is a failure, because CI can run
 * every test and a silent skip would hide a broken rig. A kernel that lacks a feature is not
 * such a situation: test_kernel_lacks() names it and the test judges iotier's fallback.
 */
#ifndef IOTIER_TEST_ENV_H
#define IOTIER_TEST_ENV_H

#include <stdbool.h>
#include <stdio.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* Failed EXPECTs so far, in every thread of the process. */
extern _Atomic int test_failures;

/*
 * The one assertion: check @cond without stopping. A failure is printed with where it
 * was, the condition and the printf-style message, and counted in test_failures. It is
 * an expression, true when @cond held, so that a check the rest depends on can stop:
 *   if (!EXPECT(fd >= 0, "open %s: %m", path))
 *           return T_EXIT_FAIL;
 */
#define EXPECT(cond, ...) test_expect(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

bool test_expect(bool ok, const char *file, int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* T_EXIT_FAIL if any EXPECT failed, else T_EXIT_PASS. */
int test_result(void);

/* Print "FAIL: <message>" and return T_EXIT_FAIL:  return test_fail("mount: %m"); */
int test_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* IOTIER_TEST_STRICT is set and not 0. */
bool test_strict(void);

/* Returns the exit status for "cannot run here: @why"; print the reason either way. */
int test_skip(const char *why);

/*
 * The running kernel lacks @feature (a short name: "bfq", "block debugfs"), which is no
 * failed setup: iotier falls back, and the test goes on to judge the fallback instead of
 * skipping, while the VMs of tests/vm prove the feature itself where a kernel has it. Prints
 * "KERNEL LACKS <feature>: <why>; judging the fallback" and appends the line
 * "<feature>\t<test>\t<why>" to the file IOTIER_TEST_KERNEL_LACKS names (tests/meson.build
 * sets it for every test; .ci/run reports it), <test> being IOTIER_TEST_NAME or else the
 * program's name. Setup that is missing (root, a package, a loop device) stays test_skip().
 */
void test_kernel_lacks(const char *feature, const char *why);

/*
 * Where failures are printed (stderr) and what each line starts with (""): the VM checker
 * reports on stdout, on the VM's console, in lines its driver picks out by a prefix.
 */
void test_log_to(FILE *stream, const char *prefix);

#endif
