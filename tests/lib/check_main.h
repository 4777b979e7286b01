/* SPDX-License-Identifier: MIT */
/*
 * check_main.h: the end of every Check unit test's main(): run the suite, free it, turn
 * the failure count into the exit status meson reads; for a suite of one case, build it too.
 */
#ifndef IOTIER_CHECK_MAIN_H
#define IOTIER_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int check_run_suite(Suite *s)
{
	SRunner *runner = srunner_create(s);
	int failed;

	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * A suite @suite of one case @tcase with @tests (NULL-terminated), run as above:
 *   return check_run_case("state-file", "starttime", (const TTest *const[]){ test_a, NULL });
 */
static inline int check_run_case(const char *suite, const char *tcase,
				 const TTest *const *tests)
{
	Suite *s = suite_create(suite);
	TCase *tc = tcase_create(tcase);

	for (; *tests; tests++)
		tcase_add_test(tc, *tests);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}

#endif
