/* SPDX-License-Identifier: MIT */
/*
 * test_env.h: how iotier's integration tests skip and clean up. A test that cannot run here
 * (no root, no BPF, no loop device) exits 77, which meson reports as a skip; with
 * IOTIER_TEST_STRICT=1, as CI sets it, the same situation is a failure, because CI can run
 * every test and a silent skip would hide a broken rig.
 */
#ifndef IOTIER_TEST_ENV_H
#define IOTIER_TEST_ENV_H

#include <stdio.h>
#include <stdlib.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/*
 * Check a condition without stopping: print where and why it failed and count it in the
 * including file's own `failures` counter, which it defines (atomic where threads check).
 */
#define EXPECT(cond, ...)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);              \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static inline int test_strict(void)
{
	const char *s = getenv("IOTIER_TEST_STRICT");

	return s && *s && *s != '0';
}

/* Returns the exit status for "cannot run here: @why"; print the reason either way. */
static inline int test_skip(const char *why)
{
	if (test_strict()) {
		fprintf(stderr, "FAIL (strict mode, would skip): %s\n", why);
		return T_EXIT_FAIL;
	}
	fprintf(stderr, "SKIP: %s\n", why);
	return T_EXIT_SKIP;
}

#endif
