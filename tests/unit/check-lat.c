// SPDX-License-Identifier: MIT
/*
 * check-lat.c: unit tests of the BPF-free half of the latency tracer (tools/trace/lat_snapshot.c):
 * percentiles read from the log-linear buckets stay within 3.2% of the exact values over
 * six decades of latency, are monotone and end at the exact max; rows merge by class
 * without losing counts; and the --op parser names the bad token.
 */
#include <check.h>
#include <stdlib.h>

#include "check_main.h"
#include "trace/lat/lat_session.h"

static struct iolat_lat lat;
static __u64 values[20000];
static size_t nvalues;

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

static void add(__u64 ns)
{
	struct iolat_lat one = { .count = 1, .sum_ns = ns, .min_ns = ns, .max_ns = ns };

	one.slots[hist_bucket(ns)] = 1;
	lat_sum(&lat, &one);
	values[nvalues++] = ns;
}

static void setup(void)
{
	__u64 seed = 42;

	memset(&lat, 0, sizeof(lat));
	nvalues = 0;
	/* Log-uniform from 1 us to 1 s: every octave of interest gets samples. */
	for (int i = 0; i < 20000; i++) {
		double exp10;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		exp10 = 3.0 + 6.0 * (double)(seed >> 11) / (double)(1ull << 53);
		add((__u64)__builtin_exp(exp10 * 2.302585092994046));
	}
	qsort(values, nvalues, sizeof(values[0]), cmp_u64);
}

static __u64 exact(double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)nvalues);

	if ((double)rank < p / 100.0 * (double)nvalues)
		rank++;
	return values[rank ? rank - 1 : 0];
}

START_TEST(test_percentiles_within_3_percent)
{
	static const double ps[] = { 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99 };

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double want = (double)exact(ps[i]), got = (double)lat_percentile(&lat, ps[i]);

		ck_assert_msg(got >= want * 0.968 && got <= want * 1.032,
			      "p%g: got %.0f, exact %.0f", ps[i], got, want);
	}
}
END_TEST

START_TEST(test_percentiles_monotone_and_exact_ends)
{
	__u64 prev = 0;

	for (double p = 0.1; p <= 100.0; p += 0.1) {
		__u64 v = lat_percentile(&lat, p);

		ck_assert_uint_ge(v, prev);
		ck_assert_uint_ge(v, lat.min_ns);
		ck_assert_uint_le(v, lat.max_ns);
		prev = v;
	}
	ck_assert_uint_eq(lat_percentile(&lat, 100), values[nvalues - 1]);
	ck_assert_uint_eq(lat.min_ns, values[0]);
	ck_assert_uint_eq(lat.count, nvalues);
}
END_TEST

START_TEST(test_empty_and_single)
{
	struct iolat_lat none = { 0 };

	ck_assert_uint_eq(lat_percentile(&none, 50), 0);
	memset(&lat, 0, sizeof(lat));
	nvalues = 0;
	add(123456);
	ck_assert_uint_eq(lat_percentile(&lat, 50), 123456);
	ck_assert_uint_eq(lat_percentile(&lat, 99.9), 123456);
	add(999999999999ull); /* beyond the last octave: the overflow bucket */
	ck_assert_uint_eq(lat_percentile(&lat, 100), 999999999999ull);
}
END_TEST

START_TEST(test_by_class_merges_levels)
{
	struct lat_snapshot snap;
	struct lat_row *r;

	lat_snapshot_init(&snap);
	for (int level = 0; level < 8; level++) {
		r = lat_snapshot_row(&snap, 7 << 20, IOLAT_OP_READ, 2, level);
		ck_assert_ptr_nonnull(r);
		r->count = (__u64)level + 1;
		r->bytes = 4096 * ((__u64)level + 1);
		lat_sum(&r->q2c, &lat);
	}
	r = lat_snapshot_row(&snap, 7 << 20, IOLAT_OP_READ, 3, 0);
	r->count = 100;
	ck_assert_int_eq(lat_snapshot_by_class(&snap), 0);
	ck_assert_uint_eq(snap.nrows, 2);
	ck_assert_int_eq(snap.rows[0].level, -1);
	ck_assert_uint_eq(snap.rows[0].ioclass, 2);
	ck_assert_uint_eq(snap.rows[0].count, 36);
	ck_assert_uint_eq(snap.rows[0].bytes, 36 * 4096);
	ck_assert_uint_eq(snap.rows[0].q2c.count, 8 * lat.count);
	ck_assert_uint_eq(snap.rows[1].count, 100);
	lat_snapshot_free(&snap);
}
END_TEST

START_TEST(test_parse_ops)
{
	char bad[32];
	__u32 mask;

	ck_assert_int_eq(lat_parse_ops("read,write,flush", &mask, bad, sizeof(bad)), 0);
	ck_assert_uint_eq(mask, (1u << IOLAT_OP_READ) | (1u << IOLAT_OP_WRITE) |
				(1u << IOLAT_OP_FLUSH));
	ck_assert_int_eq(lat_parse_ops("read,writes", &mask, bad, sizeof(bad)), -1);
	ck_assert_str_eq(bad, "writes");
	ck_assert_int_eq(lat_parse_ops("read,,discard", &mask, bad, sizeof(bad)), -1);
	ck_assert_str_eq(bad, "");
}
END_TEST

static Suite *lat_suite(void)
{
	Suite *s = suite_create("lat");
	TCase *pct = tcase_create("percentiles"), *snap = tcase_create("snapshot");

	tcase_add_checked_fixture(pct, setup, NULL);
	tcase_add_test(pct, test_percentiles_within_3_percent);
	tcase_add_test(pct, test_percentiles_monotone_and_exact_ends);
	tcase_add_test(pct, test_empty_and_single);
	suite_add_tcase(s, pct);
	tcase_add_checked_fixture(snap, setup, NULL);
	tcase_add_test(snap, test_by_class_merges_levels);
	tcase_add_test(snap, test_parse_ops);
	suite_add_tcase(s, snap);
	return s;
}

int main(void)
{
	return check_run_suite(lat_suite());
}
