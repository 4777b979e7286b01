// SPDX-License-Identifier: MIT
/*
 * check-coverage-report.c: unit tests of the coverage part of `iotier lat`'s reports
 * (tools/trace/lat_coverage.c and lat_coverage_report.c). A report filtered by submitter
 * (--pid, --children, --cgroup) carries its device's coverage and says how many of its
 * requests may be missing at most, in text, JSON and Prometheus alike: the device's missing
 * completions plus the program runs the kernel skipped. An unfiltered one keeps its exact
 * warning; a device with nothing missing is not mentioned; snapshots merge the skipped
 * runs of every window.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "trace/lat/lat_coverage_report.h"
#include "trace/lat/lat_report.h"

#define LOOP7 (7u << 20 | 7)

static struct lat_snapshot snap;

/* loop7: diskstats counted 100 reads and 3 writes, the tracer saw 90 and 3. */
static void setup(void)
{
	lat_snapshot_init(&snap);
	snap.has_coverage = true;
	snap.ncov = 1;
	snap.cov[0] = (struct lat_coverage){ .dev = LOOP7,
		.compared = 1u << DISKSTATS_READ | 1u << DISKSTATS_WRITE | 1u << DISKSTATS_DISCARD };
	snap.cov[0].kernel[DISKSTATS_READ] = 100;
	snap.cov[0].traced[DISKSTATS_READ] = 90;
	snap.cov[0].kernel[DISKSTATS_WRITE] = 3;
	snap.cov[0].traced[DISKSTATS_WRITE] = 3;
}

static void teardown(void)
{
	lat_snapshot_free(&snap);
}

static char *text_of(bool filtered, __u64 missed)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	lat_coverage_text(f, snap.cov, snap.ncov, filtered, missed);
	fclose(f);
	return text;
}

START_TEST(test_may_be_missing)
{
	ck_assert_uint_eq(lat_coverage_may_be_missing(&snap.cov[0], false, 5), 10);
	ck_assert_uint_eq(lat_coverage_may_be_missing(&snap.cov[0], true, 5), 15);
	/* More traced than counted (a window's edge): nothing may be missing. */
	snap.cov[0].traced[DISKSTATS_READ] = 101;
	ck_assert_uint_eq(lat_coverage_may_be_missing(&snap.cov[0], true, 0), 0);
}
END_TEST

START_TEST(test_text_filtered_says_up_to)
{
	char *t = text_of(true, 2);

	ck_assert_ptr_nonnull(strstr(t, "warning: loop7: traced 93 of the 103 requests diskstats "
				     "counted as completed (90.291%), 10 missing; "));
	ck_assert_ptr_nonnull(strstr(t, "up to 12 of these may be missing\n"));
	free(t);
	/* Unfiltered: the rows are the count, and the line stays as it was. */
	t = text_of(false, 2);
	ck_assert_ptr_nonnull(strstr(t, "10 missing\n"));
	ck_assert_ptr_null(strstr(t, "up to"));
	free(t);
}
END_TEST

START_TEST(test_text_quiet_device)
{
	char *t;

	snap.cov[0].traced[DISKSTATS_READ] = 100;
	t = text_of(true, 0);
	ck_assert_str_eq(t, "");
	free(t);
	/* Nothing missing on the device, but a start skipped: still said. */
	t = text_of(true, 1);
	ck_assert_str_eq(t, "warning: loop7: the kernel skipped 1 runs of the tracer's programs; "
			 "this report counts only the requests --pid, --children or --cgroup "
			 "select: up to 1 of these may be missing\n");
	free(t);
}
END_TEST

START_TEST(test_json_fields)
{
	json_t *a = lat_coverage_json(true, snap.cov, snap.ncov, true, 3), *d;

	ck_assert_ptr_nonnull(a);
	d = json_array_get(a, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "missing")), 10);
	ck_assert(json_is_true(json_object_get(d, "filtered")));
	ck_assert_int_eq(json_integer_value(json_object_get(d, "may_be_missing")), 13);
	json_decref(a);
	a = lat_coverage_json(true, snap.cov, snap.ncov, false, 3);
	d = json_array_get(a, 0);
	ck_assert(json_is_false(json_object_get(d, "filtered")));
	ck_assert_int_eq(json_integer_value(json_object_get(d, "may_be_missing")), 10);
	json_decref(a);
}
END_TEST

START_TEST(test_prom_gauge_and_merge)
{
	struct lat_snapshot total, second = snap;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	lat_snapshot_init(&total);
	snap.coverage_filtered = true;
	snap.missed_runs = 2;
	second.rows = NULL;
	second.coverage_filtered = true;
	second.missed_runs = 1;
	ck_assert_int_eq(lat_snapshot_merge(&total, &snap), 0);
	ck_assert_int_eq(lat_snapshot_merge(&total, &second), 0);
	ck_assert_uint_eq(total.missed_runs, 3);
	f = open_memstream(&text, &len);
	lat_coverage_prom(f, &total);
	fclose(f);
	/* 20 missing over both windows, and 3 skipped runs */
	ck_assert_ptr_nonnull(strstr(text, "# TYPE iotier_trace_may_be_missing_requests gauge\n"
				     "iotier_trace_may_be_missing_requests{device=\"loop7\"} 23\n"));
	ck_assert_ptr_nonnull(strstr(text, "iotier_trace_missing_requests{device=\"loop7\"} 20\n"));
	free(text);
	lat_snapshot_free(&total);
}
END_TEST

static Suite *coverage_suite(void)
{
	Suite *s = suite_create("coverage-report");
	TCase *tc = tcase_create("reports");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_may_be_missing);
	tcase_add_test(tc, test_text_filtered_says_up_to);
	tcase_add_test(tc, test_text_quiet_device);
	tcase_add_test(tc, test_json_fields);
	tcase_add_test(tc, test_prom_gauge_and_merge);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(coverage_suite());
}
