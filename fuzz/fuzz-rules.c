// SPDX-License-Identifier: MIT
/*
 * fuzz-rules.c: libFuzzer target for the rule and class parsers (shim/core/rules.c). The input
 * is a rule list, as --low or IOTIER_LOW gives it; a list that parses is then matched
 * against subjects cut from the same input, and the first line is also tried as a low
 * and a high class. Built with -Dfuzz=enabled (fuzz/meson.build).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/rules.h"

#define INPUT_MAX 8192

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rule_set set;
	char text[INPUT_MAX + 1], err[RULE_ERROR_MAX];
	size_t n = size < INPUT_MAX ? size : INPUT_MAX;

	memcpy(text, data, n);
	text[n] = '\0';
	low_class_parse(text, err, sizeof(err));
	high_class_parse(text, err, sizeof(err));
	if (rule_set_parse(text, &set, err, sizeof(err)) == 0) {
		/* subjects: the whole input, and its tail after each rule's first byte */
		for (unsigned k = RULE_THREAD; k <= RULE_CMDLINE; k++)
			rule_set_matches(&set, (enum rule_kind)k, text);
		for (unsigned i = 0; i < set.count; i++)
			rule_set_matches(&set, set.rules[i].kind, set.rules[i].glob + 1);
	} else if (!memchr(err, '\0', sizeof(err))) {
		abort(); /* an error message must be a terminated string */
	}
	return 0;
}
