// SPDX-License-Identifier: MIT
/*
 * check-config-file.c: unit tests for the IOTIER_CONFIG file: only a regular text file is
 * read, and without blocking (a FIFO, a terminal or a pipe on /dev/stdin is refused at
 * once); a value as long as the environment would take it; a comment after a value; and a
 * NUL byte, which would hide the rest of the file, refused.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "check_main.h"

static struct config cfg; /* large: rule globs are inline */
static char err[RULE_ERROR_MAX + 64];
static char text[CONFIG_FILE_MAX];
static char dir[] = "/tmp/iotier-config-file.XXXXXX";
static char path[sizeof(dir) + 32];

static const char *no_env(const char *key, void *ctx)
{
	(void)key;
	(void)ctx;
	return NULL;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	err[0] = '\0';
	alarm(20); /* a read that blocks fails the test instead of hanging it */
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
	memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

static void write_bytes(const char *bytes, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
	close(fd);
}

START_TEST(test_fifo_refused_without_blocking)
{
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(config_file_read(path, text, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "not a regular file");
}
END_TEST

START_TEST(test_stdin_pipe_refused)
{
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(dup2(fds[0], 0), 0);
	ck_assert_int_eq(config_file_read("/dev/stdin", text, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "not a regular file");
	ck_assert_int_eq(config_file_read("/dev/null", text, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_nul_byte_refused)
{
	static const char bytes[] = "IOTIER_LOW=bg-*\n\0IOTIER_LOG=debug\n";

	write_bytes(bytes, sizeof(bytes) - 1);
	ck_assert_int_eq(config_file_read(path, text, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "a NUL byte at offset 16: not a text file");
}
END_TEST

START_TEST(test_regular_file_read)
{
	write_bytes("IOTIER_LOW=bg-*\n", 16);
	ck_assert_int_eq(config_file_read(path, text, err, sizeof(err)), 0);
	ck_assert_str_eq(text, "IOTIER_LOW=bg-*\n");
}
END_TEST

/* 100 rules of 20 bytes: about 2 KB, which --low takes and the file refused over 1,279. */
START_TEST(test_long_value)
{
	size_t n = (size_t)sprintf(text, "IOTIER_LOW=");

	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(text + n, "%sthread:worker-%05d", i ? ", " : "", i);
	strcpy(text + n, "\n");
	ck_assert_int_eq(config_load(&cfg, no_env, NULL, text, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.rules.low.count, 100);
	ck_assert_str_eq(cfg.rules.low.rules[99].glob, "worker-00099");
}
END_TEST

START_TEST(test_comment_after_value)
{
	ck_assert_int_eq(config_load(&cfg, no_env, NULL,
				     "IOTIER_LOW=comm:mydb # the db\nIOTIER_HIGH=db#1\t# one\n"
				     "IOTIER_LOW_CLASS=be:7#\n",
				     err, sizeof(err)), -1);
	/* "be:7#": no blank before '#', so it is part of the value, and a bad class */
	ck_assert_str_eq(err, "IOTIER_CONFIG line 3: IOTIER_LOW_CLASS: bad low class 'be:7#': "
			 "expected idle or be:0 to be:7");
	ck_assert_int_eq(config_load(&cfg, no_env, NULL,
				     "IOTIER_LOW=comm:mydb # the db\nIOTIER_HIGH=db#1\t# one\n",
				     err, sizeof(err)), 0);
	ck_assert_str_eq(cfg.rules.low.rules[0].glob, "mydb");
	ck_assert_str_eq(cfg.rules.high.rules[0].glob, "db#1");
}
END_TEST

static Suite *config_file_suite(void)
{
	Suite *s = suite_create("config-file");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fifo_refused_without_blocking);
	tcase_add_test(tc, test_stdin_pipe_refused);
	tcase_add_test(tc, test_nul_byte_refused);
	tcase_add_test(tc, test_regular_file_read);
	tcase_add_test(tc, test_long_value);
	tcase_add_test(tc, test_comment_after_value);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(config_file_suite());
}
