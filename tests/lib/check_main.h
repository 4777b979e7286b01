/* SPDX-License-Identifier: MIT */
/*
 * check_main.h: the end of every Check unit test's main(): run the suite, free it, turn
 * the failure count into the exit status meson reads.
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

#endif
