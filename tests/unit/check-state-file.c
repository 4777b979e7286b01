// SPDX-License-Identifier: MIT
/*
 * check-state-file.c: unit tests of shim/include/state_file_format.h's reading of /proc/PID/stat, which
 * both the shim (writing its start time) and the exporter (telling a live process from a
 * reused pid) rely on. A command name may hold spaces and parentheses; the start time must
 * still come from field 22, and text that is cut short must give 0, never a wrong number.
 * Then the judgement of a file left behind: stale when its pid is gone or started at
 * another time than the file records, never when it matches, and only ignored when the
 * file or /proc says too little to tell.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state_file_format.h"
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

static unsigned long long recorded(const char *text)
{
	return state_file_recorded_start(text, strlen(text));
}

START_TEST(test_recorded_start)
{
	ck_assert_uint_eq(recorded(STATE_FILE_MAGIC "\npid 77\nstarttime 4242\nprocess_tier low\n"),
			  4242);
	/* Cut inside the number, no line at all, a line that only starts alike: 0. */
	ck_assert_uint_eq(recorded(STATE_FILE_MAGIC "\npid 77\nstarttime 42"), 0);
	ck_assert_uint_eq(recorded(STATE_FILE_MAGIC "\npid 77\nprocess_tier low\n"), 0);
	ck_assert_uint_eq(recorded(STATE_FILE_MAGIC "\npid 77\nstarttimes 9\n"), 0);
	ck_assert_uint_eq(recorded(""), 0);
}
END_TEST

START_TEST(test_judge)
{
	/* The pid is gone: stale, whatever the file says. */
	ck_assert_int_eq(state_file_judge(1, 0, 4242), STATE_FILE_STALE);
	ck_assert_int_eq(state_file_judge(1, 0, 0), STATE_FILE_STALE);
	/* The pid runs: its own file, or one of an earlier holder of the pid. */
	ck_assert_int_eq(state_file_judge(0, 4242, 4242), STATE_FILE_LIVE);
	ck_assert_int_eq(state_file_judge(0, 4243, 4242), STATE_FILE_STALE);
	ck_assert_int_eq(state_file_judge(0, 4241, 4242), STATE_FILE_STALE);
	/* Too little to tell: never removed. */
	ck_assert_int_eq(state_file_judge(0, 4242, 0), STATE_FILE_UNSURE);
	ck_assert_int_eq(state_file_judge(0, 0, 4242), STATE_FILE_UNSURE);
}
END_TEST

/* The file a live process writes, read back as the exporter reads it: live, not stale. */
START_TEST(test_own_file_is_live)
{
	char stat[1024], text[256];
	int fd = open("/proc/self/stat", O_RDONLY);
	unsigned long long start;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, stat, sizeof(stat));
	close(fd);
	ck_assert_int_gt(n, 0);
	start = state_file_starttime(stat, (unsigned long)n);
	snprintf(text, sizeof(text), STATE_FILE_MAGIC "\npid %d\nstarttime %llu\n", (int)getpid(),
		 start);
	ck_assert_int_eq(state_file_judge(0, start, recorded(text)), STATE_FILE_LIVE);
}
END_TEST

int main(void)
{
	return check_run_case("state-file", "starttime", (const TTest *const[]){
		test_plain, test_name_with_parens_and_spaces, test_cut_short, test_own_process,
		test_recorded_start, test_judge, test_own_file_is_live, NULL });
}
