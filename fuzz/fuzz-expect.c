// SPDX-License-Identifier: MIT
/*
 * fuzz-expect.c: libFuzzer target for the `iotier check --expect` language (tools/trace/expect.c).
 * The input is an expression; one that parses is evaluated against values derived from the
 * input (so that no data, zero and huge values all occur) and its result formatted. The
 * first byte's low bit says whether a baseline is given. Built with -Dfuzz=enabled.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/expect/expect.h"

#define INPUT_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *seed;
static size_t seed_len;

/* A value for @ref that depends on the input: sometimes no data, often 0, sometimes huge. */
static int lookup(const struct expect_ref *ref, struct expect_value *out, void *ctx)
{
	unsigned char pick = seed_len ? seed[(uintptr_t)ref % seed_len] : 0;

	(void)ctx;
	if (pick % 7 == 0)
		return -1;
	out->v = pick % 5 == 0 ? 0.0 : pick % 3 == 0 ? 1e300 : (double)pick * 1000.0;
	out->class_mask = (uint32_t)pick * 0x01010101u;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct expect e;
	struct expect_result res;
	char text[INPUT_MAX + 1], err[256];
	size_t n = size < INPUT_MAX ? size : INPUT_MAX;

	if (!size)
		return 0;
	memcpy(text, data + 1, n - 1);
	text[n - 1] = '\0';
	seed = data;
	seed_len = size;
	if (expect_parse(text, data[0] & 1, &e, err, sizeof(err)) == 0)
		expect_eval(&e, lookup, NULL, &res);
	return 0;
}
