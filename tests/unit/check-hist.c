// SPDX-License-Identifier: MIT
/*
 * check-hist.c: unit tests of bpf/hist.h, the log-linear bucket scheme that every latency
 * number iotier prints goes through. They pin the properties the reports rely on: buckets
 * tile the range without gaps, each value lands in the bucket whose bounds hold it, and a
 * bucket is never wider than 1/16 of its lower bound from 1 us up, so percentiles are exact
 * to a few percent.
 */
#include <check.h>
#include <stdlib.h>

#include "hist.h"
#include "check_main.h"

START_TEST(test_buckets_tile)
{
	for (__u32 i = 0; i < HIST_NR_BUCKETS - 1; i++) {
		ck_assert_uint_lt(hist_bucket_low(i), hist_bucket_high(i));
		ck_assert_uint_eq(hist_bucket_high(i), hist_bucket_low(i + 1));
		ck_assert_uint_eq(hist_bucket(hist_bucket_low(i)), i);
		ck_assert_uint_eq(hist_bucket(hist_bucket_high(i) - 1), i);
	}
	ck_assert_uint_eq(hist_bucket_low(0), 0);
	ck_assert_uint_eq(hist_bucket_high(HIST_OVERFLOW), ~(__u64)0);
}
END_TEST

START_TEST(test_value_in_bounds)
{
	__u64 v = 1;

	/* Walk a geometric series plus jitter across the whole range and beyond. */
	for (int n = 0; n < 4000; n++) {
		__u32 i = hist_bucket(v);

		ck_assert_uint_lt(i, HIST_NR_BUCKETS);
		ck_assert_uint_le(hist_bucket_low(i), v);
		if (i != HIST_OVERFLOW)
			ck_assert_uint_lt(v, hist_bucket_high(i));
		v = v + v / 97 + 13;
	}
	ck_assert_uint_eq(hist_bucket(~(__u64)0), HIST_OVERFLOW);
}
END_TEST

START_TEST(test_resolution)
{
	/* 1 us to beyond 10 s must be resolved, with at least 8 sub-buckets per octave. */
	ck_assert_uint_ge(HIST_SUB, 8);
	ck_assert_uint_lt(hist_bucket(1000), hist_bucket(1100));
	ck_assert_uint_ne(hist_bucket(20ull * 1000 * 1000 * 1000), HIST_OVERFLOW);
	for (__u32 i = hist_bucket(1024); i < HIST_OVERFLOW; i++) {
		__u64 lo = hist_bucket_low(i), width = hist_bucket_high(i) - lo;

		ck_assert_uint_le(width * HIST_SUB, lo);
	}
}
END_TEST

static Suite *hist_suite(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tcase_create("bounds");

	tcase_add_test(tc, test_buckets_tile);
	tcase_add_test(tc, test_value_in_bounds);
	tcase_add_test(tc, test_resolution);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(hist_suite());
}
