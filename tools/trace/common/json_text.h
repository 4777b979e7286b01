/* SPDX-License-Identifier: MIT */
/*
 * json_text.h: the one place where text from outside (thread and process names, command
 * lines, device names, rules) becomes a JSON string. JSON text must be valid UTF-8, and a
 * thread name need not be: it is 15 bytes cut anywhere, or any bytes a program chose.
 * Valid UTF-8 goes out as is. Otherwise the string is written with U+FFFD in place of each
 * byte that is not part of a valid sequence, and a second field "<key>_hex" carries the raw
 * bytes in lowercase hex, so a consumer can recover exactly what the kernel had.
 * (jansson itself refuses such strings: json_string() returns NULL, which, unchecked, drops
 * or corrupts whatever it was to be part of.)
 */
#ifndef IOTIER_JSON_TEXT_H
#define IOTIER_JSON_TEXT_H

#include <jansson.h>

/* Set @key of @obj to text @s (see above). Returns 0, or -1 when out of memory. */
int json_set_text(json_t *obj, const char *key, const char *s);

/*
 * Set @key of @obj to an array of the texts in @list (NULL-terminated). When any of them
 * is not valid UTF-8, "<key>_hex" is an array of every element's bytes in hex, index for
 * index. Returns 0, or -1 when out of memory.
 */
int json_set_text_list(json_t *obj, const char *key, const char *const *list);

/* Is @s, of @len bytes, valid UTF-8 (no overlong forms, surrogates or code points above
 * U+10FFFF)? */
int json_text_is_utf8(const char *s, size_t len);

#endif
