// SPDX-License-Identifier: MIT
/*
 * json_text.c: text from outside as JSON strings (see json_text.h).
 */
#include "json_text.h"

#include "text_escape.h" /* utf8_seq_len(), the one UTF-8 decoder */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int json_text_is_utf8(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n) {
		n = utf8_seq_len((const unsigned char *)s + i, len - i);
		if (!n)
			return 0;
	}
	return 1;
}

/* @s with U+FFFD (EF BF BD) for each byte that starts no valid sequence. */
static json_t *lossy_string(const char *s, size_t len)
{
	char *out = malloc(3 * len + 1);
	size_t o = 0;
	json_t *str;

	if (!out)
		return NULL;
	for (size_t i = 0, n; i < len; i += n) {
		n = utf8_seq_len((const unsigned char *)s + i, len - i);
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	str = json_stringn(out, o);
	free(out);
	return str;
}

static json_t *hex_string(const char *s, size_t len)
{
	char *out = malloc(2 * len + 1);
	json_t *str;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", (unsigned char)s[i]);
	str = json_stringn(out, 2 * len);
	free(out);
	return str;
}

/* "<key>_hex" */
static int hex_key(const char *key, char *buf, size_t len)
{
	return snprintf(buf, len, "%s_hex", key) < (int)len ? 0 : -1;
}

int json_set_text(json_t *obj, const char *key, const char *s)
{
	size_t len = strlen(s);
	char hkey[128];

	if (json_text_is_utf8(s, len))
		return json_object_set_new(obj, key, json_stringn(s, len));
	if (hex_key(key, hkey, sizeof(hkey)) < 0 ||
	    json_object_set_new(obj, key, lossy_string(s, len)) < 0)
		return -1;
	return json_object_set_new(obj, hkey, hex_string(s, len));
}

int json_set_text_list(json_t *obj, const char *key, const char *const *list)
{
	json_t *texts = json_array(), *hex = json_array();
	int all_utf8 = 1;
	char hkey[128];

	if (!texts || !hex || hex_key(key, hkey, sizeof(hkey)) < 0)
		goto fail;
	for (size_t i = 0; list && list[i]; i++) {
		size_t len = strlen(list[i]);
		int ok = json_text_is_utf8(list[i], len);

		all_utf8 &= ok;
		if (json_array_append_new(texts, ok ? json_stringn(list[i], len) :
					  lossy_string(list[i], len)) < 0 ||
		    json_array_append_new(hex, hex_string(list[i], len)) < 0)
			goto fail;
	}
	if (json_object_set_new(obj, key, texts) < 0) {
		json_decref(hex);
		return -1;
	}
	if (all_utf8) {
		json_decref(hex);
		return 0;
	}
	return json_object_set_new(obj, hkey, hex);
fail:
	json_decref(texts);
	json_decref(hex);
	return -1;
}
