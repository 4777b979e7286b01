// SPDX-License-Identifier: MIT
/*
 * check-lat-bars.c: unit tests of `iotier lat -H`'s bars (lat_print_bars() in
 * tools/trace/lat_report.c). Labels are plain integer ranges, biolatency's "512 -> 1023",
 * in a unit chosen per histogram; every request is on exactly one line, the one its
 * latency's power of two names (within half a fine bucket at a line's edge).
 */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "trace/lat/lat_report.h"

static struct iolat_lat lat;

static void add(__u64 ns, __u64 n)
{
	lat.slots[hist_bucket(ns)] += n;
	lat.count += n;
	lat.sum_ns += ns * n;
	if (!lat.min_ns || ns < lat.min_ns)
		lat.min_ns = ns;
	if (ns > lat.max_ns)
		lat.max_ns = ns;
}

static char *bars(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	lat_print_bars(f, &lat);
	fclose(f);
	return text;
}

/* The count on the line labelled "@lo -> @hi", or -1 when there is none. */
static long long line_count(const char *text, unsigned long long lo, unsigned long long hi)
{
	char label[64];
	const char *p;

	snprintf(label, sizeof(label), " %llu -> %llu : ", lo, hi);
	p = strstr(text, label);
	return p ? strtoll(p + strlen(label), NULL, 10) : -1;
}

static void setup(void)
{
	memset(&lat, 0, sizeof(lat));
}

START_TEST(test_usecs_integer_ranges)
{
	char *text;
	regex_t re;
	long long sum = 0;

	add(3000, 5);        /* 3 us */
	add(700 * 1000, 7);  /* 700 us: 512 -> 1023 */
	add(9000 * 1000, 2); /* 9 ms: 8192 -> 16383 */
	text = bars();
	ck_assert_msg(strstr(text, "usecs : count"), "%s", text);
	ck_assert_int_eq(line_count(text, 2, 3), 5);
	ck_assert_int_eq(line_count(text, 512, 1023), 7);
	ck_assert_int_eq(line_count(text, 8192, 16383), 2);
	/* Every line between the first and the last, each an integer range, nothing else. */
	ck_assert_int_eq(regcomp(&re, "^ +([0-9]+) -> ([0-9]+) : ([0-9]+) +\\|\\**\\s*\\|$",
				 REG_EXTENDED | REG_NEWLINE), 0);
	for (const char *line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
		regmatch_t m[4];

		ck_assert_msg(!regexec(&re, line, 4, m, 0), "not an integer range: %s", line);
		sum += strtoll(line + m[3].rm_so, NULL, 10);
	}
	ck_assert_int_eq(sum, 14);
	ck_assert_ptr_null(strstr(text, "e+"));
	ck_assert_ptr_null(strchr(text, '.'));
	regfree(&re);
	free(text);
}
END_TEST

START_TEST(test_unit_per_histogram)
{
	char *text;

	add(300, 4); /* all below a microsecond: nsecs */
	text = bars();
	ck_assert_msg(strstr(text, "nsecs : count"), "%s", text);
	ck_assert_int_eq(line_count(text, 256, 511), 4);
	free(text);

	setup();
	add(2500 * 1000, 1);               /* 2.5 ms */
	add(20ull * 1000 * 1000 * 1000, 3); /* 20 s: msecs */
	text = bars();
	ck_assert_msg(strstr(text, "msecs : count"), "%s", text);
	ck_assert_int_eq(line_count(text, 2, 3), 1);
	ck_assert_int_eq(line_count(text, 16384, 32767), 3);
	free(text);
}
END_TEST

START_TEST(test_empty_prints_nothing)
{
	char *text = bars();

	ck_assert_str_eq(text, "");
	free(text);
}
END_TEST

static Suite *bars_suite(void)
{
	Suite *s = suite_create("lat-bars");
	TCase *tc = tcase_create("bars");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_usecs_integer_ranges);
	tcase_add_test(tc, test_unit_per_histogram);
	tcase_add_test(tc, test_empty_prints_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(bars_suite());
}
