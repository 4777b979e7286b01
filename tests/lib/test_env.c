// SPDX-License-Identifier: MIT
/*
 * test_env.c: the verdicts of test_env.h. Failures are counted atomically because tests
 * check from several threads at once.
 */
#include "test_env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

_Atomic int test_failures;
static FILE *log_stream;
static const char *log_prefix = "";

void test_log_to(FILE *stream, const char *prefix)
{
	log_stream = stream;
	log_prefix = prefix;
}

static FILE *out(void)
{
	return log_stream ? log_stream : stderr;
}

/* One line: the prefix, @head, then the message. */
static void report(const char *head, const char *fmt, va_list ap)
{
	flockfile(out());
	fprintf(out(), "%s%s", log_prefix, head);
	vfprintf(out(), fmt, ap);
	fputc('\n', out());
	fflush(out());
	funlockfile(out());
}

bool test_expect(bool ok, const char *file, int line, const char *cond, const char *fmt, ...)
{
	char head[512];
	va_list ap;

	if (ok)
		return true;
	test_failures++;
	snprintf(head, sizeof(head), "FAIL %s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	report(head, fmt, ap);
	va_end(ap);
	return false;
}

int test_result(void)
{
	return test_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}

int test_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("FAIL: ", fmt, ap);
	va_end(ap);
	return T_EXIT_FAIL;
}

bool test_strict(void)
{
	const char *s = getenv("IOTIER_TEST_STRICT");

	return s && *s && *s != '0';
}

int test_skip(const char *why)
{
	if (test_strict()) {
		fprintf(out(), "%sFAIL (strict mode, would skip): %s\n", log_prefix, why);
		return T_EXIT_FAIL;
	}
	fprintf(out(), "%sSKIP: %s\n", log_prefix, why);
	return T_EXIT_SKIP;
}

void test_kernel_lacks(const char *feature, const char *why)
{
	const char *file = getenv("IOTIER_TEST_KERNEL_LACKS"), *name = getenv("IOTIER_TEST_NAME");
	FILE *f;

	fprintf(out(), "%sKERNEL LACKS %s: %s; judging the fallback\n", log_prefix, feature, why);
	fflush(out());
	if (!file || !*file)
		return;
	if (!name || !*name)
		name = program_invocation_short_name;
	/* one short line in append mode: lines of tests that run at once do not mix */
	f = fopen(file, "ae");
	if (!f)
		return;
	fprintf(f, "%s\t%s\t%s\n", feature, name, why);
	fclose(f);
}
