// SPDX-License-Identifier: MIT
/*
 * fuzz-config.c: libFuzzer target for the configuration loader (shim/core/config.c): the input
 * is an IOTIER_CONFIG file's text. Its first line, when it is KEY=VALUE, also stands for
 * the environment, so that the file-against-environment precedence is exercised. Built
 * with -Dfuzz=enabled (fuzz/meson.build).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char env_key[64], env_value[CONFIG_FILE_MAX];

static const char *lookup(const char *key, void *ctx)
{
	(void)ctx;
	return env_key[0] && !strcmp(key, env_key) ? env_value : NULL;
}

/* Take "KEY=VALUE" from the first line of @text as the one environment variable. */
static void fake_environment(const char *text)
{
	const char *eq = strchr(text, '='), *nl = strchr(text, '\n');
	size_t klen;

	env_key[0] = '\0';
	if (!eq || (nl && nl < eq) || (size_t)(eq - text) >= sizeof(env_key))
		return;
	klen = (size_t)(eq - text);
	memcpy(env_key, text, klen);
	env_key[klen] = '\0';
	klen = nl ? (size_t)(nl - eq - 1) : strlen(eq + 1);
	memcpy(env_value, eq + 1, klen);
	env_value[klen] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	static char text[CONFIG_FILE_MAX];
	char err[RULE_ERROR_MAX + 64];
	uint64_t bytes;

	if (size >= sizeof(text))
		return -1; /* the loader never sees more: config_file_read refuses it */
	memcpy(text, data, size);
	text[size] = '\0';
	config_parse_size(text, &bytes, err, sizeof(err));
	fake_environment(text);
	if (config_load(&cfg, lookup, NULL, text, err, sizeof(err)) == 0) {
		/* a loaded configuration is usable: match its drop-behind globs */
		config_drop_behind_matches(&cfg, text);
		rule_set_matches(&cfg.rules.low, RULE_CMDLINE, text);
	}
	return 0;
}
