// SPDX-License-Identifier: MIT
/*
 * check-testlib.c: unit tests of tests/lib, the helpers every integration test judges and
 * cleans up with. A helper that silently passed a failed check, or left a scratch
 * directory behind, would make every test built on it unable to fail or unsafe to rerun.
 * The sysctl guard is exercised by the writeback tests that use it (check-buffered,
 * paths-steer); it changes machine-wide settings, which a unit test must not.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "run_capture.h"
#include "small_file.h"
#include "test_env.h"
#include "check_main.h"

START_TEST(test_expect_counts_and_reports)
{
	char text[512] = "";
	FILE *log = tmpfile();
	int line;

	ck_assert_ptr_nonnull(log);
	test_log_to(log, "PFX ");
	ck_assert(EXPECT(1 + 1 == 2, "holds"));
	ck_assert_int_eq(test_failures, 0);
	ck_assert_int_eq(test_result(), T_EXIT_PASS);
	line = __LINE__ + 1;
	ck_assert(!EXPECT(1 + 1 == 3, "sum %d", 1 + 1));
	ck_assert_int_eq(test_failures, 1);
	ck_assert_int_eq(test_result(), T_EXIT_FAIL);
	ck_assert_int_eq(test_fail("then %s", "stop"), T_EXIT_FAIL);
	rewind(log);
	ck_assert_uint_gt(fread(text, 1, sizeof(text) - 1, log), 0);
	{
		char want[128];

		snprintf(want, sizeof(want), "PFX FAIL %s:%d: 1 + 1 == 3: sum 2\n", __FILE__, line);
		ck_assert_ptr_nonnull(strstr(text, want));
	}
	ck_assert_ptr_nonnull(strstr(text, "PFX FAIL: then stop\n"));
	fclose(log);
}
END_TEST

START_TEST(test_skip_is_a_failure_when_strict)
{
	test_log_to(stderr, "");
	unsetenv("IOTIER_TEST_STRICT");
	ck_assert_int_eq(test_skip("no rig"), T_EXIT_SKIP);
	setenv("IOTIER_TEST_STRICT", "0", 1);
	ck_assert_int_eq(test_skip("no rig"), T_EXIT_SKIP);
	setenv("IOTIER_TEST_STRICT", "1", 1);
	ck_assert_int_eq(test_skip("no rig"), T_EXIT_FAIL);
}
END_TEST

/* A kernel that lacks a feature is said and recorded, and is no failure even when strict. */
START_TEST(test_kernel_lacks_records)
{
	char path[] = "/tmp/check-testlib-lacks.XXXXXX", text[512] = "", said[512] = "";
	FILE *log = tmpfile();
	int fd = mkstemp(path);

	ck_assert(fd >= 0 && log);
	test_log_to(log, "");
	setenv("IOTIER_TEST_STRICT", "1", 1);
	setenv("IOTIER_TEST_KERNEL_LACKS", path, 1);
	setenv("IOTIER_TEST_NAME", "some-test", 1);
	test_kernel_lacks("bfq", "no weight file");
	unsetenv("IOTIER_TEST_NAME");
	test_kernel_lacks("block debugfs", "no tags");
	unsetenv("IOTIER_TEST_KERNEL_LACKS");
	test_kernel_lacks("bfq", "not recorded");
	ck_assert_int_eq(test_failures, 0);
	ck_assert_int_gt(read(fd, text, sizeof(text) - 1), 0);
	ck_assert_str_eq(text, "bfq\tsome-test\tno weight file\n"
			 "block debugfs\tcheck-testlib\tno tags\n");
	rewind(log);
	ck_assert_uint_gt(fread(said, 1, sizeof(said) - 1, log), 0);
	ck_assert_ptr_nonnull(strstr(said, "KERNEL LACKS bfq: no weight file; judging the "
				     "fallback\n"));
	test_log_to(stderr, "");
	fclose(log);
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(test_small_file_round_trip)
{
	char path[] = "/tmp/iotier-check-testlib.XXXXXX", buf[8];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(write_file(path, "37\n\n"), 0);
	ck_assert_int_eq(read_small(path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "37"); /* trailing newlines dropped */
	ck_assert_int_eq(write_file(path, "a\nb\n"), 0);
	ck_assert_int_eq(read_small(path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "a\nb"); /* inner ones kept */
	ck_assert_int_eq(write_file(path, "0123456789"), 0);
	ck_assert_int_eq(read_small(path, buf, 4), 0);
	ck_assert_str_eq(buf, "012"); /* cut to fit, still a string */
	unlink(path);
	ck_assert_int_eq(read_small(path, buf, sizeof(buf)), -ENOENT);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(write_file(path, "x"), -ENOENT);
}
END_TEST

static int refuse(void)
{
	return 1;
}

START_TEST(test_run_capture)
{
	const char *both[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	const char *flood[] = { "sh", "-c", "yes | head -c 1000000", NULL };
	const char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
	const char *missing[] = { "/nonexistent/iotier-none", NULL };
	char out[16];

	ck_assert_int_eq(run_capture(both, out, sizeof(out), NULL), 3);
	ck_assert_ptr_nonnull(strstr(out, "out\n"));
	ck_assert_ptr_nonnull(strstr(out, "err\n"));
	/* A child that prints more than fits is read to its end, not left blocked. */
	ck_assert_int_eq(run_capture(flood, out, sizeof(out), NULL), 0);
	ck_assert_uint_eq(strlen(out), sizeof(out) - 1);
	ck_assert_int_eq(run_capture(killed, out, sizeof(out), NULL), -1);
	ck_assert_int_eq(run_capture(missing, out, sizeof(out), NULL), 127);
	ck_assert_int_eq(run_capture(both, out, sizeof(out), refuse), 126);
	ck_assert_int_eq(run_capture(both, NULL, 0, NULL), 3);
}
END_TEST

/* Cleanups record their order in this string. */
static char ran[16];

static void mark(void *arg)
{
	strncat(ran, arg, sizeof(ran) - strlen(ran) - 1);
}

START_TEST(test_cleanups_last_first_once)
{
	pid_t child;
	int status;

	ck_assert_int_eq(test_cleanup_add(mark, "a"), 0);
	ck_assert_int_eq(test_cleanup_add(mark, "b"), 0);
	ck_assert_int_eq(test_cleanup_add(mark, "c"), 0);
	test_cleanup_remove(mark, "b");
	/* A forked child leaves the parent's cleanups alone. */
	child = fork();
	if (child == 0) {
		test_cleanup_run();
		_exit(ran[0] ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	test_cleanup_run();
	ck_assert_str_eq(ran, "ca");
	test_cleanup_run();
	ck_assert_str_eq(ran, "ca");
}
END_TEST

static void touch(void *path)
{
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

START_TEST(test_cleanups_run_on_sigterm)
{
	char path[] = "/tmp/iotier-check-testlib.XXXXXX";
	int status, fd = mkstemp(path);
	pid_t child;

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	child = fork();
	if (child == 0) {
		/* Check's own SIGTERM handler (it kills the test's group) would be left alone. */
		signal(SIGTERM, SIG_DFL);
		test_cleanup_add(touch, path);
		raise(SIGTERM);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	/* The cleanup ran, and the signal still ended the process as it would have. */
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	ck_assert_int_eq(access(path, F_OK), 0);
	unlink(path);
}
END_TEST

START_TEST(test_guardian_acts_after_sigkill)
{
	char dir[] = "/tmp/iotier-check-testlib.XXXXXX", file[64];
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };
	int p[2], status;
	pid_t child;

	ck_assert_int_eq(pipe(p), 0);
	child = fork();
	if (child == 0) {
		if (test_tmpdir(dir) < 0)
			_exit(1);
		snprintf(file, sizeof(file), "%s/inside", dir);
		touch(file);
		if (write(p[1], dir, sizeof(dir)) != sizeof(dir))
			_exit(1);
		raise(SIGKILL);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], dir, sizeof(dir)), sizeof(dir));
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* The guardian is not our child: wait for its work, generously (a busy machine). */
	for (int i = 0; i < 3000 && access(dir, F_OK) == 0; i++)
		nanosleep(&ms10, NULL);
	ck_assert_msg(access(dir, F_OK) < 0, "%s left behind", dir);
}
END_TEST

static Suite *testlib_suite(void)
{
	Suite *s = suite_create("testlib");
	TCase *verdicts = tcase_create("verdicts"), *io = tcase_create("io");
	TCase *cleanup = tcase_create("cleanup");

	tcase_add_test(verdicts, test_expect_counts_and_reports);
	tcase_add_test(verdicts, test_skip_is_a_failure_when_strict);
	tcase_add_test(verdicts, test_kernel_lacks_records);
	tcase_add_test(io, test_small_file_round_trip);
	tcase_add_test(io, test_run_capture);
	tcase_add_test(cleanup, test_cleanups_last_first_once);
	tcase_add_test(cleanup, test_cleanups_run_on_sigterm);
	tcase_add_test(cleanup, test_guardian_acts_after_sigkill);
	tcase_set_timeout(cleanup, 60);
	suite_add_tcase(s, verdicts);
	suite_add_tcase(s, io);
	suite_add_tcase(s, cleanup);
	return s;
}

int main(void)
{
	return check_run_suite(testlib_suite());
}
