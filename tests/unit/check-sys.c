// SPDX-License-Identifier: MIT
/*
 * check-sys.c: unit tests of shim/core/sys.c's decimal writer, the one number formatter
 * of the shim (cgroup files and paths, /proc/self/fd/N, the state file): every digit
 * count from 0 to UINT64_MAX against snprintf, the NUL, and the returned length.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/sys.h"
#include "check_main.h"

static void expect_decimal(unsigned long long v)
{
	char got[SYS_DECIMAL_MAX + 8], want[32];
	size_t n;

	memset(got, 'x', sizeof(got));
	n = sys_decimal(v, got);
	snprintf(want, sizeof(want), "%llu", v);
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(n, strlen(want));
	ck_assert_uint_le(n + 1, SYS_DECIMAL_MAX);
	ck_assert_int_eq(got[n + 1], 'x'); /* nothing written past the NUL */
}

START_TEST(test_decimal_edges)
{
	expect_decimal(0);
	expect_decimal(7);
	expect_decimal(UINT64_MAX);
	expect_decimal((unsigned long long)UINT32_MAX + 1);
}
END_TEST

START_TEST(test_decimal_every_length)
{
	unsigned long long p = 1;

	for (int digits = 1; digits <= 19; digits++, p *= 10) {
		expect_decimal(p);      /* 1, 10, 100, ... */
		expect_decimal(p - 1);  /* 0, 9, 99, ... */
		expect_decimal(p * 9 + (p - 1)); /* 9, 99, 999, ... */
	}
}
END_TEST

static Suite *sys_suite(void)
{
	Suite *s = suite_create("sys");
	TCase *tc = tcase_create("decimal");

	tcase_add_test(tc, test_decimal_edges);
	tcase_add_test(tc, test_decimal_every_length);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(sys_suite());
}
