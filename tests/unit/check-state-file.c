// SPDX-License-Identifier: MIT
/*
 * check-state-file.c: unit tests of shim/state_file.h's reading of /proc/PID/stat, which
 * both the shim (writing its start time) and the exporter (telling a live process from a
 * reused pid) rely on. A command name may hold spaces and parentheses; the start time must
 * still come from field 22, and text that is cut short must give 0, never a wrong number.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state_file.h"
#include "check_main.h"

static unsigned long long parse(const char *text)
{
	return state_file_starttime(text, strlen(text));
}

START_TEST(test_plain)
{
	ck_assert_uint_eq(parse("1234 (postgres) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 "
				"20 0 1 0 987654 12345678 500 18446744073709551615"), 987654);
}
END_TEST

START_TEST(test_name_with_parens_and_spaces)
{
	/* prctl(PR_SET_NAME) allows anything: ") S 1 2" inside the name must not count. */
	ck_assert_uint_eq(parse("77 (a) S 1 2 3 (x) y) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
				"4242 0 0"), 4242);
}
END_TEST

START_TEST(test_cut_short)
{
	ck_assert_uint_eq(parse("77 (sh) S 1 77 77 0 -1 0 0 0 0"), 0);
	ck_assert_uint_eq(parse(""), 0);
	ck_assert_uint_eq(parse("no parenthesis at all"), 0);
}
END_TEST

START_TEST(test_own_process)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_gt(state_file_starttime(buf, (unsigned long)n), 0);
}
END_TEST

int main(void)
{
	return check_run_case("state-file", "starttime", (const TTest *const[]){
		test_plain, test_name_with_parens_and_spaces, test_cut_short, test_own_process,
		NULL });
}
