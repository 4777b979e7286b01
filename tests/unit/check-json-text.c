// SPDX-License-Identifier: MIT
/*
 * check-json-text.c: unit tests of tools/trace/json_text.c, where every report turns text
 * from outside into JSON: valid UTF-8 passes untouched, anything else becomes valid UTF-8
 * with U+FFFD per bad byte and a <key>_hex twin holding the exact bytes.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "trace/common/json_text.h"

static const char *get(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

START_TEST(test_valid_utf8)
{
	static const char *const good[] = {
		"", "bg-writer", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xef\xbf\xbd", "\xf4\x8f\xbf\xbf",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(json_text_is_utf8(good[i], strlen(good[i])), "good %zu", i);
}
END_TEST

START_TEST(test_invalid_utf8)
{
	static const char *const bad[] = {
		"\xc3",             /* cut after the lead byte */
		"\xe2\x82",         /* cut mid-sequence */
		"\xc0\xaf",         /* overlong '/' */
		"\xe0\x80\xaf",     /* overlong, 3 bytes */
		"\xed\xa0\x80",     /* a UTF-16 surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"\xff", "\x80",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!json_text_is_utf8(bad[i], strlen(bad[i])), "bad %zu", i);
}
END_TEST

START_TEST(test_set_text)
{
	json_t *o = json_object();
	char *dump;

	ck_assert_int_eq(json_set_text(o, "ok", "fg-reader"), 0);
	ck_assert_int_eq(json_set_text(o, "name", "a\xe2\x82" "b\xff"), 0);
	ck_assert_str_eq(get(o, "ok"), "fg-reader");
	ck_assert_ptr_null(json_object_get(o, "ok_hex"));
	/* Each byte of a broken sequence is its own U+FFFD, as the hex keeps them apart. */
	ck_assert_str_eq(get(o, "name"), "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd");
	ck_assert_str_eq(get(o, "name_hex"), "61e28262ff");
	dump = json_dumps(o, JSON_COMPACT);
	ck_assert_ptr_nonnull(dump);
	free(dump);
	json_decref(o);
}
END_TEST

START_TEST(test_set_text_list)
{
	const char *good[] = { "db_bench", "--threads=4", NULL };
	const char *mixed[] = { "db", "\xfe", NULL };
	json_t *o = json_object();

	ck_assert_int_eq(json_set_text_list(o, "good", good), 0);
	ck_assert_int_eq(json_set_text_list(o, "mixed", mixed), 0);
	ck_assert_int_eq(json_set_text_list(o, "none", NULL), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "good")), 2);
	ck_assert_ptr_null(json_object_get(o, "good_hex"));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "mixed"), 1)),
			 "\xef\xbf\xbd");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "mixed_hex"), 0)),
			 "6462");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "mixed_hex"), 1)),
			 "fe");
	ck_assert_uint_eq(json_array_size(json_object_get(o, "none")), 0);
	json_decref(o);
}
END_TEST

static Suite *json_text_suite(void)
{
	Suite *s = suite_create("json_text");
	TCase *tc = tcase_create("utf8");

	tcase_add_test(tc, test_valid_utf8);
	tcase_add_test(tc, test_invalid_utf8);
	tcase_add_test(tc, test_set_text);
	tcase_add_test(tc, test_set_text_list);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(json_text_suite());
}
